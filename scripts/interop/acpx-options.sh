#!/usr/bin/env bash
# acpx-options.sh: the session's pickers from acpx (DESIGN §14, §16). In a
# persistent session (`acpx sessions new`), `acpx set effort high` sets the
# effort option (category thought_level) and the next prompt's model call asks
# for it (the script model expects it); `acpx set effort max` is refused
# -32602 with the levels the model takes. The live model list: a provider
# the config names (a local OpenAI-style server, played here by a few lines
# of Node serving GET /v1/models) lists its models into the model option, and
# `acpx set model lab:listed-one` picks one of them.
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
server_pid=
trap '[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/state" "$work/cwd" "$work/home"

# The provider's listing: GET /v1/models, as OpenAI-style servers answer it.
node -e '
const http = require("node:http");
const srv = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/v1/models") {
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ object: "list", data: [{ id: "listed-one", object: "model" }, { id: "listed-two", object: "model" }, { id: "text-embedding-3-small", object: "model" }] }));
    return;
  }
  res.statusCode = 404;
  res.end("{}");
});
srv.listen(0, "127.0.0.1", () => require("node:fs").writeFileSync(process.argv[1], String(srv.address().port)));
' "$work/port" &
server_pid=$!
for _ in $(seq 50); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || { echo "FAIL: the listing server did not start"; exit 1; }
cat >"$work/config.toml" <<TOML
[providers.lab]
kind = "openai"
base_url = "http://127.0.0.1:$(cat "$work/port")/v1"
TOML
cat >"$work/turns.toml" <<'TOML'
[[turn]]
expect_effort = "high"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Thought hard." }
TOML

agent="$coda --config $work/config.toml --model script:$work/turns.toml --state-dir $work/state"
# acpx's queue owner (the process that keeps the session's coda) leaves
# after --ttl seconds idle; a command that reaches it as it leaves is
# answered QUEUE_OWNER_CLOSED ("retryable": true), which on a loaded
# machine is a matter of timing, not of coda: that command is run again.
run_acpx() {
	local out rc
	for _ in 1 2 3; do
		out=$(cd "$work/cwd" && HOME=$work/home "$acpx" --approve-all --format json --ttl 5 --timeout 30 --agent "$agent" "$@" 2>&1) && rc=0 || rc=$?
		[[ $out == *QUEUE_OWNER_CLOSED* ]] || break
	done
	printf '%s\n' "$out"
	return "$rc"
}

fail() {
	echo "FAIL: $1"
	for f in "$work"/*.out; do echo "--- $f"; cut -c1-600 "$f"; done
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

# The list is asked in the background when the session starts: the options
# any later answer carries have it once it came (within 5 s).
listed=
for _ in $(seq 20); do
	run_acpx set mode ask >"$work/set-mode.out" 2>&1 || fail "acpx set mode ask"
	if grep -q '{"value":"lab:listed-two","name":"lab:listed-two"}' "$work/set-mode.out"; then
		listed=yes
		break
	fi
	sleep 0.5
done
[[ -n $listed ]] || fail "the model option never offered the provider's listed models"
grep -q 'text-embedding-3-small' "$work/set-mode.out" && fail "the model option offers an embedding model"
echo "ok - the provider's listed models are in the model picker, the embedding one left out"

run_acpx set model lab:listed-one >"$work/set-model.out" 2>&1 || fail "acpx set model lab:listed-one"
run_acpx set mode ask >"$work/set-mode.out" 2>&1 || fail "acpx set mode ask"
grep -q '"id":"model","name":"Model"[^]]*"currentValue":"lab:listed-one"' "$work/set-mode.out" ||
	fail "after acpx set model lab:listed-one, the model option is not it"
echo "ok - acpx set model lab:listed-one picks the listed model"

# A headless client picks a listed model at once: acpx --model X exec on a
# new coda applies X right after session/new, which offers the providers'
# list when it came within a second (DESIGN §22). The turn itself then
# calls the listing server, which serves no chat: only the pick is checked.
(cd "$work/cwd" && HOME=$work/home "$acpx" --approve-all --format json --timeout 30 \
	--agent "$agent" --model lab:listed-two exec 'Hello') >"$work/exec-model.out" 2>&1 || true
grep -q 'did not advertise' "$work/exec-model.out" && fail "acpx --model lab:listed-two: coda did not offer the listed model in session/new"
grep -q '"currentValue":"lab:listed-two"' "$work/exec-model.out" ||
	fail "acpx --model lab:listed-two exec did not set the model option to the listed model"
echo "ok - acpx --model lab:listed-two exec picks the listed model on a new coda"
echo "acpx-options.sh: all checks passed"
