#!/bin/sh
# Snapshots the program does not notice, with the roots of every live thread: a
# HEAPPROF_SIGNAL snapshot (by kill or by the wrapper) leaves nanosleep, sleep, poll,
# epoll_wait and select to sleep their whole time, in a child of fork and in a static
# program too, and whatever mask the program sets; a snapshot taken on another thread
# than main (the signal's, heapprof_snapshot() or HEAPPROF_PEAK from a worker) holds
# main's used stack from its stack pointer up, so that --leaks, --why and gcore's core
# of the same process agree.
. "$(dirname "$0")/lib.sh"

WRAP=$SRC_DIR/scripts/heapprof
export HEAPPROF_SO=$PRELOAD HEAPPROF_ANALYZE=$ANALYZE
# every program sleeps this long, all at once; the snapshots come while they sleep
SECS=5
CALLS="nanosleep sleep poll epoll select"
MASKS="ppoll pselect epoll_pwait"

# what every snapshot of snaproots must say, per class and allocating function
cat >want <<'EOF'
definitely lost alloc_dead 40
still reachable alloc_main 64
still reachable alloc_worker 32
EOF

# classes PROG IMAGE OUT: IMAGE's --leaks=all classes by alloc_* function into OUT
classes() { heapprof-analyze --leaks=all -f collapsed "$1" "$2" >"$3.txt" && by_class "$3.txt" >"$3"; }

# start NAME PROG ARGS: PROG in the background, stdout NAME.out, stderr NAME.err, its
# pid in NAME.pid, its exit status in NAME.rc once it ends
start()
{
	n=$1
	shift
	{
		sh -c 'echo $$ >"$0.pid"; exec "$@"' "$n" "$@" >"$n.out" 2>"$n.err"
		echo $? >"$n.rc.tmp" && mv "$n.rc.tmp" "$n.rc"
	} &
}
pid() { cat "$1.pid"; }
ready() { wait_for grep -q "^ready$" "$1.out" && wait_for test -s "$1.pid"; }

# slept NAME: program NAME slept its whole time and exited 0
slept()
{
	wait_for test -f "$1.rc" && test "$(cat "$1.rc")" = 0 && grep -q "^slept " "$1.out" ||
		{ echo "$1: status $(cat "$1.rc" 2>/dev/null)" >&2; cat "$1.out" "$1.err" >&2; false; }
}

# snap_ok NAME PROG SNAPSHOT: the snapshot exists and says want
snap_ok()
{
	test -f "$3" || { echo "no snapshot $3" >&2; cat "$1.err" >&2; return 1; }
	classes "$2" "$3" "$1.classes" && expect_same want "$1.classes"
}

# Every program starts now, and once all are ready, sleeps SECS seconds; the signals,
# the wrapper's snapshots and gcore come while they sleep, then each case checks what
# one of them did.
export SNAPROOTS_GO=$SCRATCH/go
sig_env="HEAPPROF_SIGNAL=USR2 LD_PRELOAD=$PRELOAD"
for c in $CALLS $MASKS; do
	start $c env $sig_env HEAPPROF_OUTPUT=$c.snap $PROGS/snaproots $c $SECS
	start w$c "$WRAP" run $PROGS/snaproots $c $SECS
done
start un env $sig_env HEAPPROF_OUTPUT=un.snap $PROGS/snaproots nanosleep $SECS unblock
start fk env $sig_env $PROGS/snaproots nanosleep $SECS fork
start st env HEAPPROF_SIGNAL=USR2 HEAPPROF_OUTPUT=st.snap $PROGS/snaproots-static select $SECS
start tg env $sig_env HEAPPROF_TOGGLE_SIGNAL=USR1 HEAPPROF_OUTPUT=tg.snap $PROGS/snaproots poll $SECS
start bl env $sig_env HEAPPROF_OUTPUT=bl.snap $PROGS/snaproots nanosleep $SECS block
start own env $sig_env HEAPPROF_OUTPUT=own.snap $PROGS/snaproots nanosleep $SECS own
start api env HEAPPROF_OUTPUT=api.snap LD_PRELOAD=$PRELOAD $PROGS/snaproots nanosleep $SECS api
start pk env HEAPPROF_PEAK=1000000 HEAPPROF_OUTPUT=pk.snap LD_PRELOAD=$PRELOAD \
	$PROGS/snaproots nanosleep $SECS peak
path_without_gdb nogdb
all="$CALLS $MASKS un fk st tg bl own api pk"
for c in $CALLS $MASKS; do all="$all w$c"; done
for n in $all; do ready $n; done
touch go
for n in $all; do wait_for grep -q "^sleeping$" $n.out; done
for n in $CALLS $MASKS un st bl own; do kill -USR2 "$(pid $n)"; done
child=$(sed -n "s/^child //p" fk.out)
kill -USR2 "$child" "$(pid fk)"
kill -USR1 "$(pid tg)"; kill -USR1 "$(pid tg)"; kill -USR2 "$(pid tg)"
for c in $CALLS $MASKS; do
	PATH=$SCRATCH/nogdb "$WRAP" snapshot "$(pid w$c)" w$c.snap 2>w$c.snaperr &
done
if command -v gcore >/dev/null; then
	wait_for test -f bl.snap && gcore -o gc "$(pid bl)" >gc.log 2>&1
fi
wait_for test -f wepoll_pwait.rc

test_case 'kill -USR2: nanosleep, sleep, poll, epoll_wait and select sleep their whole time' '
	for c in $CALLS; do slept $c && snap_ok $c $PROGS/snaproots $c.snap || exit 1; done
'

test_case 'heapprof snapshot PID (the wrapper, no gdb): the same five sleep their whole time' '
	for c in $CALLS; do
		cat w$c.snaperr >&2; slept w$c && snap_ok w$c $PROGS/snaproots w$c.snap || exit 1
	done
'

test_case 'a program that sets its own masks: the empty one (as bash), ppoll, pselect, epoll_pwait' '
	slept un && snap_ok un $PROGS/snaproots un.snap &&
	for c in $MASKS; do
		slept $c && snap_ok $c $PROGS/snaproots $c.snap &&
		slept w$c && snap_ok w$c $PROGS/snaproots w$c.snap || exit 1
	done
'

test_case 'a child of fork() and a static program (libheapprof.a) sleep their whole time too' '
	slept fk && test -f heapprof.$child.1.snap &&
	snap_ok fk $PROGS/snaproots heapprof.$(pid fk).1.snap &&
	slept st && snap_ok st $PROGS/snaproots-static st.snap
'

test_case 'HEAPPROF_TOGGLE_SIGNAL leaves the sleep alone too' '
	slept tg && snap_ok tg $PROGS/snaproots tg.snap
'

test_case 'a handler the program put on the signal after heapprof'"'"'s wins, and runs' '
	slept own && grep -q "^own handler$" own.out && ! test -f own.snap
'

test_case 'a program it starts (exec) gets HEAPPROF_SIGNAL unblocked, as without heapprof' '
	env $sig_env sh -c "exec env -u LD_PRELOAD grep SigBlk /proc/self/status" >blk.out &&
	echo "SigBlk:	0000000000000000" >blk.want && expect_same blk.want blk.out
'

# main blocks the signal, as servers do: a worker's handler took it before heapprof had
# a thread of its own, and the snapshot then held the worker's stack alone
test_case 'main blocks HEAPPROF_SIGNAL: its stack is in the snapshot, as in gcore'"'"'s core' '
	slept bl && snap_ok bl $PROGS/snaproots bl.snap &&
	if command -v gcore >/dev/null; then
		classes $PROGS/snaproots gc.$(pid bl) gc && expect_same want gc
	fi
'

test_case '--why: main'"'"'s block is held from main'"'"'s stack, the dead frame'"'"'s by nothing' '
	heapprof-analyze --why=alloc_main $PROGS/snaproots bl.snap >why.txt &&
	grep -q "root: thread $(pid bl) stack" why.txt &&
	heapprof-analyze --why=alloc_dead $PROGS/snaproots bl.snap >dead.txt &&
	grep -q "no root reaches it" dead.txt
'

test_case 'heapprof_snapshot() from a worker: main'"'"'s stack is a root' '
	slept api && grep -q "^snapshot 0$" api.out && snap_ok api $PROGS/snaproots api.snap
'

test_case 'HEAPPROF_PEAK from a worker: main'"'"'s stack is a root' '
	slept pk && { cat want; echo "still reachable alloc_peak 1048576"; } | sort >want.pk &&
	classes $PROGS/snaproots pk.snap pk.classes && expect_same want.pk pk.classes
'
