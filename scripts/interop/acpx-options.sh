#!/usr/bin/env bash
# acpx-options.sh: the session's pickers from acpx (DESIGN §14, §16). In a
# persistent session (`acpx sessions new`), `acpx set effort high` sets the
# effort option (category thought_level) and the next prompt's model call asks
# for it (the script model expects it); `acpx set effort max` is refused
# -32602 with the levels the model takes.
#
#   scripts/interop/acpx-options.sh [CODA_BIN]
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
	echo "acpx-options.sh: $acpx is missing: run npm ci in $here" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/coda-interop-options.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/state" "$work/cwd" "$work/home"
cat >"$work/turns.toml" <<'TOML'
[[turn]]
expect_effort = "high"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Thought hard." }
TOML

agent="$coda --model script:$work/turns.toml --state-dir $work/state"
run_acpx() { (cd "$work/cwd" && HOME=$work/home "$acpx" --approve-all --format json --ttl 5 --timeout 30 --agent "$agent" "$@"); }

fail() {
	echo "FAIL: $1"
	for f in "$work"/*.out; do echo "--- $f"; cat "$f"; done
	exit 1
}

run_acpx sessions new >"$work/new.out" 2>&1 || fail "acpx sessions new"
echo "ok - acpx made a session"

run_acpx set effort high >"$work/set-effort.out" 2>&1 || fail "acpx set effort high"
grep -q '"id":"effort","name":"Effort"[^]]*"category":"thought_level","type":"select","currentValue":"high"' "$work/set-effort.out" ||
	fail "after acpx set effort high, the effort option is not high"
echo "ok - acpx set effort high: the effort option (thought_level) is high"

run_acpx prompt 'Think hard' >"$work/prompt.out" 2>&1 || fail "the prompt after set effort high"
grep -q '"phase":"final_answer"' "$work/prompt.out" || fail "the prompt has no final answer (did the call ask for effort high?)"
echo "ok - the next prompt's call asked for effort high and was answered"

if run_acpx set effort max >"$work/set-max.out" 2>&1; then
	fail "acpx set effort max was taken"
fi
grep -q '"code":-32602,"message":"invalid params: effort \\"max\\": model script:[^ ]* takes off, low, medium, high, or default"' "$work/set-max.out" ||
	fail "acpx set effort max was not refused with the levels taken"
echo "ok - acpx set effort max is refused -32602, naming the levels taken"
echo "acpx-options.sh: all checks passed"
