#!/usr/bin/env bash
# acpx-session.sh: acpx's persistent session outlives coda. A session is made
# (`acpx sessions new`), prompted once, and, after acpx's queue owner and its
# coda have exited (--ttl 1), prompted again: acpx restores it in a new coda
# (session/resume or session/load), and the second prompt lands in the same
# session, whose file then holds both exchanges under the first one's title.
#
#   scripts/interop/acpx-session.sh [CODA_BIN]
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
	echo "acpx-session.sh: $acpx is missing: run npm ci in $here" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/coda-interop-session.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/state" "$work/cwd" "$work/home"
cat >"$work/turns.toml" <<'TOML'
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Answered." }
TOML

agent="$coda --model script:$work/turns.toml --state-dir $work/state"
run_acpx() { (cd "$work/cwd" && HOME=$work/home "$acpx" --approve-all --format json --ttl 1 --timeout 30 --agent "$agent" "$@"); }

fail() {
	echo "FAIL: $1"
	for f in "$work"/*.out; do echo "--- $f"; cat "$f"; done
	exit 1
}

run_acpx sessions new >"$work/new.out" 2>&1 || fail "acpx sessions new"
id=$(grep -o '"acpxSessionId":"[^"]*"' "$work/new.out" | head -n 1 | sed 's/.*:"\(.*\)"/\1/')
[[ -n $id ]] || fail "no session id in acpx's answer"
echo "ok - acpx made session $id"

run_acpx prompt 'First question' >"$work/first.out" 2>&1 || fail "the first prompt"
# The queue owner, and the coda it started, exit after the TTL.
for _ in $(seq 50); do
	pgrep -f "script:$work/turns.toml" >/dev/null || break
	sleep 0.2
done
pgrep -f "script:$work/turns.toml" >/dev/null && fail "coda still runs after acpx's TTL"
echo "ok - coda exited after acpx's idle TTL"
# acpx's queue owner outlives its coda by a moment; a prompt that reaches it
# then is refused ("Queue owner is shutting down"): wait for it to be gone.
owners=$(sed -n 's/^ *"pid": *\([0-9]*\),*$/\1/p' "$work"/home/.acpx/queues/*.lock 2>/dev/null || true)
for pid in $owners; do
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill -0 "$pid" 2>/dev/null && fail "acpx's queue owner $pid still runs 20 s after its TTL"
done

run_acpx prompt 'Second question' >"$work/second.out" 2>&1 || fail "the second prompt"
grep -q "\"method\":\"session/\(resume\|load\)\",\"params\":{\"sessionId\":\"$id\"" "$work/second.out" ||
	fail "acpx did not restore $id in the new coda"
grep -q '"phase":"final_answer"' "$work/second.out" || fail "the second prompt has no final answer"
echo "ok - acpx restored $id in a new coda, and the second prompt was answered there"

node - "$work/state/sessions/$id.jsonl" <<'JS' || fail "the session's file"
// One JSON line each: the header, then updates and exchanges (store/session.go).
const lines = require("node:fs").readFileSync(process.argv[2], "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
let title = lines[0].session.title;
for (const l of lines) if (l.type === "update" && l.set.title !== undefined) title = l.set.title;
const prompts = lines.filter((l) => l.type === "exchange").map((l) => l.exchange.prompt.map((b) => b.text).join(""));
if (title !== "First question" || prompts.join("|") !== "First question|Second question") {
  console.log(`FAIL: title ${JSON.stringify(title)}, prompts ${JSON.stringify(prompts)}`);
  process.exit(1);
}
console.log("ok - the session's file holds both exchanges, titled after the first");
JS
echo "acpx-session.sh: all checks passed"
