#!/bin/sh
# Many dumps, one report: heapprof-analyze's peak RSS and wall time against the number
# of dumps it merges. Snapshots at exit of bigheap -D (300 distinct stacks 25-40 frames
# deep, log-uniform sizes): small ones (-n 2000, ~1.5 MB of heap) read 10, 100 and
# 1,000 at a time, and ~100 MB heaps (-n 135000) read 1, 5 and 20 at a time.
#   sh bench/fleet.sh BUILD [SMALL_MAX] [BIG_MAX]   (BUILD holds heapprof.so and
#                                                   heapprof-analyze; 1000 and 20)
# Each size runs DISTINCT programs (10 small, 5 big) and names their snapshots again
# (hard links) up to the count: the analyzer reads every name as a dump of its own, and
# the disk holds only the distinct ones. Peak RSS from GNU time (%M), -j 2 (this
# machine's CPUs). Prints a markdown table. Files go to $TMPDIR (default /tmp).
set -u
B=$(cd "${1:?usage: sh bench/fleet.sh BUILD [SMALL_MAX] [BIG_MAX]}" && pwd) || exit 1
SMALL_MAX=${2:-1000}
BIG_MAX=${3:-20}
top=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/hp-fleetbench.XXXXXX") || exit 1
trap '[ -n "${KEEPW:-}" ] || rm -rf "$W"' EXIT
[ -x /usr/bin/time ] || { echo "skipped: no GNU time (/usr/bin/time)"; exit 0; }
${CC:-cc} -O2 -g -I"$top/include" -o "$W/bigheap" "$top/bench/bigheap.c" -lm || exit 1
cd "$W" || exit 1

# snap KIND N BLOCKS: N runs of bigheap -D -n BLOCKS, snapshotted at exit as KIND.I.snap
snap()
{
	i=1
	while [ $i -le "$2" ]; do
		HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$1.$i.snap LD_PRELOAD=$B/heapprof.so \
			./bigheap -D -n "$3" >/dev/null || exit 1
		i=$((i + 1))
	done
}

# names KIND DISTINCT COUNT: COUNT names of the DISTINCT snapshots, round robin
names()
{
	rm -rf "n.$1" && mkdir "n.$1" && i=1
	while [ $i -le "$3" ]; do
		ln "$1.$(((i - 1) % $2 + 1)).snap" "n.$1/$i.snap" || exit 1
		i=$((i + 1))
	done
}

# row KIND DISTINCT COUNT: one merged report of COUNT dumps, its peak RSS and time
row()
{
	names "$1" "$2" "$3"
	set -- "$1" "$2" "$3" $(du -sk "$1".*.snap | awk '{ s += $1 } END { print int(s / 1024 / '"$2"') }')
	/usr/bin/time -f "%M %e" -o t.out "$B/heapprof-analyze" -q -j 2 -f json ./bigheap \
		n."$1"/*.snap >r.json 2>r.err || { cat r.err; exit 1; }
	read kb s <t.out
	merged=$(grep -o '"merged": [0-9]*' r.json | grep -o '[0-9]*$')
	echo "| $3 | $4 MB | $merged | $((kb / 1024)) MiB | $s s |"
}

snap small 10 2000
snap big 5 135000
echo "| dumps | each (on disk) | merged | peak RSS | wall |"
echo "|---:|---:|---:|---:|---:|"
for n in 10 100 $SMALL_MAX; do row small 10 "$n"; done
for n in 1 5 $BIG_MAX; do
	[ "$n" -gt 1 ] || { names big 5 1;
		/usr/bin/time -f "%M %e" -o t.out "$B/heapprof-analyze" -q -j 2 -f json ./bigheap \
			n.big/1.snap >/dev/null && read kb s <t.out &&
		echo "| 1 (one dump, as today) | $(du -k big.1.snap | awk '{ print int($1 / 1024) }') MB | - | $((kb / 1024)) MiB | $s s |"; continue; }
	row big 5 "$n"
done
