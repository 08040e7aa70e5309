#!/bin/sh
# The heap graph's targets: on gibheap (1 GiB in ~730k blocks), --leaks, --memory and
# --metric=retained_space together against the plain report (time; peak RSS per block
# beyond it); on randheap (300,000 64-byte blocks, 2.4 million random pointers),
# retained sizes against --leaks. Each figure is the median of RUNS runs under
# /usr/bin/time -v, page cache warm, all in this one run, the configurations in turn.
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

# run PROGRAM LABEL ARGS...: one run, "seconds maxrss_kb cpu_seconds" appended to $W/LABEL
run() {
	name=$1 label=$2
	shift 2
	/usr/bin/time -v -o "$W/v" "$BIN/heapprof-analyze" -q -o /dev/null "$@" \
		"$BIN/$name" "$W/$name.core" || echo "heapprof-analyze $* failed" >&2
	awk '/Elapsed \(wall clock\)/ { n = split($NF, a, ":"); s = a[n] + (n > 1 ? 60 * a[n - 1] : 0) }
		/User time|System time/ { c += $NF }
		/Maximum resident set size/ { m = $NF } END { print s, m, c }' "$W/v" >>"$W/$label"
}

# median LABEL -> "seconds maxrss_kb cpu_seconds", each the median of the runs kept
# under LABEL (CPU: user + sys, all threads)
median() {
	h=$(((RUNS + 1) / 2))
	echo "$(awk '{ print $1 }' "$W/$1" | sort -n | sed -n "${h}p")" \
		"$(awk '{ print $2 }' "$W/$1" | sort -n | sed -n "${h}p")" \
		"$(awk '{ print $3 }' "$W/$1" | sort -n | sed -n "${h}p")"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

core gibheap -h
blocks=$(sed -n 's/^\([0-9]*\) blocks.*/\1/p' "$W/gibheap.out")
# in rounds, each configuration once a round: a load that comes and goes on a shared
# machine weighs on all of them alike
for r in $(seq "$RUNS"); do
	run gibheap plain
	run gibheap all --leaks --memory --metric=retained_space
	run gibheap leaks --leaks
	run gibheap mem --memory
	run gibheap ret --metric=retained_space
done
set -- $(median plain)
plain_s=$1 plain_kb=$2 plain_cpu=$3
set -- $(median all)
all_s=$1 all_kb=$2 all_cpu=$3
set -- $(median leaks)
leaks_s=$1 leaks_kb=$2 leaks_cpu=$3
set -- $(median mem)
mem_s=$1 mem_kb=$2 mem_cpu=$3
set -- $(median ret)
ret_s=$1 ret_kb=$2 ret_cpu=$3
rm -f "$W/gibheap.core"
echo "gibheap: $blocks blocks; median of $RUNS rounds, each configuration once a round (/usr/bin/time -v), warm page cache; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo ""
echo "| heapprof-analyze on gibheap's core | time | CPU | peak RSS | time / plain | CPU / plain | RSS beyond plain per block |"
echo "|---|---|---|---|---|---|---|"
row() { # LABEL SECONDS KB CPU
	echo "| $1 | $2 s | $4 s | $(($3 / 1024)) MiB | $(ratio "$2" "$plain_s") | $(ratio "$4" "$plain_cpu") | $(awk -v k="$3" -v p="$plain_kb" -v n="$blocks" 'BEGIN { if (n > 0) printf "%.0f bytes", (k - p) * 1024 / n }') |"
}
row "plain report" "$plain_s" "$plain_kb" "$plain_cpu"
row "--leaks" "$leaks_s" "$leaks_kb" "$leaks_cpu"
row "--memory" "$mem_s" "$mem_kb" "$mem_cpu"
row "--metric=retained_space" "$ret_s" "$ret_kb" "$ret_cpu"
row "--leaks --memory --metric=retained_space (target: <= 3x, <= 64 bytes)" "$all_s" "$all_kb" "$all_cpu"

core randheap
for r in $(seq "$RUNS"); do
	run randheap rplain
	run randheap rleaks --leaks
	run randheap rret --metric=retained_space
done
set -- $(median rplain)
rplain_s=$1 rplain_cpu=$3
set -- $(median rleaks)
rleaks_s=$1 rleaks_cpu=$3
set -- $(median rret)
rret_s=$1 rret_cpu=$3
echo ""
echo "randheap: 300,000 64-byte blocks, 2.4 million random pointers; median of $RUNS rounds; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo ""
echo "| heapprof-analyze on randheap's core | time | CPU | time / --leaks | CPU / --leaks |"
echo "|---|---|---|---|---|"
echo "| plain report | $rplain_s s | $rplain_cpu s | $(ratio "$rplain_s" "$rleaks_s") | $(ratio "$rplain_cpu" "$rleaks_cpu") |"
echo "| --leaks | $rleaks_s s | $rleaks_cpu s | 1.00x | 1.00x |"
echo "| --metric=retained_space (target: <= 2x --leaks) | $rret_s s | $rret_cpu s | $(ratio "$rret_s" "$rleaks_s") | $(ratio "$rret_cpu" "$rleaks_cpu") |"
