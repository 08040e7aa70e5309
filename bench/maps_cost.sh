#!/bin/sh
# What the map table costs each mmap + munmap pair (preload/maps.c): bench/mapchurn's
# ns per pair (mmap of 64 KiB, one page touched, munmap) without heapprof.so, with it
# (HEAPPROF_MAPS's default) and with HEAPPROF_MAPS=0 (the calls pass through), with 0
# and with KEEP (10000) other mappings in the table; the median of REPS (5) alternating
# runs of each, and the ratios to the run without heapprof.so.
#   sh bench/maps_cost.sh [BUILD_DIR]     (default build; make it first)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build}
REPS=${REPS:-5}
KEEP=${KEEP:-10000}
PAIRS=${PAIRS:-100000}
${CC:-cc} -O2 -g -o "$B/mapchurn" "$top/bench/mapchurn.c" || exit 2

median()
{
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

for keep in 0 "$KEEP"; do
	for v in without with maps0; do : >"$B/mapchurn.$v"; done
	i=0
	while [ $i -lt "$REPS" ]; do
		"$B/mapchurn" -n "$PAIRS" -k "$keep" >>"$B/mapchurn.without"
		LD_PRELOAD=$B/heapprof.so "$B/mapchurn" -n "$PAIRS" -k "$keep" >>"$B/mapchurn.with"
		HEAPPROF_MAPS=0 LD_PRELOAD=$B/heapprof.so "$B/mapchurn" -n "$PAIRS" -k "$keep" \
			>>"$B/mapchurn.maps0"
		i=$((i + 1))
	done
	w=$(median <"$B/mapchurn.without")
	h=$(median <"$B/mapchurn.with")
	z=$(median <"$B/mapchurn.maps0")
	awk -v k="$keep" -v w="$w" -v h="$h" -v z="$z" 'BEGIN {
		printf "%6d mappings kept: %8.1f ns a pair without heapprof.so, %8.1f with (%.2fx), %8.1f with HEAPPROF_MAPS=0 (%.2fx)\n",
			k, w, h, h / w, z, z / w }'
done
