#!/usr/bin/env bash
# acpx-quiet.sh: `acpx --format quiet exec` prints a turn's joined message
# text. coda streams the work as thoughts and sends the answer as the turn's
# only message, so what acpx prints is exactly the answer's bytes (acpx ends
# its output with a newline when the text has none): with commentary, with a
# reply taken as the answer, with a repair. With --commentary message the work
# is glued before the answer, as coda streamed it before: the control that
# shows the check can fail.
#
#   scripts/interop/acpx-quiet.sh [CODA_BIN]      (or CODA_BIN=... scripts/interop/acpx-quiet.sh)
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
	echo "acpx-quiet.sh: $acpx is missing: run npm ci in $here" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/coda-interop-quiet.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/state" "$work/cwd"
# One script model a case, cut from acpx-quiet-turns.toml at its "## CASE" lines.
awk -v dir="$work" '/^## [a-z]+:/ { name = substr($2, 1, length($2) - 1); out = dir "/" name ".toml" } out { print > out }' "$here/acpx-quiet-turns.toml"

failed=0
# quiet CASE FORMAT WANT [FLAGS...]: acpx's stdout must be WANT, then a
# newline unless WANT ends with one.
quiet() {
	local name=$1 format=$2 want=$3
	shift 3
	local status=0
	"$acpx" --approve-all --format quiet --timeout 30 --cwd "$work/cwd" \
		--agent "$coda --model script:$work/$name.toml --output-format $format --state-dir $work/state $*" \
		exec 'Is the auth module safe?' >"$work/$name.out" 2>"$work/$name.err" || status=$?
	if [[ $status -ne 0 ]]; then
		echo "FAIL $name $*: acpx exited $status"
		sed 's/^/    /' "$work/$name.err"
		failed=1
		return
	fi
	if [[ $want == *$'\n' ]]; then
		printf '%s' "$want" >"$work/$name.want"
	else
		printf '%s\n' "$want" >"$work/$name.want"
	fi
	if cmp -s "$work/$name.out" "$work/$name.want"; then
		echo "ok - $name $*: acpx --format quiet prints $(printf '%q' "$want")"
	else
		echo "FAIL $name $*: acpx --format quiet printed $(od -c "$work/$name.out" | head -5), want $(printf '%q' "$want")"
		failed=1
	fi
}

quiet commentary json '{"safe": true}'
quiet reply yaml $'files:\n  - a.go'
quiet repair yaml $'files:\n  - a.go\n'
quiet commentary json 'Checking the module.{"safe": true}' --commentary message
# A turn without an answer prints nothing but acpx's closing newline: its
# reason is a thought and _meta, never the message text a script reads as
# the answer.
quiet unavailable json ''
exit $failed
