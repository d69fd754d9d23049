#!/usr/bin/env bash
# answers.sh: issue 14's YAML line as whole `coda run`s. The script model
# submits the same findings data (outputspec's sameFindings shape, as many
# findings as keep both answers under the 256 KiB cap) as YAML and as JSON,
# each checked against outputspec/testdata/schemas/findings.json, and a tiny
# one-finding YAML answer against the same schema as the floor (start-up,
# the engine, the run record):
#
#   bash scripts/bench/answers.sh [ROUNDS]        # default 7
#
# coda is built from this tree with CGO_ENABLED=0; the answers, scripts and
# run records live in a temporary directory under $TMPDIR. Each round runs
# tiny, yaml and json one after the other (interleaved, so a busy machine
# weighs on all alike), each $ANSWERS_BENCH_RUNS times (default 10), and
# prints per run: wall ms, and CPU ms (user+sys of coda, which counts the
# garbage collector's threads). Then, on the medians of the rounds:
#
#   check ratio = (yaml - tiny) / (json - tiny)   what the YAML answer costs
#                                                  over the JSON one: issue
#                                                  14's target is <= 1.4
#   whole ratio = yaml / json                      the runs as a user waits
#
# CPU is the steadier figure on a shared machine; wall is what a user sees.
# Other coda binaries (another revision, built the same way) are measured in
# the same rounds with ANSWERS_BENCH_BINS="/path/a/coda /path/b/coda".
set -euo pipefail

rounds=${1:-7}
runs=${ANSWERS_BENCH_RUNS:-10}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/coda-answersbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$work/coda" ./cmd/coda)
bins=("$work/coda" ${ANSWERS_BENCH_BINS:-})
schema="$root/outputspec/testdata/schemas/findings.json"

# The answers, written as outputspec's sameFindings writes them.
awk -v cap=262144 -v yaml="$work/answer.yaml" -v json="$work/answer.json" 'BEGIN {
	msg = "the value is read before it is checked"
	ys = "title: A long review\nfindings:\n"
	js = "{\"title\": \"A long review\", \"findings\": ["
	for (i = 1; ; i++) {
		y = sprintf("  - severity: medium\n    line: %d\n    message: %s\n", i, msg)
		j = sprintf("%s{\"severity\": \"medium\", \"line\": %d, \"message\": \"%s\"}", i > 1 ? ", " : "", i, msg)
		if (length(ys y) > cap || length(js j "]}") > cap) break
		ys = ys y; js = js j
	}
	printf "%s", ys > yaml
	printf "%s]}", js > json
	printf "%d findings\n", i - 1
}'
printf 'title: A long review\nfindings:\n  - severity: medium\n    line: 1\n    message: the value is read before it is checked\n' >"$work/answer.tiny"
for a in tiny yaml json; do
	{
		printf '[[turn]]\n[[turn.tool_calls]]\nname = "submit_output"\n[turn.tool_calls.arguments]\ncontent = '"'''"'\n'
		cat "$work/answer.$a"
		printf "'''\n"
	} >"$work/$a.toml"
done
echo "answers: yaml $(wc -c <"$work/answer.yaml") bytes, json $(wc -c <"$work/answer.json") bytes, tiny $(wc -c <"$work/answer.tiny") bytes"

run() { # run BINARY ANSWER: one coda run, its answer checked
	local format=yaml
	[[ $2 == json ]] && format=json
	"$1" run --model "script:$work/$2.toml" --output-format "$format" --output-schema "@$schema" \
		--cwd "$work" --state-dir "$work/state" --raw "Review the module." >/dev/null 2>"$work/stderr" ||
		{ cat "$work/stderr" >&2; exit 1; }
}

measure() { # measure BINARY ANSWER: "wall_ms cpu_ms" per run over $runs runs
	local TIMEFORMAT='%3R %3U %3S' t
	t=$({ time (for ((k = 0; k < runs; k++)); do run "$1" "$2"; done); } 2>&1)
	awk -v t="$t" -v n="$runs" 'BEGIN { split(t, f, " "); printf "%.1f %.1f", f[1] * 1000 / n, (f[2] + f[3]) * 1000 / n }'
}

for j in "${!bins[@]}"; do run "${bins[$j]}" tiny; run "${bins[$j]}" yaml; run "${bins[$j]}" json; done # warm up
for ((i = 1; i <= rounds; i++)); do
	for j in "${!bins[@]}"; do
		line="round $i coda[$j]:"
		for a in tiny yaml json; do
			m=$(measure "${bins[$j]}" "$a")
			echo "$m" >>"$work/$j.$a"
			line+="  $a ${m% *} ms (cpu ${m#* })"
		done
		echo "$line"
	done
	rm -rf "$work/state"
done

median() { # median FILE COLUMN
	awk -v c="$2" '{ print $c }' "$1" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for j in "${!bins[@]}"; do
	for col in 1 2; do
		what=wall
		[[ $col == 2 ]] && what=cpu
		awk -v j="$j" -v bin="${bins[$j]}" -v what="$what" \
			-v t="$(median "$work/$j.tiny" $col)" -v y="$(median "$work/$j.yaml" $col)" -v s="$(median "$work/$j.json" $col)" \
			'BEGIN { printf "median coda[%d] %s (%s): tiny %.1f ms, yaml %.1f ms, json %.1f ms; check ratio (yaml-tiny)/(json-tiny) %.2f, whole yaml/json %.2f\n",
				j, what, bin, t, y, s, (y - t) / (s - t), y / s }'
	done
done
