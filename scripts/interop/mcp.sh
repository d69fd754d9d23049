#!/usr/bin/env bash
# mcp.sh: coda with a real MCP server from npm, the reference "everything"
# server, pinned in package.json and installed by `npm ci` (run.sh does it),
# started from node_modules/.bin as an editor starts a server's command. One
# session: session/new with the server, a prompt whose scripted model calls
# everything__echo; the check answers the permission request and expects the
# echo back, then closes coda's stdin and checks no process is left in the
# session's directory.
#
#   scripts/interop/mcp.sh [CODA_BIN]      (or CODA_BIN=... scripts/interop/mcp.sh)
#
# Needs node, and `npm ci` run in scripts/interop first. The server is not
# fetched at run time (npx -y on a cold cache took ~22 s, past the 10 s coda
# waits for a session's MCP servers before a prompt).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
coda=${1:-${CODA_BIN:-}}
if [[ -z $coda ]]; then
	echo "usage: $0 CODA_BIN (or set CODA_BIN)" >&2
	exit 2
fi
server="$here/node_modules/.bin/mcp-server-everything"
if [[ ! -x $server ]]; then
	echo "mcp.sh: $server is not installed: run npm ci in $here first" >&2
	exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/coda-interop-mcp.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/state" "$work/cwd"

node - "$coda" "$here/mcp-turns.toml" "$work" "$server" <<'JS'
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const readline = require("node:readline");
const [coda, script, work, server] = process.argv.slice(2);
const cwd = fs.realpathSync(`${work}/cwd`);
const child = spawn(coda, ["--model", `script:${script}`, "--state-dir", `${work}/state`], { stdio: ["pipe", "pipe", "inherit"] });
const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
const waiting = new Map();
const updates = [];
const asked = [];
readline.createInterface({ input: child.stdout }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "session/request_permission") {
    asked.push(m.params.toolCall);
    send({ jsonrpc: "2.0", id: m.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  } else if (m.method === "session/update") {
    updates.push(m.params.update);
  } else if (waiting.has(m.id)) {
    waiting.get(m.id)(m);
  }
});
let next = 0;
const request = (method, params) => new Promise((resolve) => { const id = next++; waiting.set(id, resolve); send({ jsonrpc: "2.0", id, method, params }); });
function check(cond, what, got) {
  if (!cond) {
    console.log(`FAIL: ${what}` + (got === undefined ? "" : `\n  got: ${JSON.stringify(got)}`));
    process.exit(1);
  }
  console.log(`ok - ${what}`);
}
setTimeout(() => check(false, "the session ended within 3 minutes"), 180_000).unref();
(async () => {
  const init = await request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  check(init.result?.agentCapabilities?.mcpCapabilities?.http === true, "initialize: mcpCapabilities.http", init);
  let t = Date.now();
  const created = await request("session/new", { cwd, mcpServers: [
    { name: "everything", command: server, args: ["stdio"], env: [] },
  ] });
  const sessionId = created.result?.sessionId;
  check(sessionId, `session/new answered in ${Date.now() - t} ms (the server starts in the background)`, created);
  t = Date.now();
  const answered = await request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Echo something." }] });
  check(answered.result?._meta?.coda?.status === "answered", `the prompt was answered (${Date.now() - t} ms, the server's start included)`, answered);
  check(asked.length === 1 && asked[0].kind === "read", "the echo call asked permission, kind read", asked);
  const done = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed" && JSON.stringify(u.content ?? []).includes("Echo: hi from coda"));
  check(done, "the echo call completed with the server's answer", updates.filter((u) => u.sessionUpdate?.startsWith("tool_call")));
  child.stdin.end();
  child.on("exit", (code) => {
    check(code === 0, "coda exited 0 at stdin's end", code);
    if (process.platform === "linux") {
      const left = fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
        try { return fs.readlinkSync(`/proc/${p}/cwd`) === cwd; } catch { return false; }
      });
      check(left.length === 0, "no process is left in the session's directory", left);
    }
    process.exit(0);
  });
})();
JS
