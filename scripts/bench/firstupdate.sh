#!/usr/bin/env bash
# firstupdate.sh: a turn's first update with its run record against without
# (engine BenchmarkRun_firstUpdate; issue 14: with records ≤ 1.2× without),
# its sub-benchmarks run alternately, each in a process of its own, so that
# a busy machine weighs on all alike:
#
#   bash scripts/bench/firstupdate.sh [ROUNDS]        # default 7
#
# Each figure is the median first update of a run's turns; the script prints
# each round's, then the median of the rounds for each sub-benchmark and the
# ratios of records=on to its references (see the benchmark's comment):
#   on / off                     back to back, the previous turn's record written just before
#   on / off,disk-between        the reference that writes as much between its turns
#   on,after-idle / off,after-idle  each turn after 20 ms idle, as an editor's user sends it
# TURNS (default 2000) and IDLE_TURNS (default 100) set the turns per run.
set -euo pipefail

rounds=${1:-7}
turns=${TURNS:-2000}
idle_turns=${IDLE_TURNS:-100}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/coda-firstupdate.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$root" && go test -c -o "$work/engine.test" ./engine)
modes=(off off,disk-between on off,after-idle on,after-idle)

bench() { # bench MODE: the run's median first update in ns, and the heap objects allocated by then
	local n=$turns
	[[ $1 == *,after-idle ]] && n=$idle_turns
	(cd "$work" && "$work/engine.test" -test.run '^$' -test.bench "^BenchmarkRun_firstUpdate\$/^records=$1\$" \
		-test.benchtime "${n}x" -test.count 1 2>/dev/null) |
		awk -v name="BenchmarkRun_firstUpdate/records=$1" '$1 ~ "^"name"(-[0-9]+)?$" {
			for (i = 3; i < NF; i++) {
				if ($(i + 1) == "first-update-ns") ns = $i
				if ($(i + 1) == "first-update-allocs") allocs = $i
			}
			print ns, allocs
		}'
}

for ((r = 1; r <= rounds; r++)); do
	order=("${modes[@]}")
	if ((r % 2 == 0)); then # every other round backwards, so no mode always runs first
		order=()
		for ((k = ${#modes[@]} - 1; k >= 0; k--)); do order+=("${modes[$k]}"); done
	fi
	line="round $r:"
	for m in "${order[@]}"; do
		read -r v allocs < <(bench "$m")
		[[ -n ${v:-} ]] || { echo "no figure from records=$m" >&2; exit 1; }
		echo "$v" >>"$work/$m"
		echo "$allocs" >"$work/$m.allocs"
		line+="  $m $v"
	done
	echo "$line"
done

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.6g", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A med
for m in "${modes[@]}"; do
	med[$m]=$(median "$work/$m")
	printf 'median records=%-18s %8.2f µs  (%s heap objects before it)\n' "$m" "$(awk -v v="${med[$m]}" 'BEGIN { print v / 1e3 }')" "$(cat "$work/$m.allocs")"
done
# ratio A B LABEL: the ratio of the medians, and the median of the rounds'
# own ratios (each round runs A and B side by side).
ratio() {
	local per
	per=$(paste "$work/$1" "$work/$2" | awk '{ print $1 / $2 }' >"$work/ratio" && median "$work/ratio")
	awk -v a="${med[$1]}" -v b="${med[$2]}" -v l="$3" -v per="$per" \
		'BEGIN { printf "%-34s %.2fx  (median of the rounds\047 ratios %.2fx)\n", l, a / b, per }'
}
ratio on off "on / off (back to back):"
ratio on off,disk-between "on / off,disk-between:"
ratio on,after-idle off,after-idle "on,after-idle / off,after-idle:"
