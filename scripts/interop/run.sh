#!/usr/bin/env bash
# run.sh: the interop check of coda with real ACP clients on Node — the official
# TypeScript SDK (sdk-client.mjs, sdk-ask.mjs) and acpx (acpx.sh, acpx-quiet.sh, acpx-session.sh, acpx-options.sh, acpx-ask.mjs). Go tests never need Node;
# this is run by hand or by CI that has Node and npm. mcp.sh adds coda with a
# real MCP server from npm (the reference "everything" server, pinned here and
# installed with the clients); npm.sh installs coda's own npm packages, as
# scripts/release.sh writes them, offline, and runs a turn through `npx coda`:
#
#   bash scripts/interop/run.sh
#
# Builds coda, installs the pinned clients with `npm ci`, runs each check, prints
# one PASS/FAIL line per check (with its output when it fails) and a closing
# "N passed, M failed". Exit status: 0 all passed, 1 a check or the build failed,
# 2 the clients could not be installed (npm registry unreachable, no npm).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/coda-interop.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! (cd "$root" && go build -o "$work/coda" ./cmd/coda) >"$work/build.log" 2>&1; then
	echo "FAIL: go build ./cmd/coda:"
	cat "$work/build.log"
	exit 1
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "interop: node and npm are needed to install the ACP clients; not found on PATH" >&2
	exit 2
fi
if ! (cd "$here" && npm ci --no-audit --no-fund) >"$work/npm.log" 2>&1; then
	echo "interop: npm ci failed in $here (is the npm registry reachable?); no check ran:" >&2
	tail -n 20 "$work/npm.log" >&2
	exit 2
fi

passed=0
failed=0
run_check() {
	local name=$1
	shift
	if "$@" >"$work/$name.log" 2>&1; then
		echo "PASS $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name"
		sed 's/^/    /' "$work/$name.log"
		failed=$((failed + 1))
	fi
}

run_check sdk-client node "$here/sdk-client.mjs" "$work/coda"
run_check sdk-ask node "$here/sdk-ask.mjs" "$work/coda"
run_check acpx bash "$here/acpx.sh" "$work/coda"
run_check acpx-quiet bash "$here/acpx-quiet.sh" "$work/coda"
run_check acpx-session bash "$here/acpx-session.sh" "$work/coda"
run_check acpx-options bash "$here/acpx-options.sh" "$work/coda"
run_check acpx-ask node "$here/acpx-ask.mjs" "$work/coda"
run_check mcp bash "$here/mcp.sh" "$work/coda"
run_check npm bash "$here/npm.sh"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
