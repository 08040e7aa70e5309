#!/bin/sh
# What the peak table and the timeline cost: heapprof.so built from these sources as
# usual and with NO_TIMELINE=1 (no peak table, no timeline, none of their counting), on
# bench/run's churn and python workloads. Instructions under callgrind (the reliable
# measure on a busy machine), then wall and CPU time of alternating runs.
#   sh bench/timeline_cost.sh [OUTDIR]       (default build/cost; builds both there)
# COST_REPS (5): timed runs of each; COST_CHURN_OPS (300000): churn's operations under
# callgrind, COST_TIMED_OPS (4000000) timed; COST_PY_N (400000): the python workload's
# strings; COST_CALLGRIND=0: no counts.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
O=${1:-$top/build/cost}
mkdir -p "$O" && O=$(cd "$O" && pwd) || exit 1
REPS=${COST_REPS:-5}
CG=${COST_CALLGRIND:-1}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
PYN=${COST_PY_N:-400000}
# as bench/run: every python object from malloc; one hash seed, the same dict work in
# every run (instructions differ by more than what is measured otherwise)
export PYTHONMALLOC=malloc PYTHONHASHSEED=0 LC_ALL=C

say() { printf '%s\n' "$*" >&2; }

for v in with without; do
	flag=
	[ $v = without ] && flag=NO_TIMELINE=1
	make -s -C "$top" preload B="$O/$v" $flag >"$O/make-$v.log" 2>&1 ||
		{ say "timeline_cost: cannot build heapprof.so ($v): see $O/make-$v.log"; exit 2; }
done
${CC:-cc} -O2 -o "$O/churn" "$top/bench/churn.c" -lpthread ||
	{ say "timeline_cost: cannot build bench/churn.c"; exit 2; }

# cmd WORKLOAD OPS: the command line of a workload
cmd()
{
	case $1 in
	churn) echo "$O/churn -w 50000 -r 8-24 -m 1024 -n $2" ;;
	python) echo "$PY $top/bench/dict_strings.py $PYN" ;;
	esac
}

workloads=churn
[ -n "$PY" ] && workloads="churn python" || say "timeline_cost: no python3: churn only"

# ratio A B: B / A - 1 as a signed percentage
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (a > 0 ? (b / a - 1) * 100 : 0) }'; }

if [ "$CG" != 0 ] && command -v valgrind >/dev/null 2>&1; then
	echo "instructions (callgrind Ir of the program, heapprof.so without -> with):"
	for w in $workloads; do
		for v in without with; do
			rm -f "$O/cg.$w.$v".*
			# env execs the program: the same pid, one file
			valgrind --tool=callgrind --trace-children=yes \
				--callgrind-out-file="$O/cg.$w.$v.%p" \
				env LD_PRELOAD="$O/$v/heapprof.so" $(cmd $w ${COST_CHURN_OPS:-300000}) \
				>/dev/null 2>"$O/cg.$w.$v.err"
			ir=$(cat "$O/cg.$w.$v".[0-9]* 2>/dev/null |
				awk '/^summary:/ { s += $2 } END { printf "%.0f", s }')
			[ $v = with ] && ir_with=$ir || ir_without=$ir
		done
		printf '  %-7s %14s %14s  %s\n' $w "$ir_without" "$ir_with" \
			"$(ratio "$ir_without" "$ir_with")"
	done
else
	say "timeline_cost: no valgrind (or COST_CALLGRIND=0): no instruction counts"
fi

add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }

# one timed run: prints "wall_s cpu_s" (user + sys of the process tree)
timed()
{
	/usr/bin/env time -f '%e %U %S' -o "$O/time" env LD_PRELOAD="$1" $2 >/dev/null 2>&1 ||
		{ echo "0 0"; return; }
	awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$O/time"
}

if [ -x /usr/bin/time ]; then
	echo "time (sum of $REPS alternating runs each, without -> with):"
	for w in $workloads; do
		ww=0 wc=0 tw=0 tc=0
		c=$(cmd $w ${COST_TIMED_OPS:-4000000})
		i=0
		while [ $i -lt "$REPS" ]; do
			set -- $(timed "$O/without/heapprof.so" "$c")
			ww=$(add "$ww" "$1") wc=$(add "$wc" "$2")
			set -- $(timed "$O/with/heapprof.so" "$c")
			tw=$(add "$tw" "$1") tc=$(add "$tc" "$2")
			i=$((i + 1))
		done
		printf '  %-7s wall %7.2f s %7.2f s  %s   cpu %7.2f s %7.2f s  %s\n' $w \
			"$ww" "$tw" "$(ratio "$ww" "$tw")" "$wc" "$tc" "$(ratio "$wc" "$tc")"
	done
else
	say "timeline_cost: no /usr/bin/time: no times"
fi
