#!/usr/bin/env bash
# grep.sh: coda's grep tool against GNU `grep -rn` over the same 50,000-file
# tree (engine/tools BenchmarkGrep_50k builds it once in $TMPDIR), measured
# in interleaved rounds so that a busy machine weighs on both alike:
#
#   bash scripts/bench/grep.sh [ROUNDS]        # default 7
#
# Prints each round's ns/op, then the medians and coda's ratio to grep -rn.
# Extra test binaries built with `go test -c` from other revisions (with the
# same benchmarks) can be compared too: GREP_BENCH_BINS="/path/a.test /path/b.test".
set -euo pipefail

rounds=${1:-7}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/coda-grepbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$root" && go test -c -o "$work/tools.test" ./engine/tools)
bins=("$work/tools.test" ${GREP_BENCH_BINS:-})

bench() { # bench BINARY NAME: one ns/op figure
	"$1" -test.run '^$' -test.bench "^$2\$" -test.benchtime 3x -test.count 1 2>/dev/null |
		awk -v name="$2" '$1 ~ "^"name"(-[0-9]+)?$" { print $3 }'
}

bench "${bins[0]}" BenchmarkGrep_50k_grepRN >/dev/null # build the tree, warm the page cache
for ((i = 1; i <= rounds; i++)); do
	line="round $i: grep -rn $(bench "${bins[0]}" BenchmarkGrep_50k_grepRN | tee -a "$work/ref")"
	for j in "${!bins[@]}"; do
		line+="  coda[$j] $(bench "${bins[$j]}" BenchmarkGrep_50k | tee -a "$work/coda$j")"
	done
	echo "$line"
done

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.0f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ref=$(median "$work/ref")
awk -v r="$ref" 'BEGIN { printf "median grep -rn: %.1f ms\n", r / 1e6 }'
for j in "${!bins[@]}"; do
	awk -v j="$j" -v bin="${bins[$j]}" -v m="$(median "$work/coda$j")" -v r="$ref" \
		'BEGIN { printf "median coda[%d] (%s): %.1f ms, %.2fx grep -rn\n", j, bin, m / 1e6, m / r }'
done
