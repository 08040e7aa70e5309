#!/bin/sh
# The heap graph's targets: on gibheap (1 GiB in ~730k blocks), --leaks, --memory and
# --metric=retained_space together against the plain report (time; peak RSS per block
# beyond it); on randheap (300,000 64-byte blocks, 2.4 million random pointers),
# retained sizes against --leaks. Each figure is the median of RUNS runs under
# /usr/bin/time -v, page cache warm, all in this one run.
#   sh bench/graph.sh BIN [RUNS]   (BIN holds heapprof.so, heapprof-analyze, gibheap,
#                                   randheap; RUNS defaults to 3)
set -u
BIN=$1
RUNS=${2:-3}
W=${TMPDIR:-/tmp}/hp-graph.$$
mkdir -p "$W" || exit 1
trap 'rm -rf "$W"' EXIT

command -v gcore >/dev/null || { echo "skipped: no gcore"; exit 0; }
[ -x /usr/bin/time ] || { echo "skipped: no /usr/bin/time"; exit 0; }

# core PROGRAM ARGS... -> $W/PROGRAM.core, once the program says ready
core() {
	name=$1
	shift
	LD_PRELOAD=$BIN/heapprof.so "$BIN/$name" "$@" >"$W/$name.out" 2>&1 &
	pid=$!
	i=0
	while ! grep -q ready "$W/$name.out" 2>/dev/null && [ $i -lt 900 ]; do sleep 0.2; i=$((i + 1)); done
	gcore -o "$W/$name.core" $pid >/dev/null 2>&1
	kill $pid
	wait $pid 2>/dev/null
	mv "$W/$name.core.$pid" "$W/$name.core"
}

# timed PROGRAM ARGS... -> "seconds maxrss_kb", medians of RUNS runs
timed() {
	name=$1
	shift
	: >"$W/t"
	for r in $(seq "$RUNS"); do
		/usr/bin/time -v -o "$W/v" "$BIN/heapprof-analyze" -q -o /dev/null "$@" \
			"$BIN/$name" "$W/$name.core" || echo "heapprof-analyze $* failed" >&2
		awk '/Elapsed \(wall clock\)/ { n = split($NF, a, ":"); s = a[n] + (n > 1 ? 60 * a[n - 1] : 0) }
			/Maximum resident set size/ { m = $NF } END { print s, m }' "$W/v" >>"$W/t"
	done
	h=$(((RUNS + 1) / 2))
	echo "$(awk '{ print $1 }' "$W/t" | sort -n | sed -n "${h}p")" \
		"$(awk '{ print $2 }' "$W/t" | sort -n | sed -n "${h}p")"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

core gibheap -h
blocks=$(sed -n 's/^\([0-9]*\) blocks.*/\1/p' "$W/gibheap.out")
set -- $(timed gibheap)
plain_s=$1 plain_kb=$2
set -- $(timed gibheap --leaks --memory --metric=retained_space)
all_s=$1 all_kb=$2
set -- $(timed gibheap --leaks)
leaks_s=$1 leaks_kb=$2
set -- $(timed gibheap --memory)
mem_s=$1 mem_kb=$2
set -- $(timed gibheap --metric=retained_space)
ret_s=$1 ret_kb=$2
rm -f "$W/gibheap.core"
echo "gibheap: $blocks blocks; median of $RUNS runs each (/usr/bin/time -v), warm page cache"
echo ""
echo "| heapprof-analyze on gibheap's core | time | peak RSS | time / plain | RSS beyond plain per block |"
echo "|---|---|---|---|---|"
row() { # LABEL SECONDS KB
	echo "| $1 | $2 s | $(($3 / 1024)) MiB | $(ratio "$2" "$plain_s") | $(awk -v k="$3" -v p="$plain_kb" -v n="$blocks" 'BEGIN { if (n > 0) printf "%.0f bytes", (k - p) * 1024 / n }') |"
}
row "plain report" "$plain_s" "$plain_kb"
row "--leaks" "$leaks_s" "$leaks_kb"
row "--memory" "$mem_s" "$mem_kb"
row "--metric=retained_space" "$ret_s" "$ret_kb"
row "--leaks --memory --metric=retained_space (target: <= 3x, <= 64 bytes)" "$all_s" "$all_kb"

core randheap
set -- $(timed randheap)
rplain_s=$1
set -- $(timed randheap --leaks)
rleaks_s=$1
set -- $(timed randheap --metric=retained_space)
rret_s=$1
echo ""
echo "randheap: 300,000 64-byte blocks, 2.4 million random pointers; median of $RUNS runs"
echo ""
echo "| heapprof-analyze on randheap's core | time | / --leaks |"
echo "|---|---|---|"
echo "| plain report | $rplain_s s | $(ratio "$rplain_s" "$rleaks_s") |"
echo "| --leaks | $rleaks_s s | 1.00x |"
echo "| --metric=retained_space (target: <= 2x --leaks) | $rret_s s | $(ratio "$rret_s" "$rleaks_s") |"
