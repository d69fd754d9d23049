#!/usr/bin/env bash
# acpx.sh: one turn of coda driven by acpx (a headless ACP client), checking
# that acpx's JSON output holds coda's final_answer chunk with the expected JSON,
# the turn's only message (the work streams as thoughts), and a prompt result
# with _meta.coda.status "answered" and the answer at
# .result._meta.coda.finalOutput.content.
#
#   scripts/interop/acpx.sh [CODA_BIN]      (or CODA_BIN=... scripts/interop/acpx.sh)
#
# Needs `npm ci` in scripts/interop first. Exits 0 when every check holds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
coda=${1:-${CODA_BIN:-}}
if [[ -z $coda ]]; then
	echo "usage: $0 CODA_BIN (or set CODA_BIN)" >&2
	exit 2
fi
acpx=$here/node_modules/.bin/acpx
if [[ ! -x $acpx ]]; then
	echo "acpx.sh: $acpx is missing: run npm ci in $here" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/coda-interop-acpx.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/state" "$work/cwd"

# acpx splits --agent on spaces: the paths must have none.
for p in "$coda" "$here" "$work"; do
	if [[ $p == *[[:space:]]* ]]; then
		echo "acpx.sh: acpx cannot launch an agent from a path with spaces: $p" >&2
		exit 2
	fi
done

status=0
"$acpx" --approve-all --format json --timeout 30 --cwd "$work/cwd" \
	--agent "$coda --model script:$here/acpx-turns.toml --output-format json --state-dir $work/state" \
	exec 'Is the auth module safe?' >"$work/out.jsonl" 2>"$work/err.txt" || status=$?
if [[ $status -ne 0 ]]; then
	echo "FAIL: acpx exited $status"
	echo "acpx stderr:"; cat "$work/err.txt"
	echo "acpx stdout:"; cat "$work/out.jsonl"
	exit 1
fi

node - "$work/out.jsonl" <<'JS' || { echo "acpx stderr:"; cat "$work/err.txt"; echo "acpx stdout:"; cat "$work/out.jsonl"; exit 1; }
const fs = require("node:fs");
const want = '{"safe": true}';
const lines = fs.readFileSync(process.argv[2], "utf8").split("\n").filter((l) => l.trim() !== "");
const msgs = lines.map((l, i) => {
  try {
    return JSON.parse(l);
  } catch (err) {
    console.log(`FAIL: line ${i + 1} of acpx's output is not JSON: ${l}`);
    process.exit(1);
  }
});
function check(cond, what, got) {
  if (!cond) {
    console.log(`FAIL: ${what}` + (got === undefined ? "" : `\n  got: ${JSON.stringify(got)}`));
    process.exit(1);
  }
  console.log(`ok - ${what}`);
}
const prompt = msgs.find((m) => m.method === "session/prompt");
check(prompt !== undefined, "acpx sent session/prompt");
const resultAt = msgs.findIndex((m) => m.id === prompt.id && "result" in m);
check(resultAt >= 0, "coda answered the prompt with a result", msgs.filter((m) => m.id === prompt.id));
const result = msgs[resultAt].result;
const updates = msgs.slice(0, resultAt).filter((m) => m.method === "session/update").map((m) => m.params.update);
const finals = updates.filter((u) => u.sessionUpdate === "agent_message_chunk" && u._meta?.coda?.phase === "final_answer");
check(finals.length === 1, 'the output holds exactly one agent_message_chunk with _meta.coda.phase "final_answer"', finals);
check(updates.at(-1) === finals[0], "the final_answer chunk is the last session/update before the result", updates.at(-1));
check(finals[0].content?.text === want, `the final answer's text is ${want}`, finals[0].content);
check(JSON.stringify(JSON.parse(finals[0].content.text)) === '{"safe":true}', "the final answer parses as the expected JSON");
check(result.stopReason === "end_turn", 'the prompt result has stopReason "end_turn"', result);
check(result._meta?.coda?.status === "answered", 'the prompt result has _meta.coda.status "answered"', result._meta);
check(result._meta?.coda?.finalOutput?.content === want, "_meta.coda.finalOutput.content is the answer", result._meta?.coda?.finalOutput);
const joined = updates.filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text").map((u) => u.content.text).join("");
check(joined === want, "the joined message text is exactly the answer", joined);
const work = updates.filter((u) => u.sessionUpdate === "agent_thought_chunk").map((u) => u.content?.text ?? "").join("");
check(work === "Checking the module.", "the work streamed as thoughts", work);
const last = msgs.filter((m) => m.id === prompt.id && "result" in m).at(-1);
check(last?.result?._meta?.coda?.finalOutput?.content === want, "acpx's JSON output holds the answer at .result._meta.coda.finalOutput.content", last?.result);
JS
echo "acpx.sh: all checks passed"
