#!/bin/sh
# The life of a snapshot written by heapprof.so: one writer at a time, complete when
# the program is gone or heapprof_snapshot_wait() says so, forks that snapshot while
# another thread does, names unique across exec, the checks of the trigger variables,
# and a process with raised privileges that ignores them all.
. "$(dirname "$0")/lib.sh"

# wait_gone PID: until the process is gone, 30 s at most
wait_gone()
{
	i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 300 ] || { echo "process $1 still there after 30 s" >&2; return 1; }
		sleep 0.1
	done
}

test_case 'a snapshot asked for just before exit is complete once the process is gone' '
	LD_PRELOAD=$PRELOAD $PROGS/snaplife exit $PWD/last.snap 64 >out 2>err &&
	grep -q "^snapshot 0$" out &&
	test -f last.snap && ! test -e last.snap.part &&
	heapprof-analyze -f collapsed $PROGS/snaplife last.snap >c.txt &&
	grep -q ";site_bulk 67108864$" c.txt
'

test_case 'heapprof_snapshot_wait: 0 once the file is complete under its name' '
	LD_PRELOAD=$PRELOAD $PROGS/snaplife wait $PWD/w.snap 64 >out 2>err &&
	printf "snapshot 0\nwait 0\ncomplete\n" >want && expect_same want out
'

test_case 'heapprof_snapshot_wait without heapprof.so: ENOSYS, the program runs' '
	$PROGS/snaplife wait $PWD/none.snap 1 >out &&
	grep -q "^wait Function not implemented$" out && ! test -e none.snap
'

# SLOWOPEN_GATE=FILE (libslowopen.so): a writer holds until FILE exists, so that what
# a case asserts happens while it surely runs, however slow or busy the machine
test_case 'HEAPPROF_WAIT_MS=0: exit does not wait, and says so' '
	HEAPPROF_WAIT_MS=0 SLOWOPEN_GATE=$PWD/nw.go LD_PRELOAD="$PRELOAD $PROGS/libslowopen.so" \
		$PROGS/snaplife exit $PWD/nw.snap 256 >out 2>err &&
	grep -q "^heapprof: exit waited HEAPPROF_WAIT_MS for a snapshot still being written" err &&
	! test -e nw.snap && touch nw.go && wait_for test -f nw.snap
'

# libslowopen.so holds each snapshot 200 ms before its file is opened, with the
# snapshot lock taken: forks land inside it, not by luck
test_case 'children forked while another thread snapshots take their own and end (10 forks)' '
	HEAPPROF_OUTPUT=$PWD/f.%p.%n.snap LD_PRELOAD="$PRELOAD $PROGS/libslowopen.so" \
		timeout 120 $PROGS/snaplife forks 10 8 >out 2>err &&
	grep -q "^hung 0$" out
'

# holding FILE: the snaplife processes that have FILE open (a writer has its .part)
holding()
{
	for p in $(pgrep -x snaplife); do
		for fd in /proc/$p/fd/*; do
			[ "$(readlink "$fd" 2>/dev/null)" != "$1" ] || { echo $p; break; }
		done
	done
}

# The writer is held at its gate until it is killed, so it cannot finish first however
# fast or slow the machine. It is known by the file it writes: a writer's parent is
# init, which may leave it a zombie for a while, and other runs have writers too.
test_case 'a writer killed before it is done: heapprof_snapshot_wait says EIO, no wait' '
	SLOWOPEN_GATE=$PWD/k.go HP_PRELOAD="$PRELOAD $PROGS/libslowopen.so" \
		run_preloaded $PROGS/snaplife killed $PWD/k.snap 64 &&
	wait_for test -e k.snap.part && w=$(holding $PWD/k.snap.part) &&
	expect_num "writers of k.snap.part" "$(echo $w | wc -w)" -eq 1 && kill -9 $w &&
	touch go && wait_for grep -q "^wait" prog.out &&
	grep -q "^wait Input/output error$" prog.out && ! test -e k.snap
'

# the second signal is sent once the first one's writer has begun (its .part is there)
# and while it is held; the writer ends only after the refusal was said
test_case 'a signal while a writer runs is refused with one line, not a second writer' '
	HEAPPROF_SIGNAL=USR2 HEAPPROF_OUTPUT=$PWD/s.%n.snap SLOWOPEN_GATE=$PWD/s.go \
		HP_PRELOAD="$PRELOAD $PROGS/libslowopen.so" run_preloaded $PROGS/snaplife hold 256 &&
	kill -USR2 $PROG_PID && wait_for test -e s.1.snap.part && kill -USR2 $PROG_PID &&
	wait_for grep -q "snapshot refused" prog.err && touch s.go && wait_for test -f s.1.snap &&
	kill $PROG_PID && wait_gone $PROG_PID &&
	test -f s.1.snap && ! test -e s.2.snap && ! test -e s.2.snap.part &&
	grep -q "^heapprof: snapshot refused: .*s.1.snap. is still being written (one writer at a time)$" prog.err &&
	test "$(grep -c "snapshot refused" prog.err)" = 1
'

# libstdc++ makes its 72 KiB emergency pool in its constructor, before heapprof's: the
# first peak is still HEAPPROF_PEAK's, and this program never holds 1 MB
test_case 'HEAPPROF_PEAK: no snapshot before the first peak, whatever allocates before heapprof starts' '
	HEAPPROF_PEAK=1000000 HEAPPROF_OUTPUT=$PWD/early.%n.snap LD_PRELOAD=$PRELOAD \
		$PROGS/cxxglobal 2>early.err && ! ls early.*.snap 2>/dev/null
'

test_case 'HEAPPROF_PEAK while a writer runs: the peak waits for it, and is not lost' '
	HEAPPROF_PEAK=$((300 << 20)) HEAPPROF_OUTPUT=$PWD/p.%n.snap LD_PRELOAD=$PRELOAD \
		$PROGS/snaplife peak $PWD/a.snap 256 64 >out 2>err &&
	test -f a.snap && test -f p.1.snap &&
	heapprof-analyze -f collapsed $PROGS/snaplife p.1.snap >p.txt &&
	b=$(awk "/;site_bulk [0-9]+\$/ { n += \$NF } END { print n + 0 }" p.txt) &&
	echo "peak: $b" &&
	[ "$b" -ge $((300 << 20)) ]
'

test_case '%n goes on across exec: each program of one pid gets its own file' '
	HEAPPROF_OUTPUT=$PWD/e.%p.%n.snap LD_PRELOAD=$PRELOAD $PROGS/snaplife exec 2 >out 2>err &&
	printf "snapshot 0\nsnapshot 0\nsnapshot 0\n" >want && expect_same want out &&
	test "$(ls e.*.snap | wc -l)" = 3 && ! grep -q "exists" err
'

test_case 'HEAPPROF_SIGNAL and HEAPPROF_TOGGLE_SIGNAL alike: a warning, and snapshots' '
	HEAPPROF_SIGNAL=USR2 HEAPPROF_TOGGLE_SIGNAL=SIGUSR2 HEAPPROF_OUTPUT=$PWD/t.snap \
		run_preloaded $PROGS/snaplife hold 1 &&
	grep -q "^heapprof: HEAPPROF_TOGGLE_SIGNAL=SIGUSR2 is HEAPPROF_SIGNAL.s signal too" prog.err &&
	kill -USR2 $PROG_PID && wait_for test -f t.snap &&
	kill $PROG_PID && wait_gone $PROG_PID
'

test_case 'an unknown %x in HEAPPROF_OUTPUT is said once and kept' '
	HEAPPROF_OUTPUT=$PWD/u.%q.snap HEAPPROF_AT_EXIT=1 LD_PRELOAD=$PRELOAD \
		$PROGS/snaplife quit 1 2>err &&
	grep -q "^heapprof: HEAPPROF_OUTPUT: %q is not %p, %n, %t or %%; kept as written$" err &&
	test -f u.%q.snap
'

# A setuid program that heapprof.so is loaded into (here linked with it; in life
# /etc/ld.so.preload) runs with the environment of a user with fewer rights.
secure_case()
{
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		skip_case "$1" "needs root and setpriv"
		return
	fi
	test_case "$@"
}

if [ "$(id -u)" = 0 ]; then
	SUID=$(mktemp -d /tmp/heapprof-suid.XXXXXX) && chmod 755 "$SUID" &&
	mkdir -m 777 "$SUID/out" && cp $PROGS/snaplife-linked "$SUID/plain" &&
	cp $PROGS/snaplife-linked "$SUID/suid" && chmod 4755 "$SUID/suid"
	# a would-be allocator that says it was loaded
	printf '__attribute__((constructor)) static void f(void) { *(volatile int *)0 = 0; }\n' |
		cc -x c -shared -fPIC -o "$SUID/evil.so" - && chmod 755 "$SUID/evil.so"
	trap 'rm -rf "$SUID"; cleanup_all' EXIT
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

secure_case 'unprivileged (the control): the variables act, the file is written' '
	cd "$SUID/out" && HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$SUID/out/plain.snap \
		as_nobody "$SUID/plain" quit 1 2>err &&
	test -f plain.snap
'

secure_case 'setuid (AT_SECURE): HEAPPROF_* ignored with one line, no file, no code loaded' '
	cd "$SUID/out" && HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$SUID/out/suid.snap \
		HEAPPROF_ALLOCATOR=$SUID/evil.so as_nobody "$SUID/suid" quit 1 2>err &&
	! test -e suid.snap && ! ls heapprof.*.snap 2>/dev/null &&
	grep -q "^heapprof: running with raised privileges (AT_SECURE): every HEAPPROF_\* variable is ignored and removed from the environment$" err
'

secure_case 'setuid: the HEAPPROF_* variables are gone from what it passes on' '
	cd "$SUID/out" && HEAPPROF_OUTPUT=x HEAPPROF_ALLOCATOR=$SUID/evil.so \
		as_nobody "$SUID/suid" env >env.out 2>err &&
	grep -q "^PATH=" env.out && ! grep -q "^HEAPPROF_" env.out
'
