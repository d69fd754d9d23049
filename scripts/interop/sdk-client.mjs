#!/usr/bin/env node
// sdk-client: drives coda as an ACP client built with the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0) and checks what coda promises on the wire
// (DESIGN.md §8): the turn's joined message text is exactly its answer (the
// work streams as agent_thought_chunk with phase "commentary"), with commentary,
// with a refused submit_output repaired, with a reply taken as the answer, and
// after session/load; the output_format option, a prompt cancel, and the effort
// option (DESIGN.md §16).
//
//   node sdk-client.mjs [CODA_BIN]      (or CODA_BIN=... node sdk-client.mjs)
//
// Prints one "ok" line per check; on the first failed check prints "FAIL: why"
// with coda's stderr and exits 1.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import * as acp from "@agentclientprotocol/sdk";

const here = path.dirname(fileURLToPath(import.meta.url));
const codaBin = process.argv[2] || process.env.CODA_BIN;
if (!codaBin) {
  console.error("usage: node sdk-client.mjs CODA_BIN (or set CODA_BIN)");
  process.exit(2);
}
const script = path.join(here, "sdk-turns.toml");
const overallTimeoutMs = 30_000;
const cancelBudgetMs = 1_000;

class CheckFailed extends Error {}

function check(cond, what, detail) {
  if (!cond) {
    throw new CheckFailed(detail === undefined ? what : `${what}\n  got: ${JSON.stringify(detail)}`);
  }
  console.log(`ok - ${what}`);
}

const codaMeta = (x) => x?._meta?.coda;

// runPrompt sends one prompt and collects its session/update notifications up to
// and including the prompt response.
async function runPrompt(session, text) {
  const response = session.prompt(text);
  response.catch(() => {}); // the same failure reaches nextUpdate
  const updates = [];
  for (;;) {
    const msg = await session.nextUpdate();
    if (msg.kind === "stop") {
      return { updates, response: msg.response };
    }
    updates.push(msg.update);
  }
}

// checkAnsweredTurn checks a turn that closed with an answer, as a client that
// joins message text sees it: the turn's agent_message_chunks are one, the
// final_answer chunk, last, its text exactly the answer; the work (commentary,
// a reply that became the answer) streamed as agent_thought_chunks with phase
// "commentary" under other messageIds; the prompt answered end_turn.
function checkAnsweredTurn(name, { updates, response }, want) {
  const messages = updates.filter((u) => u.sessionUpdate === "agent_message_chunk");
  const finals = messages.filter((u) => codaMeta(u)?.phase === "final_answer");
  const thoughts = updates.filter((u) => u.sessionUpdate === "agent_thought_chunk");
  check(finals.length === 1, `${name}: exactly one agent_message_chunk with _meta.coda.phase "final_answer"`, finals);
  check(messages.length === 1, `${name}: the answer is the turn's only agent_message_chunk`, messages);
  const joined = messages.map((u) => (u.content?.type === "text" ? u.content.text : "")).join("");
  check(joined === want.text, `${name}: the joined message text is exactly the answer ${JSON.stringify(want.text)}`, joined);
  const final = finals[0];
  check(updates.at(-1) === final, `${name}: the final_answer chunk is the last session/update`, updates.at(-1));
  if (want.format === "json") {
    check(isDeepStrictEqual(JSON.parse(final.content.text), want.data), `${name}: the final answer parses as the expected JSON`, final.content.text);
  }
  check(codaMeta(final).format === want.format, `${name}: the final answer's _meta.coda.format is "${want.format}"`, codaMeta(final));
  check(typeof final.messageId === "string" && final.messageId !== "", `${name}: the final answer has a messageId`, final);
  if (want.work !== undefined) {
    const work = thoughts.map((u) => u.content?.text ?? "").join("");
    check(work === want.work, `${name}: the thoughts carry the work ${JSON.stringify(want.work)}`, work);
    const bad = thoughts.filter((u) => codaMeta(u)?.phase !== "commentary");
    check(bad.length === 0, `${name}: every streamed thought carries _meta.coda.phase "commentary"`, bad);
    const ids = new Set(thoughts.map((u) => u.messageId));
    check(!ids.has(final.messageId), `${name}: the final answer's messageId differs from the work's`, { final: final.messageId, work: [...ids] });
  }
  check(response.stopReason === "end_turn", `${name}: the prompt response has stopReason "end_turn"`, response);
  check(codaMeta(response)?.status === "answered", `${name}: the prompt response has _meta.coda.status "answered"`, codaMeta(response));
  check(codaMeta(response)?.finalOutput?.content === want.text, `${name}: _meta.coda.finalOutput.content is the answer`, codaMeta(response)?.finalOutput);
}

// toolCalls folds tool_call and tool_call_update notifications into the last
// known state of each call.
function toolCalls(updates) {
  const calls = new Map();
  for (const u of updates) {
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") continue;
    const prev = calls.get(u.toolCallId) ?? { toolCallId: u.toolCallId };
    calls.set(u.toolCallId, { ...prev, ...Object.fromEntries(Object.entries(u).filter(([, v]) => v !== undefined)) });
  }
  return [...calls.values()];
}

const contentText = (call) =>
  (call.content ?? []).map((c) => (c.type === "content" && c.content?.type === "text" ? c.content.text : "")).join("\n");

async function main(ctx, stateDir, loadUpdates) {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "coda-interop-sdk-client", version: "0.0.0" },
  });
  check(init.protocolVersion === 1, "initialize: protocolVersion 1", init.protocolVersion);
  check(codaMeta(init.agentCapabilities)?.finalOutput === true, "initialize: agentCapabilities._meta.coda.finalOutput === true", init.agentCapabilities);

  const session = await ctx.buildSession(stateDir).start();
  const formatOption = session.newSessionResponse.configOptions?.find((o) => o.id === "output_format");
  check(formatOption !== undefined, "session/new: offers the output_format config option", session.newSessionResponse.configOptions);
  check(formatOption.type === "select" && formatOption.currentValue === "json", 'session/new: output_format is a select, currently "json"', formatOption);
  check(formatOption.options.some((o) => o.value === "yaml"), "session/new: output_format offers yaml", formatOption.options);

  // Prompt 1: commentary, a refused fenced submission, then the JSON alone.
  const turn1 = await runPrompt(session, "Is the auth module safe?");
  checkAnsweredTurn("prompt 1 (commentary, a repair)", turn1, { text: '{"safe": true}', data: { safe: true }, format: "json", work: "Checking the module.Fixing the fence." });
  const submits = toolCalls(turn1.updates).filter((c) => c.title?.startsWith("submit_output"));
  const refused = submits.filter((c) => c.status === "failed");
  check(refused.length === 1, "prompt 1: one submit_output tool call ended failed", submits);
  check(/code fence/.test(contentText(refused[0])), "prompt 1: the refused submit_output names the code fence as its reason", refused[0]);
  check(refused[0].rawInput?.content === '```json\n{"safe": true}\n```', "prompt 1: the pretty-printed arguments arrive as rawInput", refused[0]);
  check(submits.filter((c) => c.status === "completed").length === 1, "prompt 1: one submit_output tool call completed", submits);

  // The session's output_format option switches the next answer to YAML.
  const set = await ctx.request(acp.methods.agent.session.setConfigOption, {
    sessionId: session.sessionId,
    configId: "output_format",
    value: "yaml",
  });
  const after = set.configOptions?.find((o) => o.id === "output_format");
  check(after?.currentValue === "yaml", 'session/set_config_option: output_format is now "yaml"', set);
  const turn2 = await runPrompt(session, "And now?");
  checkAnsweredTurn("prompt 2 (yaml)", turn2, { text: "safe: true\nchecked:\n  - auth\n", format: "yaml", work: "Answering in YAML." });

  // A reply taken as the answer (the model calls no tool): streamed as a
  // thought, then sent once as the answer.
  const turnReply = await runPrompt(session, "In one line?");
  checkAnsweredTurn("prompt 2b (a reply taken as the answer)", turnReply, { text: "safe: false", format: "yaml", work: "safe: false" });

  // Prompt 3: a slow stream, cancelled after its first chunk.
  const pending = session.prompt("Count slowly.");
  pending.catch(() => {});
  let first;
  do {
    first = await session.nextUpdate();
  } while (first.kind !== "stop" && !first.update.sessionUpdate.endsWith("_chunk"));
  check(first.kind !== "stop", "prompt 3: a chunk streams before the prompt ends", first.response);
  const cancelledAt = performance.now();
  await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
  let timer;
  const cancelled = await Promise.race([
    pending,
    new Promise((resolve) => {
      timer = setTimeout(() => resolve(null), cancelBudgetMs);
    }),
  ]);
  clearTimeout(timer);
  const elapsed = Math.round(performance.now() - cancelledAt);
  check(cancelled !== null, `prompt 3: the prompt resolved within ${cancelBudgetMs} ms of session/cancel (${elapsed} ms)`);
  check(cancelled.stopReason === "cancelled", 'prompt 3: stopReason "cancelled"', cancelled);
  // Drain the rest of prompt 3 (up to its stop) so prompt 4 starts on a clean queue.
  for (;;) {
    const msg = await session.nextUpdate();
    if (msg.kind === "stop") break;
  }

  // Prompt 4: the session stays usable after a cancel. The SDK's own
  // readText() joins the turn's message text: it is the answer alone.
  const response4 = session.prompt("Again.");
  const text4 = await session.readText();
  check(text4 === "again: true\n", "prompt 4 (after cancel): the SDK's readText() is exactly the answer", text4);
  const turn4 = { response: await response4 };
  check(codaMeta(turn4.response)?.finalOutput?.content === "again: true\n", "prompt 4: _meta.coda.finalOutput.content is the answer", turn4.response);

  // The effort option (thought_level): a level the model takes is set and
  // reaches the next call (the script expects it); one it does not take is
  // refused -32602, naming the levels it takes.
  const effort = session.newSessionResponse.configOptions?.find((o) => o.id === "effort");
  check(effort?.category === "thought_level" && effort.options.some((o) => o.value === "high"), 'session/new: offers the effort option (thought_level) with "high"', effort);
  const setEffort = await ctx.request(acp.methods.agent.session.setConfigOption, { sessionId: session.sessionId, configId: "effort", value: "high" });
  check(setEffort.configOptions?.find((o) => o.id === "effort")?.currentValue === "high", 'session/set_config_option: effort is now "high"', setEffort);
  let refusedEffort;
  try {
    await ctx.request(acp.methods.agent.session.setConfigOption, { sessionId: session.sessionId, configId: "effort", value: "max" });
  } catch (err) {
    refusedEffort = err;
  }
  check(refusedEffort?.code === -32602 && /takes off, low, medium, high/.test(refusedEffort.message), "session/set_config_option: effort max is refused -32602, naming the levels taken", refusedEffort);
  const turn5 = await runPrompt(session, "Think hard.");
  check(turn5.response.stopReason === "end_turn" && codaMeta(turn5.response)?.status === "answered", "prompt 5: answered with the effort picked", turn5.response);
  session.dispose();

  // session/load replays the session as it streamed: each answered turn's
  // thoughts are its work, its message its answer, once, as it was sent;
  // the cancelled turn left none. Everything
  // the load sends comes before its response.
  loadUpdates.recording = true;
  const loaded = await ctx.request(acp.methods.agent.session.load, { sessionId: session.sessionId, cwd: stateDir, mcpServers: [] });
  loadUpdates.recording = false;
  check(loaded !== undefined, "session/load: answered", loaded);
  const replay = loadUpdates.list.filter((n) => n.sessionId === session.sessionId).map((n) => n.update);
  const answers = ['{"safe": true}', "safe: true\nchecked:\n  - auth\n", "safe: false", "again: true\n", "hard: true\n"];
  const replayed = replay.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content?.text);
  check(isDeepStrictEqual(replayed, answers), "session/load: the replayed messages are the answers, each once", replayed);
  check(replay.filter((u) => u.sessionUpdate === "user_message_chunk").length === 5, "session/load: the five answered prompts are replayed (the cancelled one left none)", replay);
  let turn = 0;
  const firstThoughts = [];
  for (const u of replay) {
    if (u.sessionUpdate === "user_message_chunk") turn++;
    else if (turn === 1 && u.sessionUpdate === "agent_thought_chunk") firstThoughts.push(u.content?.text);
  }
  check(firstThoughts.join("") === "Checking the module.Fixing the fence.", "session/load: the first turn's thoughts are its work, replayed as it streamed", firstThoughts);
  check(replay.some((u) => u.sessionUpdate === "available_commands_update"), "session/load: the commands come before its response", replay.map((u) => u.sessionUpdate));
  const late = [];
  loadUpdates.after = (n) => late.push(n);
  await ctx.request(acp.methods.agent.session.list, {});
  check(late.length === 0, "session/load: nothing for the session after its response", late);
}

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "coda-interop-sdk-"));
const child = spawn(codaBin, ["--model", `script:${script}`, "--output-format", "json", "--state-dir", stateDir], {
  cwd: stateDir,
  stdio: ["pipe", "pipe", "pipe"],
});
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
  process.exit(code);
}

const overall = setTimeout(() => finish(1, `the check did not finish within ${overallTimeoutMs} ms`), overallTimeoutMs);
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
// Updates for a session no ActiveSession routes (the load's replay, once the
// session's helper is disposed) reach this handler.
const loadUpdates = { recording: false, list: [], after: null };
const app = acp
  .client({ name: "coda-interop-sdk-client" })
  .onRequest("*", ({ method }) => {
    throw acp.RequestError.methodNotFound(method);
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (loadUpdates.recording) loadUpdates.list.push(params);
    else loadUpdates.after?.(params);
  });

try {
  await Promise.race([
    app.connectWith(stream, (ctx) => main(ctx, stateDir, loadUpdates)),
    exited.then((e) => {
      throw new CheckFailed(`coda exited early: ${JSON.stringify(e.error?.message ?? e)}`);
    }),
  ]);
} catch (err) {
  clearTimeout(overall);
  finish(1, err instanceof CheckFailed ? err.message : `unexpected error: ${err?.stack ?? err}`);
}
clearTimeout(overall);
console.log("sdk-client: all checks passed");
finish(0);
