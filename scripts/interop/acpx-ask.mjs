#!/usr/bin/env node
// acpx-ask: what acpx (0.19.1) can do of DESIGN.md §22, through its runtime
// API (acpx/runtime, what applications embed; the acpx CLI advertises no
// elicitation):
//
//   - elicitation: a runtime with elicitationModes ["form"] advertises
//     elicitation to coda; the model's ask_user question reaches the turn's
//     onElicitation handler and its answer reaches the model's next call;
//   - two prompts started together in one session: each answered with its
//     own answer, in order. acpx's runtime decides when to send the second:
//     some runs send it while the first turn runs (coda queues it), some
//     after the first answer (acpx holds it); the check says which (from a
//     log of the wire), sdk-ask.mjs asserts coda's queue;
//   - an MCP server's elicitation: server-everything's
//     trigger-elicitation-request, forwarded by coda to the handler, its
//     answer in the tool's result at the model's next call.
//
// acpx has no session/fork and does not steer: its runtime's prompt mode
// "steer" is a type only (the shared runtime refuses it, the in-process one
// sends a plain session/prompt), and neither its CLI nor its runtime sends
// session/fork. (Checked in acpx 0.19.1's dist.)
//
//   node acpx-ask.mjs [CODA_BIN]      (or CODA_BIN=... node acpx-ask.mjs)
//
// Needs `npm ci` in scripts/interop first. Prints one "ok" line per check; on
// the first failed one prints "FAIL: why" and exits 1.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createAcpRuntime, createAgentRegistry, createFileSessionStore } from "acpx/runtime";

const here = path.dirname(fileURLToPath(import.meta.url));
const coda = process.argv[2] || process.env.CODA_BIN;
if (!coda) {
  console.error("usage: node acpx-ask.mjs CODA_BIN (or set CODA_BIN)");
  process.exit(2);
}
const server = path.join(here, "node_modules", ".bin", "mcp-server-everything");
if (!fs.existsSync(server)) {
  console.error(`acpx-ask: ${server} is not installed: run npm ci in ${here} first`);
  process.exit(2);
}
const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "coda-interop-acpx-ask-")));
for (const d of ["state", "acpx", "cwd"]) fs.mkdirSync(path.join(work, d));
const cwd = path.join(work, "cwd");
const wire = path.join(work, "wire.log");
const runtimes = [];

function finish(code, message) {
  if (message) {
    console.log(`FAIL: ${message}`);
    if (fs.existsSync(wire)) console.log(`the wire (both ways):\n${fs.readFileSync(wire, "utf8").trimEnd()}`);
  }
  Promise.allSettled(runtimes.map((rt) => rt.shutdown())).finally(() => {
    fs.rmSync(work, { recursive: true, force: true });
    process.exit(code);
  });
}
setTimeout(() => finish(1, "the check did not finish within 60 s"), 60_000).unref();

function check(cond, what, got) {
  if (!cond) throw new Error(`${what}${got === undefined ? "" : `\n  got: ${JSON.stringify(got)}`}`);
  console.log(`ok - ${what}`);
}

// runtime starts coda as acpx's agent "coda" with a script model; with
// logWire, through a shell that appends both directions of the wire to
// wire.log, a line per message.
function runtime(script, { mcpServers = [], logWire = false } = {}) {
  const argv = [coda, "--model", `script:${path.join(here, script)}`, "--state-dir", path.join(work, "state")];
  const command = logWire ? ["bash", "-c", 'tee -a "$0" | "$@" | tee -a "$0"', wire, ...argv] : argv;
  const rt = createAcpRuntime({
    cwd,
    sessionStore: createFileSessionStore({ stateDir: path.join(work, "acpx") }),
    agentRegistry: createAgentRegistry({ overrides: { coda: command } }),
    permissionMode: "approve-all",
    elicitationModes: ["form"],
    mcpServers,
  });
  runtimes.push(rt);
  return rt;
}

async function turn(rt, handle, text, requestId, onElicitation) {
  const t = rt.startTurn({ handle, text, mode: "prompt", requestId, onElicitation });
  let answer = "";
  const drained = (async () => {
    for await (const ev of t.events) if (ev.type === "text_delta" && ev.stream !== "thought") answer += ev.text;
  })();
  return { started: t.promptStarted, done: drained.then(async () => ({ answer, result: await t.result })) };
}

async function main() {
  const asked = [];
  const answer = async (req) => {
    asked.push(req);
    if (req.requestedSchema?.properties?.answer) return { action: "accept", content: { answer: "staging" } };
    if (req.requestedSchema?.properties?.name) return { action: "accept", content: { name: "Ada Lovelace", check: true } };
    return { action: "decline" };
  };

  const rt = runtime("acpx-ask-turns.toml", { logWire: true });
  const handle = await rt.ensureSession({ sessionKey: "ask", agent: "coda", mode: "persistent", cwd });
  const t1 = await (await turn(rt, handle, "Is the deploy healthy?", "r1", answer)).done;
  check(asked.length === 1 && asked[0].mode === "form" && asked[0].message === "Which environment should I check?", "ask_user: the question reached acpx's elicitation handler as a form", asked);
  check(JSON.stringify(asked[0].requestedSchema?.properties?.answer?.enum) === '["staging","prod"]', "ask_user: the choices are the answer field's enum", asked[0].requestedSchema);
  check(t1.result.stopReason === "end_turn" && t1.answer === "Checked staging.", "ask_user: the answer reached the model's next call (the script expects it), the turn answered", t1);

  const first = await turn(rt, handle, "First.", "r2");
  await first.started;
  const second = await turn(rt, handle, "Second.", "r3");
  const [r2, r3] = await Promise.all([first.done, second.done]);
  check(r2.answer === "First done." && r3.answer === "Second done.", "queue: each prompt answered with its own answer, the second after the first (the script expects it)", { r2, r3 });
  const lines = fs.readFileSync(wire, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const sent = lines.findIndex((m) => m.method === "session/prompt" && m.params?.prompt?.[0]?.text === "Second.");
  const firstId = lines.find((m) => m.method === "session/prompt" && m.params?.prompt?.[0]?.text === "First.")?.id;
  const firstAnswered = lines.findIndex((m) => m.id === firstId && m.result !== undefined);
  check(sent >= 0 && firstAnswered >= 0, "queue: both prompts went to coda, in one session", { sent, firstAnswered });
  // acpx decides itself when to send the second: runs here have seen it sent
  // while the first turn ran (coda queued it) and after the first answer
  // (acpx held it), so this is said, not asserted; sdk-ask.mjs asserts it.
  console.log(`# acpx sent the second session/prompt ${sent < firstAnswered ? "while the first turn ran: coda queued it" : "after the first answer: acpx held it"}`);

  const rtMCP = runtime("acpx-ask-mcp-turns.toml", { mcpServers: [{ name: "everything", command: server, args: ["stdio"], env: [] }] });
  const handleMCP = await rtMCP.ensureSession({ sessionKey: "mcp", agent: "coda", mode: "oneshot", cwd });
  asked.length = 0;
  const t4 = await (await turn(rtMCP, handleMCP, "Ask me for my details.", "r4", answer)).done;
  check(asked.length === 1 && asked[0].message === "MCP server everything asks: Please provide inputs for the following fields:", "MCP: server-everything's elicitation reached acpx's handler, naming the server", asked);
  check(t4.answer === "Thanks, Ada.", "MCP: the tool's result with the answer reached the model's next call (the script expects it)", t4);
}

try {
  await main();
  console.log("acpx-ask: all checks passed");
  finish(0);
} catch (err) {
  finish(1, err?.stack ?? String(err));
}
