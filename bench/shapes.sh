#!/bin/sh
# The heap graph's worst shapes (test/progs/shapes.c, built here): retained_space on
# lists of 100,000, 300,000 and 1,000,000 nodes pointing back to their owner, then
# the plain report, retained_space and --why on a chain of 10,000,000 blocks (a 465 MB
# core) and --why's 20 default paths through a chain of 1,000,000. Wall time, CPU
# and peak RSS of one run each (/usr/bin/time -v, page cache warm); with OLD, another
# heapprof-analyze run on the same cores in turn, each of its runs cut at CUT seconds.
#   sh bench/shapes.sh BIN [OLD [CUT]]   (BIN holds heapprof.so and heapprof-analyze;
#                                         CUT defaults to 120)
set -u
BIN=$1
OLD=${2:-}
CUT=${3:-120}
top=$(cd "$(dirname "$0")/.." && pwd)
W=${TMPDIR:-/tmp}/hp-shapes.$$
mkdir -p "$W" || exit 1
trap 'rm -rf "$W"' EXIT

command -v gcore >/dev/null || { echo "skipped: no gcore"; exit 0; }
[ -x /usr/bin/time ] || { echo "skipped: no /usr/bin/time"; exit 0; }
${CC:-cc} -O2 -g -fno-ipa-icf -o "$W/shapes" "$top/test/progs/shapes.c" || exit 1

# core NAME SHAPE N -> $W/NAME.core, once shapes says ready
core() {
	LD_PRELOAD=$BIN/heapprof.so "$W/shapes" "$2" "$3" >"$W/$1.out" 2>&1 &
	pid=$!
	i=0
	while ! grep -q ready "$W/$1.out" 2>/dev/null && [ $i -lt 900 ]; do sleep 0.2; i=$((i + 1)); done
	gcore -o "$W/$1.core" $pid >/dev/null 2>&1
	kill $pid
	wait $pid 2>/dev/null
	mv "$W/$1.core.$pid" "$W/$1.core"
}

# one ANALYZER CORE ARGS...: "seconds s, cpu s CPU, N MiB" of one run, or "> CUT s"
# when cut, or "failed"; the report to /dev/null
one() {
	a=$1 c=$2
	shift 2
	timeout "$CUT" /usr/bin/time -v -o "$W/v" "$a" -q "$@" "$W/shapes" "$W/$c.core" \
		>/dev/null 2>"$W/err"
	rc=$?
	if [ $rc = 124 ]; then
		echo "> $CUT s (cut)"
	elif [ $rc != 0 ]; then
		echo "failed ($rc): $(tail -n 1 "$W/err")"
	else
		awk '/Elapsed \(wall clock\)/ { n = split($NF, a, ":"); s = a[n] + (n > 1 ? 60 * a[n - 1] : 0) }
			/User time|System time/ { c += $NF }
			/Maximum resident set size/ { m = $NF }
			END { printf "%.2f s, %.2f s CPU, %d MiB\n", s, c, m / 1024 }' "$W/v"
	fi
}

# row CORE LABEL ARGS...: this build, then OLD's
row() {
	c=$1 label=$2
	shift 2
	new=$(one "$BIN/heapprof-analyze" "$c" "$@")
	if [ -n "$OLD" ]; then
		echo "| $c | $label | $new | $(one "$OLD" "$c" "$@") |"
	else
		echo "| $c | $label | $new |"
	fi
}

echo "heapprof-analyze on test/progs/shapes' cores, one run each; load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo ""
if [ -n "$OLD" ]; then
	echo "| core | analysis | this build | $OLD |"
	echo "|---|---|---|---|"
else
	echo "| core | analysis | this build |"
	echo "|---|---|---|"
fi
for n in 100000 300000 1000000; do
	core backlist$n backlist $n
	row backlist$n "--metric=retained_space" --metric=retained_space -o /dev/null
	rm -f "$W/backlist$n.core"
done
core chain1000000 chain 1000000
row chain1000000 "--why=new_link (20 paths)" --why=new_link -o /dev/null
rm -f "$W/chain1000000.core"
core chain10000000 chain 10000000
row chain10000000 "plain report" -o /dev/null
row chain10000000 "--metric=retained_space" --metric=retained_space -o /dev/null
row chain10000000 "--why=new_tail (1 path)" --why=new_tail -o /dev/null
echo ""
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
