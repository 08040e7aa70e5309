#!/bin/sh
# HEAPPROF_OOM against the kernel's OOM kill: oomleak (test/progs/oomleak.c) leaks RATE
# MB/s in 4 KiB blocks in a memory cgroup limited to LIMIT MiB (made under our own: v1
# or v2, root only), RUNS times, each under HEAPPROF_OOM=PERCENT. A run counts when the
# kernel killed the program, and it left exactly one .oom.snap (written under .part,
# renamed once complete) that heapprof-analyze reads with no warning and whose live
# bytes are at least 90% of the limit. Where no cgroup can be made, RLIMIT_AS (ulimit
# -v) stands in, and says so: the program then hears of the limit from malloc (exit 3),
# and the last snapshot, taken at that NULL, is the one counted.
#   sh bench/oom.sh BUILD [RUNS] [RATE] [LIMIT_MIB] [PERCENT] [THREADS]   (100 50 256 95 1)
# Prints one line per run that does not count, then a summary.
set -u
B=$(cd "${1:?usage: sh bench/oom.sh BUILD [RUNS] [RATE] [LIMIT_MIB] [PERCENT] [THREADS]}" && pwd) || exit 1
RUNS=${2:-100} RATE=${3:-50} LIMIT=$((${4:-256} << 20)) PCT=${5:-95} THREADS=${6:-1}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/helpers/memcg.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/hp-oombench.XXXXXX") || exit 1
trap 'memcg_drop; rm -rf "$W"' EXIT
${CC:-cc} -O2 -g -pthread -o "$W/oomleak" "$top/test/progs/oomleak.c" || exit 1

if memcg_make $LIMIT 2>"$W/why"; then
	memcg_drop
	how="memory cgroup $MEMCG_KIND"
else
	how="RLIMIT_AS (no memory cgroup: $(cat "$W/why"))"
fi
echo "# $RUNS runs: oomleak -r $RATE -t $THREADS, $((LIMIT >> 20)) MiB, $how, HEAPPROF_OOM=$PCT"

run()
{
	if [ "$how" = "${how#RLIMIT}" ]; then
		memcg_make $LIMIT || return 99
		memcg_run env HEAPPROF_OOM=$PCT HEAPPROF_OUTPUT="$W/o.%n.snap" \
			LD_PRELOAD="$B/heapprof.so" "$W/oomleak" -r "$RATE" -t "$THREADS" >"$W/out" 2>"$W/err"
		rc=$?
		kills=$(memcg_kills)
		memcg_drop
		[ $rc = 137 ] && [ "$kills" = 1 ]
	else
		(ulimit -v $((LIMIT >> 10)) && HEAPPROF_OOM=$PCT HEAPPROF_OUTPUT="$W/o.%n.snap" \
			LD_PRELOAD="$B/heapprof.so" exec "$W/oomleak" -r "$RATE" -t "$THREADS") >"$W/out" 2>"$W/err"
		rc=$? kills=
		[ $rc = 3 ]
	fi
}

good=0 n=0
: >"$W/fractions"
: >"$W/ms"
while [ $n -lt "$RUNS" ]; do
	n=$((n + 1))
	rm -f "$W"/o.*
	if ! run; then
		echo "run $n: ended with status $rc${kills:+, $kills OOM kills}: $(tail -n 3 "$W/err" | tr '\n' ' ')"
		continue
	fi
	set -- "$W"/o.*.oom.snap
	last=$(ls -v "$W"/o.*.oom.snap 2>/dev/null | tail -n 1)
	if [ ! -f "$1" ] || { [ "$how" = "${how#RLIMIT}" ] && [ $# != 1 ]; }; then
		echo "run $n: $# snapshots ($(ls "$W" | tr '\n' ' ')): $(tr '\n' ' ' <"$W/err")"
		continue
	fi
	live=$("$B/heapprof-analyze" -f json "$W/oomleak" "$last" 2>"$W/aerr" |
		sed -n 's/.*"live_bytes": \([0-9]*\).*/\1/p' | head -n 1)
	sed -n 's/.*written: .* in \([0-9.]*\) ms$/\1/p; s/.*written: .* in \([0-9.]*\) s$/\1000/p' \
		"$W/err" | tail -n 1 >>"$W/ms"
	if [ -s "$W/aerr" ] || [ -z "$live" ]; then
		echo "run $n: the analyzer said: $(head -n 3 "$W/aerr" | tr '\n' ' ')"
		continue
	fi
	echo "$live $LIMIT" | awk '{ printf "%.4f\n", $1 / $2 }' >>"$W/fractions"
	if [ $((live * 10)) -lt $((LIMIT * 9)) ]; then
		echo "run $n: live bytes $live, under 90% of $LIMIT"
		continue
	fi
	good=$((good + 1))
done
med() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
echo "complete snapshots holding >= 90% of the limit: $good of $RUNS"
echo "live bytes / limit, median (min-max): $(med <"$W/fractions")"
echo "snapshot write time, ms, median (min-max): $(med <"$W/ms")"
