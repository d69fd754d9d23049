#!/usr/bin/env bash
# npm.sh: coda as npm users get it. scripts/release.sh builds this machine's
# target and writes the npm packages (dist/npm/); `npm pack` packs the
# launcher (coda-acp) and this platform's package (@coda-acp/coda-OS-CPU);
# both tarballs are installed into an empty directory with npm offline, its
# registry pointed at a closed port and an empty cache, so nothing can come
# from the registry. Then, through the installed launcher:
#
#   - `npx coda version` reports agent.json's version, and so does
#     `npx coda-acp@VERSION version`, as the ACP Registry's npx entry runs it;
#   - `npx coda run --bogus x` exits 2, naming `coda help run` (exit status
#     and stderr passed through);
#   - acpx runs one turn with `npx coda` as its agent (script model
#     acpx-turns.toml): the answer comes back answered;
#   - serving, a SIGTERM to the launcher reaches coda, which drains and
#     exits 143, and the launcher exits 143 with no coda left behind;
#   - coda killed by SIGKILL: the launcher dies of SIGKILL too (137);
#   - without the platform's package the launcher says so, exit 1.
#
#   scripts/interop/npm.sh
#
# Needs `npm ci` in scripts/interop first (for acpx), Go, GNU tar and gzip.
# Exits 0 when every check holds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
acpx=$here/node_modules/.bin/acpx
if [[ ! -x $acpx ]]; then
	echo "npm.sh: $acpx is missing: run npm ci in $here" >&2
	exit 2
fi
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) target=linux-x86_64 platform=linux-x64 ;;
Linux-aarch64 | Linux-arm64) target=linux-aarch64 platform=linux-arm64 ;;
Darwin-x86_64) target=darwin-x86_64 platform=darwin-x64 ;;
Darwin-arm64) target=darwin-aarch64 platform=darwin-arm64 ;;
*) echo "npm.sh: no coda target for $(uname -s) $(uname -m)" >&2; exit 2 ;;
esac
version=$(node -p 'require(process.argv[1]).version' "$root/agent.json")

work=$(mktemp -d "${TMPDIR:-/tmp}/coda-interop-npm.XXXXXX")
cleanup() {
	[[ -n ${coda_pid:-} ]] && kill -KILL "$coda_pid" 2>/dev/null
	[[ -n ${launcher_pid:-} ]] && kill -KILL "$launcher_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
# acpx splits --agent on spaces: the paths must have none.
for p in "$here" "$work"; do
	if [[ $p == *[[:space:]]* ]]; then
		echo "npm.sh: acpx cannot launch an agent from a path with spaces: $p" >&2
		exit 2
	fi
done

if ! DIST="$work/dist" TARGETS=$target bash "$root/scripts/release.sh" >"$work/release.log" 2>&1; then
	echo "FAIL: scripts/release.sh $target:"
	cat "$work/release.log"
	exit 1
fi

# No registry: a closed port, an empty cache, offline.
export npm_config_registry=http://127.0.0.1:9/
export npm_config_cache=$work/npm-cache
export npm_config_offline=true
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
mkdir "$work/tgz" "$work/app" "$work/state"
for pkg in coda-acp "coda-$platform"; do
	(cd "$work/dist/npm/$pkg" && npm pack --pack-destination "$work/tgz") >>"$work/pack.log" 2>&1 || {
		echo "FAIL: npm pack $pkg:"; cat "$work/pack.log"; exit 1
	}
done
echo '{"name": "coda-npm-check", "private": true}' >"$work/app/package.json"
if ! (cd "$work/app" && npm install "$work/tgz/coda-acp-$version.tgz" "$work/tgz/coda-acp-coda-$platform-$version.tgz") >"$work/install.log" 2>&1; then
	echo "FAIL: npm install of the packed tarballs (offline):"
	cat "$work/install.log"
	exit 1
fi
cd "$work/app"

failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

# The version, through npx.
out=$(npx --offline --no-install coda version 2>&1) || fail "npx coda version exited $?: $out"
[[ $out == *"$version"* ]] || fail "npx coda version printed \"$out\", want $version"

# As the ACP Registry starts it: npx with the package's name and version,
# which runs the package's one bin.
out=$(npx --offline --no-install "coda-acp@$version" version 2>&1) || fail "npx coda-acp@$version version exited $?: $out"
[[ $out == *"$version"* ]] || fail "npx coda-acp@$version version printed \"$out\", want $version"

# A usage error's status and words pass through.
status=0
npx --offline --no-install coda run --bogus x >"$work/bogus.out" 2>"$work/bogus.err" || status=$?
[[ $status -eq 2 ]] || fail "npx coda run --bogus x exited $status, want 2 (stderr: $(cat "$work/bogus.err"))"
grep -q 'coda help run' "$work/bogus.err" || fail "npx coda run --bogus x: stderr does not name \`coda help run\`: $(cat "$work/bogus.err")"
[[ ! -s $work/bogus.out ]] || fail "npx coda run --bogus x wrote to stdout: $(cat "$work/bogus.out")"

# One turn with acpx, the agent started by npx.
status=0
"$acpx" --approve-all --format json --timeout 60 --cwd "$work/app" \
	--agent "npx --offline --no-install coda --model script:$here/acpx-turns.toml --output-format json --state-dir $work/state" \
	exec 'Is the auth module safe?' >"$work/acpx.jsonl" 2>"$work/acpx.err" || status=$?
if [[ $status -ne 0 ]]; then
	fail "acpx with npx coda exited $status; stderr: $(cat "$work/acpx.err"); stdout: $(cat "$work/acpx.jsonl")"
else
	node - "$work/acpx.jsonl" <<'JS' || fail "acpx's turn through npx coda: $(cat "$work/acpx.jsonl")"
const fs = require("node:fs");
const lines = fs.readFileSync(process.argv[2], "utf8").split("\n").filter((l) => l.trim() !== "");
const last = JSON.parse(lines[lines.length - 1]);
const meta = last.result && last.result._meta && last.result._meta.coda;
if (!meta || meta.status !== "answered" || meta.finalOutput.content !== '{"safe": true}') {
  console.log("the prompt's result is not the answered turn:", JSON.stringify(last));
  process.exit(1);
}
JS
fi

# serve: the installed launcher serving, its stdin and stdout FIFOs held
# open on fds 3 and 4; it returns once coda has answered initialize (the
# read waits for that line), with launcher_pid and coda_pid set.
launcher=$work/app/node_modules/.bin/coda
mkfifo "$work/in" "$work/out"
serve() {
	exec 3<>"$work/in" 4<>"$work/out"
	"$launcher" --model "script:$here/acpx-turns.toml" --state-dir "$work/state" <"$work/in" >"$work/out" 2>"$work/serve.err" &
	launcher_pid=$!
	echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}' >&3
	local line=""
	read -r -t 60 line <&4 || true
	coda_pid=$(pgrep -P "$launcher_pid" || true)
	[[ $line == *'"id":0'* && -n $coda_pid ]]
}
stop_serving() {
	exec 3>&- 4<&-
	coda_pid= launcher_pid=
}

# Signals: a SIGTERM to the launcher reaches coda, which drains and exits
# 143; the launcher exits as coda did, leaving no coda behind.
if ! serve; then
	fail "the launcher started no serving coda (child \"$coda_pid\"): $(cat "$work/serve.err")"
else
	kill -TERM "$launcher_pid"
	status=0
	wait "$launcher_pid" 2>/dev/null || status=$?
	[[ $status -eq 143 ]] || fail "SIGTERM to the launcher: it exited $status, want 143 (coda's drain after SIGTERM); stderr: $(cat "$work/serve.err")"
	if kill -0 "$coda_pid" 2>/dev/null; then
		fail "coda ($coda_pid) is still running after its launcher exited"
	fi
fi
stop_serving

# coda killed outright: the launcher dies of the same signal.
if ! serve; then
	fail "the launcher started no serving coda: $(cat "$work/serve.err")"
else
	kill -KILL "$coda_pid"
	status=0
	wait "$launcher_pid" 2>/dev/null || status=$?
	[[ $status -eq 137 ]] || fail "coda killed by SIGKILL: the launcher exited $status, want 137 (killed by the same signal)"
fi
stop_serving

# Without the platform's package (installed with --omit=optional, or from
# another platform's lock), the launcher says what to do, exit 1.
mv "$work/app/node_modules/@coda-acp/coda-$platform" "$work/platform-package"
status=0
npx --offline --no-install coda version >"$work/missing.out" 2>"$work/missing.err" || status=$?
[[ $status -eq 1 ]] || fail "without @coda-acp/coda-$platform, npx coda version exited $status, want 1"
grep -q "@coda-acp/coda-$platform, which holds coda for $platform, is not installed" "$work/missing.err" ||
	fail "without @coda-acp/coda-$platform, the launcher said: $(cat "$work/missing.err")"
mv "$work/platform-package" "$work/app/node_modules/@coda-acp/coda-$platform"

[[ $failed -eq 0 ]] && echo "PASS: npm packages installed offline; npx coda: version, exit status, one acpx turn, signals"
exit "$failed"
