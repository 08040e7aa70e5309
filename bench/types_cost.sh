#!/bin/sh
# What --by=type costs over the plain report (issue 34's target: at most 1.3x): the
# benchmark heap of bench/run's core4g (`gibheap -m MIB` under heapprof.so, gcore'd
# and written back), then rounds of `heapprof-analyze -q -o /dev/null gibheap CORE`
# and the same with --by=type, alternating; the ratio taken per round.
#   sh bench/types_cost.sh [BUILD [MIB [OLD_BUILD]]]     (default build, 4096)
# OLD_BUILD: another build's analyzer timed in the same rounds on the same core (before
# and after a change, in one run); the core is made with BUILD's heapprof.so.
# COST_REPS (7): rounds; COST_HEAP: more options for gibheap (-p: every block starts
# with a different word, a pointer). Needs gcore; the core is removed at the end.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd) || exit 2
MIB=${2:-4096}
OLD=
[ $# -ge 3 ] && { OLD=$(cd "$3" && pwd)/heapprof-analyze || exit 2; }
REPS=${COST_REPS:-7}
W=${TMPDIR:-/tmp}/types_cost.$$
ANALYZE=$B/heapprof-analyze
say() { printf '%s\n' "$*" >&2; }

[ -x "$ANALYZE" ] && [ -f "$B/heapprof.so" ] || { say "types_cost: build $B first (make)"; exit 2; }
command -v gcore >/dev/null || { say "types_cost: no gcore"; exit 2; }
mkdir -p "$W" || exit 2
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -g -I"$top/include" -o "$W/gibheap" "$top/bench/gibheap.c" -lm ||
	{ say "types_cost: cannot build bench/gibheap.c"; exit 2; }
LD_PRELOAD=$B/heapprof.so "$W/gibheap" -m "$MIB" ${COST_HEAP:-} -h >"$W/g.out" 2>&1 &
pid=$!
i=0
while ! grep -q ready "$W/g.out" 2>/dev/null && [ $i -lt 1500 ]; do sleep 0.2; i=$((i + 1)); done
if ! grep -q ready "$W/g.out" || ! gcore -o "$W/g.core" $pid >/dev/null 2>&1; then
	say "types_cost: no core (gibheap -m $MIB did not get ready, or gcore failed)"
	kill $pid
	exit 2
fi
kill $pid
wait $pid 2>/dev/null
core=$W/g.core.$pid
sync
cat "$core" >/dev/null
"$ANALYZE" -o "$W/plain.report" "$W/gibheap" "$core" 2>"$W/err" &&
	"$ANALYZE" --by=type -o "$W/types.report" "$W/gibheap" "$core" 2>>"$W/err" ||
	{ say "types_cost: heapprof-analyze failed: $(tail -n 1 "$W/err")"; exit 2; }

if [ -n "$OLD" ]; then
	"$OLD" --by=type -o "$W/old.report" "$W/gibheap" "$core" 2>>"$W/err" ||
		{ say "types_cost: $OLD failed: $(tail -n 1 "$W/err")"; exit 2; }
	cmp -s "$W/old.report" "$W/types.report" || say "types_cost: the two builds' tables differ"
fi

# one timed run of analyzer $1: "wall_s cpu_s peak_rss_mib"
timed()
{
	a=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$W/time" "$a" -q -o /dev/null "$@" "$W/gibheap" "$core" ||
		{ echo "0 0 0"; return; }
	awk '{ printf "%s %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$W/time"
}
: >"$W/times"
: >"$W/old.times"
for r in $(seq "$REPS"); do
	[ -z "$OLD" ] || echo "$(timed "$OLD") $(timed "$OLD" --by=type)" >>"$W/old.times"
	echo "$(timed "$ANALYZE") $(timed "$ANALYZE" --by=type)" >>"$W/times"
done
med() { sort -n | awk '{ t[NR] = $1 } END { printf "%.2f (%.2f–%.2f)", t[int((NR + 1) / 2)], t[1], t[NR] }'; }
echo "core: $(stat -c %s "$core") bytes, $(grep -E '^ *live:' "$W/plain.report" | sed 's/^ *live: *//')"
echo "by type: $(sed -n 2,4p "$W/types.report" | tr -s ' ' | paste -sd';' -)"
echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $REPS rounds of the plain report then --by=type${OLD:+, OLD_BUILD's then BUILD's}"
# figures NAME TIMES: the medians of one build's rounds
figures()
{
	echo "${1}plain, wall s: $(awk '{ print $1 }' "$2" | med)"
	echo "${1}--by=type, wall s: $(awk '{ print $4 }' "$2" | med)"
	echo "${1}plain, CPU s: $(awk '{ print $2 }' "$2" | med)"
	echo "${1}--by=type, CPU s: $(awk '{ print $5 }' "$2" | med)"
	echo "${1}plain, peak RSS MiB: $(awk '{ print $3 }' "$2" | med)"
	echo "${1}--by=type, peak RSS MiB: $(awk '{ print $6 }' "$2" | med)"
	echo "${1}--by=type / plain, wall: $(awk '{ print ($1 > 0 ? $4 / $1 : 0) }' "$2" | med)x"
	echo "${1}--by=type / plain, CPU: $(awk '{ print ($2 > 0 ? $5 / $2 : 0) }' "$2" | med)x"
}
[ -z "$OLD" ] || figures "OLD_BUILD: " "$W/old.times"
figures "${OLD:+BUILD: }" "$W/times"
