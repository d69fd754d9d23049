#!/usr/bin/env node
// sdk-ask: asking, queueing, steering and forking (DESIGN.md §22) through a
// client built with the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0), which advertises elicitation (form) and answers elicitation/create:
//
//   - the model's ask_user question arrives as elicitation/create, scoped to
//     its session and tool call, and the client's answer reaches the model's
//     next call (the script model's expect);
//   - a prompt sent while a turn runs is queued and answered after it, each
//     with its own answer; one sent with _meta.coda.steer reaches the running
//     turn's next model call and is answered when that turn ends;
//   - session/fork gives a session whose next turn carries the source's
//     history, while the source's file is unchanged;
//   - server-everything's trigger-elicitation-request (the reference MCP
//     server, from node_modules) asks through coda: the client answers the
//     forwarded elicitation/create and the tool's result, with the answer,
//     reaches the model's next call.
//
//   node sdk-ask.mjs [CODA_BIN]      (or CODA_BIN=... node sdk-ask.mjs)
//
// Needs `npm ci` run in scripts/interop first (run.sh does it). Prints one "ok"
// line per check; on the first failed check prints "FAIL: why" with coda's
// stderr and exits 1.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

const here = path.dirname(fileURLToPath(import.meta.url));
const codaBin = process.argv[2] || process.env.CODA_BIN;
if (!codaBin) {
  console.error("usage: node sdk-ask.mjs CODA_BIN (or set CODA_BIN)");
  process.exit(2);
}
const script = path.join(here, "sdk-ask-turns.toml");
const server = path.join(here, "node_modules", ".bin", "mcp-server-everything");
if (!fs.existsSync(server)) {
  console.error(`sdk-ask: ${server} is not installed: run npm ci in ${here} first`);
  process.exit(2);
}
const overallTimeoutMs = 60_000;

class CheckFailed extends Error {}

function check(cond, what, detail) {
  if (!cond) {
    throw new CheckFailed(detail === undefined ? what : `${what}\n  got: ${JSON.stringify(detail)}`);
  }
  console.log(`ok - ${what}`);
}

const codaMeta = (x) => x?._meta?.coda;

// The client's side: every session/update, every elicitation/create and
// permission request, in the order they came.
const updates = [];
const elicitations = [];
const permissions = [];
let onUpdate = null; // called with each update as it comes

// elicitationAnswer answers an elicitation/create: the ask_user question
// (an "answer" field) with "staging", server-everything's form with a name.
function elicitationAnswer(params) {
  const props = params.requestedSchema?.properties ?? {};
  if (props.answer) return { action: "accept", content: { answer: "staging" } };
  if (props.name) return { action: "accept", content: { name: "Ada Lovelace", check: true } };
  return { action: "decline" };
}

// sessionFiles reads every file under the state directory whose path names
// the session: its file and whatever else coda keeps under its id.
function sessionFiles(dir, sessionId) {
  const out = {};
  for (const rel of fs.readdirSync(dir, { recursive: true })) {
    const p = path.join(dir, rel);
    if (rel.includes(sessionId) && fs.statSync(p).isFile()) out[rel] = fs.readFileSync(p, "utf8");
  }
  return out;
}

async function main(ctx, stateDir, cwd) {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { elicitation: { form: {} } },
    clientInfo: { name: "coda-interop-sdk-ask", version: "0.0.0" },
  });
  const caps = init.agentCapabilities;
  check(codaMeta(caps)?.promptQueueing === true && codaMeta(caps)?.steering === true, "initialize: _meta.coda advertises promptQueueing and steering", caps);
  check(caps?.sessionCapabilities?.fork !== undefined, "initialize: sessionCapabilities.fork", caps);

  const created = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const sid = created.sessionId;

  // Prompt 1: ask_user through elicitation/create.
  const r1 = await ctx.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "Is the deploy healthy?" }] });
  check(elicitations.length === 1, "prompt 1: the model's ask_user arrived as one elicitation/create", elicitations);
  const asked = elicitations[0];
  check(asked.sessionId === sid && asked.mode === "form" && asked.message === "Which environment should I check?", "prompt 1: the elicitation is a form in the session, with the model's question", asked);
  check(JSON.stringify(asked.requestedSchema?.properties?.answer?.enum) === '["staging","prod"]', "prompt 1: the model's choices are the answer field's enum", asked.requestedSchema);
  const askCall = updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === asked.toolCallId);
  check(askCall?.title?.startsWith("Ask:"), "prompt 1: the elicitation names the ask_user tool call", { asked, askCall });
  check(r1.stopReason === "end_turn" && codaMeta(r1)?.finalOutput?.content === "Checked staging.", "prompt 1: answered after the answer reached the model (the script expects it)", r1);

  // Prompt 2 runs; prompt 3 is queued behind it; prompt 4 steers it.
  fs.writeFileSync(path.join(cwd, "notes.txt"), "the notes\n");
  const order = [];
  const started = new Promise((resolve) => {
    onUpdate = (u) => {
      if (u.sessionUpdate === "agent_thought_chunk") resolve();
    };
  });
  const send = (name, params) => {
    const p = ctx.request(acp.methods.agent.session.prompt, params);
    p.then(() => order.push(name), () => order.push(`${name} failed`));
    return p;
  };
  const first = send("first", { sessionId: sid, prompt: [{ type: "text", text: "First." }] });
  await started;
  onUpdate = null;
  const second = send("second", { sessionId: sid, prompt: [{ type: "text", text: "Second." }] });
  const steer = send("steer", { sessionId: sid, prompt: [{ type: "text", text: "Mind the tests." }], _meta: { coda: { steer: true } } });
  const [r2, r3, r4] = await Promise.all([first, second, steer]);
  check(codaMeta(r2)?.finalOutput?.content === "First done.", "prompt 2: the running turn answered with its own answer, after the steering prompt reached its next call", r2);
  check(codaMeta(r3)?.finalOutput?.content === "Second done.", "prompt 3 (sent mid-turn): queued, answered with its own answer", r3);
  check(order.indexOf("first") < order.indexOf("second"), "prompt 3: answered after prompt 2", order);
  check(order.indexOf("steer") < order.indexOf("second") && codaMeta(r4)?.status === "steered", `prompt 4 (steering): answered "steered" when the running turn ended (${r4?.stopReason})`, { order, r4 });

  // session/fork (unstable schema; the SDK 2.4.0 types name it, its runtime
  // method table does not, so it is spelled out): the fork's next turn carries the source's history; the
  // source's file is not touched.
  const before = sessionFiles(stateDir, sid);
  check(Object.keys(before).length > 0, "the source session has a file under the state directory", fs.readdirSync(stateDir, { recursive: true }));
  const forked = await ctx.request("session/fork", { sessionId: sid, cwd, mcpServers: [] });
  check(typeof forked.sessionId === "string" && forked.sessionId !== sid, "session/fork: a new session", forked);
  const r5 = await ctx.request(acp.methods.agent.session.prompt, { sessionId: forked.sessionId, prompt: [{ type: "text", text: "What did I ask first?" }] });
  check(codaMeta(r5)?.finalOutput?.content === "You asked about the deploy.", "fork: its turn's request carried the source's first prompt (the script expects it)", r5);
  check(JSON.stringify(sessionFiles(stateDir, sid)) === JSON.stringify(before), "fork: the source's file is unchanged", Object.keys(before));
  check(Object.keys(sessionFiles(stateDir, forked.sessionId)).length > 0, "fork: the fork has its own file", forked.sessionId);

  // server-everything's trigger-elicitation-request, forwarded to the client.
  const mcp = await ctx.request(acp.methods.agent.session.new, {
    cwd,
    mcpServers: [{ name: "everything", command: server, args: ["stdio"], env: [] }],
  });
  elicitations.length = 0;
  const r6 = await ctx.request(acp.methods.agent.session.prompt, { sessionId: mcp.sessionId, prompt: [{ type: "text", text: "Ask me for my details." }] });
  check(elicitations.length === 1, "MCP: server-everything's elicitation reached the client as one elicitation/create", elicitations);
  const fwd = elicitations[0];
  check(fwd.sessionId === mcp.sessionId && fwd.mode === "form" && fwd.message === "MCP server everything asks: Please provide inputs for the following fields:" && fwd.requestedSchema?.properties?.name, "MCP: the forwarded elicitation is the server's form, in its session, naming the server", fwd);
  check(codaMeta(r6)?.finalOutput?.content === "Thanks, Ada.", "MCP: the tool's result with the client's answer reached the model's next call (the script expects it)", r6);
  const done = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed" && JSON.stringify(u.content ?? []).includes("Name: Ada Lovelace"));
  check(done !== undefined, "MCP: the tool call completed with the answer", updates.filter((u) => u.sessionUpdate?.startsWith("tool_call")));
}

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "coda-interop-ask-"));
const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "coda-interop-ask-cwd-")));
const child = spawn(codaBin, ["--model", `script:${script}`, "--state-dir", stateDir], { cwd, stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
child.stderr.setEncoding("utf8");
child.stderr.on("data", (d) => {
  stderr += d;
});
const exited = new Promise((resolve) => {
  child.on("exit", (code, signal) => resolve({ code, signal }));
  child.on("error", (err) => resolve({ error: err }));
});

function finish(code, message) {
  if (message) {
    console.log(`FAIL: ${message}`);
    if (stderr.trim()) console.log(`coda stderr:\n${stderr.trimEnd()}`);
  }
  child.kill();
  fs.rmSync(stateDir, { recursive: true, force: true });
  fs.rmSync(cwd, { recursive: true, force: true });
  process.exit(code);
}

const overall = setTimeout(() => finish(1, `the check did not finish within ${overallTimeoutMs} ms`), overallTimeoutMs);
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const app = acp
  .client({ name: "coda-interop-sdk-ask" })
  .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
    elicitations.push(params);
    return elicitationAnswer(params);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissions.push(params);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest("*", ({ method }) => {
    throw acp.RequestError.methodNotFound(method);
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
    onUpdate?.(params.update);
  });

try {
  await Promise.race([
    app.connectWith(stream, (ctx) => main(ctx, stateDir, cwd)),
    exited.then((e) => {
      throw new CheckFailed(`coda exited early: ${JSON.stringify(e.error?.message ?? e)}`);
    }),
  ]);
} catch (err) {
  clearTimeout(overall);
  finish(1, err instanceof CheckFailed ? err.message : `unexpected error: ${err?.stack ?? err}`);
}
clearTimeout(overall);
console.log("sdk-ask: all checks passed");
finish(0);
