#!/usr/bin/env node
// sdk-client: drives coda as an ACP client built with the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0) and checks what coda promises on the wire
// (DESIGN.md §8): the closing final_answer chunk, the commentary phase, a refused
// submit_output, the output_format option, a prompt cancel, and the effort
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

// checkAnsweredTurn checks a turn that closed with an answer: commentary chunks
// carry phase "commentary", exactly one final_answer chunk comes last, in its own
// message, with the expected text and format, and the prompt answered end_turn.
function checkAnsweredTurn(name, { updates, response }, want) {
  const chunks = updates.filter((u) => u.sessionUpdate === "agent_message_chunk");
  const finals = chunks.filter((u) => codaMeta(u)?.phase === "final_answer");
  const commentary = chunks.filter((u) => codaMeta(u)?.phase !== "final_answer");
  check(finals.length === 1, `${name}: exactly one agent_message_chunk with _meta.coda.phase "final_answer"`, finals);
  const final = finals[0];
  check(updates.at(-1) === final, `${name}: the final_answer chunk is the last session/update`, updates.at(-1));
  check(final.content?.type === "text" && final.content.text === want.text, `${name}: the final answer's text is ${JSON.stringify(want.text)}`, final.content);
  if (want.format === "json") {
    check(isDeepStrictEqual(JSON.parse(final.content.text), want.data), `${name}: the final answer parses as the expected JSON`, final.content.text);
  }
  check(codaMeta(final).format === want.format, `${name}: the final answer's _meta.coda.format is "${want.format}"`, codaMeta(final));
  check(typeof final.messageId === "string" && final.messageId !== "", `${name}: the final answer has a messageId`, final);
  if (want.commentary) {
    check(commentary.length > 0, `${name}: coda streamed commentary before the answer`, chunks);
    const bad = commentary.filter((u) => codaMeta(u)?.phase !== "commentary");
    check(bad.length === 0, `${name}: every streamed chunk carries _meta.coda.phase "commentary"`, bad);
    const ids = new Set(commentary.map((u) => u.messageId));
    check(!ids.has(final.messageId), `${name}: the final answer's messageId differs from the commentary's`, { final: final.messageId, commentary: [...ids] });
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

async function main(ctx, stateDir) {
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
  checkAnsweredTurn("prompt 1", turn1, { text: '{"safe": true}', data: { safe: true }, format: "json", commentary: true });
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
  checkAnsweredTurn("prompt 2 (yaml)", turn2, { text: "safe: true\nchecked:\n  - auth\n", format: "yaml", commentary: true });

  // Prompt 3: a slow stream, cancelled after its first chunk.
  const pending = session.prompt("Count slowly.");
  pending.catch(() => {});
  let first;
  do {
    first = await session.nextUpdate();
  } while (first.kind !== "stop" && first.update.sessionUpdate !== "agent_message_chunk");
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

  // Prompt 4: the session stays usable after a cancel.
  const turn4 = await runPrompt(session, "Again.");
  checkAnsweredTurn("prompt 4 (after cancel)", turn4, { text: "again: true\n", format: "yaml" });

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
const app = acp.client({ name: "coda-interop-sdk-client" }).onRequest("*", ({ method }) => {
  throw acp.RequestError.methodNotFound(method);
});

try {
  await Promise.race([
    app.connectWith(stream, (ctx) => main(ctx, stateDir)),
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
