#!/bin/sh
# Snapshots written by heapprof.so itself (HEAPPROF_SIGNAL, _AT_EXIT, _AT_CRASH, _PEAK,
# the API) read by heapprof-analyze like cores: exact bytes per function, the same
# report as gcore at the same moment, valgrind's "in use at exit"; the control API,
# the heapprof wrapper without gdb, and many snapshots under load.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/sites.sh"

WRAP=$SRC_DIR/scripts/heapprof
export HEAPPROF_SO=$PRELOAD HEAPPROF_ANALYZE=$ANALYZE

# wait_file FILE: until FILE exists (a snapshot appears complete, by rename), 10 s at most
wait_file()
{
	i=0
	while [ ! -f "$1" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "no $1 after 10 s" >&2; cat prog.err >&2 2>/dev/null; return 1; }
		sleep 0.1
	done
}

# delivered PID: no signal is pending for PID any more (kill queues it before it
# returns): in a program of one thread, the handler has run
unpending() { ! grep -q "^\(SigPnd\|ShdPnd\):.*[1-9a-f]" /proc/$1/status; }
delivered() { wait_for unpending "$1"; }

# no_part PATTERN: no file PATTERN.part is left (each writer has renamed its own)
no_part() { ! ls $1.part >/dev/null 2>&1; }

collapsed() { heapprof-analyze -f collapsed "$@"; }

# Programs a case started, ended after it whether it passed or not (a case runs in a
# subshell: lib.sh's PROG_PID does not reach cleanup_all).
started() { echo "$1" >>"$SCRATCH/pids"; }
start_preloaded() { run_preloaded "$@"; rc=$?; started "$PROG_PID"; return $rc; }
end_started()
{
	[ -f "$SCRATCH/pids" ] || return 0
	for p in $(cat "$SCRATCH/pids"); do pkill -9 -P "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	rm -f "$SCRATCH/pids"
}
trap 'end_started; cleanup_all' EXIT
# a case, then whatever it started ends
snap_case() { test_case "$@"; end_started; }

# same_report PROGRAM A B: the two images give the same report, text and collapsed
same_report()
{
	collapsed "$1" "$2" >a.txt && collapsed "$1" "$3" >b.txt && expect_same a.txt b.txt &&
	heapprof-analyze --top=0 "$1" "$2" >a.text && heapprof-analyze --top=0 "$1" "$3" >b.text &&
	# the name of the file and how much of the address space it holds differ
	sed -e 1d -e "/^  memory:/d" -e "/^  scanned:/d" a.text >a.body &&
	sed -e 1d -e "/^  memory:/d" -e "/^  scanned:/d" b.text >b.body && expect_same a.body b.body
}

# valgrind memcheck's loss records as collapsed stacks, "outer;...;inner BYTES"
vg_collapsed()
{
	awk '/ bytes in [0-9,]+ blocks are / { flush(); b = $2; gsub(",", "", b); n = 0; inrec = 1; next }
	inrec && / by 0x/ { l = $0; sub(/.*: /, "", l); sub(/ \(.*$/, "", l); f[++n] = l; next }
	inrec && /^==[0-9]+== *$/ { flush() }
	END { flush() }
	function flush(   s, i) { if (!inrec) return; s = ""
		for (i = n; i >= 1; i--) s = s (s == "" ? "" : ";") f[i]; print s " " b; inrec = 0 }' "$1"
}

if command -v gcore >/dev/null; then
	snap_case 'HEAPPROF_SIGNAL: exact bytes, and the report of a gcore of the same moment' '
		export HEAPPROF_SIGNAL=USR2 &&
		start_preloaded $PROGS/sites $SITES &&
		kill -USR2 $PROG_PID && wait_file heapprof.$PROG_PID.1.snap &&
		mv heapprof.$PROG_PID.1.snap sig.snap &&
		grep -q "^heapprof: snapshot .heapprof.[0-9]*.1.snap. written: " prog.err &&
		take_core sig.core &&
		readelf -h sig.snap | grep -q "CORE (Core file)" &&
		readelf -n sig.snap | grep -q NT_FILE && readelf -n sig.snap | grep -q NT_AUXV &&
		collapsed $PROGS/sites sig.snap >sig.txt && check_sites sig.txt &&
		same_report $PROGS/sites sig.core sig.snap
	'
else
	skip_case 'HEAPPROF_SIGNAL against gcore' 'gcore is not installed'
fi

snap_case 'HEAPPROF_SIGNAL: a numbered signal, a second snapshot, HEAPPROF_OUTPUT with %p and %n' '
	export HEAPPROF_SIGNAL=12 HEAPPROF_OUTPUT=out-%p-%n.core &&
	start_preloaded $PROGS/sites small=4x250 &&
	kill -USR2 $PROG_PID && wait_file out-$PROG_PID-1.core &&
	kill -USR2 $PROG_PID && wait_file out-$PROG_PID-2.core &&
	! ls *.part 2>/dev/null &&
	collapsed $PROGS/sites out-$PROG_PID-2.core >n.txt && expect_bytes site_small 1000 n.txt
'

snap_case 'a snapshot never overwrites a file: one line says why' '
	export HEAPPROF_SIGNAL=USR2 HEAPPROF_OUTPUT=taken.snap &&
	echo mine >taken.snap &&
	start_preloaded $PROGS/sites small=1x10 &&
	kill -USR2 $PROG_PID && wait_for grep -q "^heapprof: snapshot .taken.snap. failed" prog.err &&
	test "$(cat taken.snap)" = mine &&
	grep -q "^heapprof: snapshot .taken.snap. failed: the file exists" prog.err &&
	test "$(grep -c heapprof: prog.err)" = 1
'

snap_case 'bad HEAPPROF_SIGNAL, _SNAPSHOT, _START values: one warning each, the program runs' '
	LD_PRELOAD=$PRELOAD HEAPPROF_SIGNAL=NOPE HEAPPROF_SNAPSHOT=huge HEAPPROF_START=maybe \
		sh -c "echo out" >out 2>err &&
	test "$(cat out)" = out && test "$(wc -l <err)" = 3 &&
	grep -q "^heapprof: HEAPPROF_SIGNAL=NOPE is not a signal" err
'

if command -v valgrind >/dev/null; then
	snap_case 'HEAPPROF_AT_EXIT: per function, what valgrind calls in use at exit' '
		SITES_EXIT=1 valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
			--num-callers=50 $PROGS/sites $SITES >/dev/null 2>vg.txt &&
		vg_collapsed vg.txt >vg.collapsed && check_sites vg.collapsed &&
		SITES_EXIT=1 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=exit.snap LD_PRELOAD=$PRELOAD \
			$PROGS/sites $SITES >/dev/null 2>exit.err &&
		test -f exit.snap && collapsed $PROGS/sites exit.snap >exit.txt &&
		check_sites exit.txt &&
		# glibc sizes the TLS vector of each thread by the modules with TLS: heapprof.so is
		# one more, 16 bytes a thread; the rest must agree to the byte
		grep -v ";allocate_dtv;" vg.collapsed >vg.c && mv vg.c vg.collapsed &&
		grep -v ";allocate_dtv;" exit.txt >exit.c && mv exit.c exit.txt &&
		for f in main do_arg site_small site_big site_zeroed site_grow site_aligned \
			site_pagealigned site_dup site_inl inl_alloc site_lib lib_alloc \
			thread_main site_thread; do
			test "$(bytes_for $f vg.collapsed)" = "$(bytes_for $f exit.txt)" ||
			{ echo "$f: valgrind $(bytes_for $f vg.collapsed), heapprof $(bytes_for $f exit.txt)"; exit 1; }
		done
	'
else
	skip_case 'HEAPPROF_AT_EXIT against valgrind' 'valgrind is not installed'
fi

snap_case 'HEAPPROF_AT_CRASH, ulimit -c 0: a snapshot with exact bytes, death by the same signal' '
	ulimit -c 0 &&
	{ HEAPPROF_AT_CRASH=1 HEAPPROF_OUTPUT=crash.snap SITES_ABORT=1 LD_PRELOAD=$PRELOAD \
		$PROGS/sites small=2x4321 >/dev/null 2>crash.err; rc=$?; } &&
	test $rc = 134 && test -f crash.snap && ! test -f crash.snap.part &&
	readelf -n crash.snap | grep -q NT_PRSTATUS &&
	collapsed $PROGS/sites crash.snap >crash.txt && expect_bytes site_small 8642 crash.txt
'

snap_case 'HEAPPROF_AT_CRASH: a SEGV sent by kill still kills with SEGV, after a snapshot' '
	ulimit -c 0 &&
	{ HEAPPROF_AT_CRASH=1 HEAPPROF_OUTPUT=segv.snap LD_PRELOAD=$PRELOAD \
		sh -c "kill -SEGV \$\$" 2>/dev/null; rc=$?; } &&
	test $rc = 139 && test -f segv.snap
'

snap_case 'HEAPPROF_PEAK: one snapshot at the peak, with the peak'\''s bytes' '
	export HEAPPROF_PEAK=1000000 &&
	start_preloaded $PROGS/snapapi peak &&
	wait_for no_part "heapprof.$PROG_PID.*.snap" &&
	# a runtime that itself allocates BYTES before main (UBSan in the sanitizer run)
	# makes a first snapshot without site_peak: exactly one holds site_peak, the peak
	n=0 && for f in heapprof.$PROG_PID.*.snap; do
		collapsed $PROGS/snapapi $f >peak.txt &&
		if grep -q site_peak peak.txt; then
			n=$((n + 1)) && expect_bytes site_peak 1000000 peak.txt || exit 1
		fi
	done && [ $n = 1 ]
'

snap_case 'API: programs built with heapprof.h run unchanged without the preload (C, C++)' '
	mkdir plain && cd plain &&
	$PROGS/snapapi load 3 >plain.out && grep -q "0 snapshot calls failed" plain.out &&
	$PROGS/snapapi-cxx load 3 >cxx.out && expect_same plain.out cxx.out &&
	{ timeout 5 $PROGS/snapapi api >api.out; true; } && grep -q "^snapshot ENOSYS$" api.out &&
	! ls *.snap 2>/dev/null
'

snap_case 'API: a non-PIE program, C and C++, finds heapprof.so too' '
	printf "#include <heapprof.h>\nint main(void) { return heapprof_snapshot(\"np.snap\"); }\n" >np.c &&
	cc -O2 -Wall -Wextra -no-pie -fno-pie -I$SRC_DIR/include np.c -o np &&
	c++ -x c++ -O2 -Wall -Wextra -no-pie -fno-pie -I$SRC_DIR/include np.c -o np-cxx &&
	{ ./np; test $? = 38; } && ! test -e np.snap &&
	LD_PRELOAD=$PRELOAD ./np 2>/dev/null && wait_file np.snap && rm np.snap &&
	LD_PRELOAD=$PRELOAD ./np-cxx 2>/dev/null && wait_file np.snap
'

if [ "$(id -u)" != 0 ] || command -v setpriv >/dev/null; then
	snap_case 'a non-dumpable process of an ordinary user writes its snapshot, mode 0600' '
		as_user() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; else "$@"; fi; }
		mkdir nd; chmod 777 nd
		(cd nd && as_user env SNAPAPI_NODUMP=1 HEAPPROF_OUTPUT=nd.snap LD_PRELOAD=$PRELOAD \
			$PROGS/snapapi api >nd.out 2>nd.err) &
		started $!
		wait_file nd/nd.snap &&
		test "$(stat -c %a nd/nd.snap)" = 600 && grep -q "^snapshot 0$" nd/nd.out
	'
else
	skip_case 'a non-dumpable process of an ordinary user' 'root without setpriv'
fi

snap_case 'API: heapprof_snapshot, and a thread switched off allocates untagged blocks' '
	start_preloaded $PROGS/snapapi api &&
	grep -q "^snapshot 0$" prog.out && wait_file heapprof.$PROG_PID.1.snap &&
	collapsed $PROGS/snapapi heapprof.$PROG_PID.1.snap >api.txt &&
	echo heapprof.$PROG_PID.1.snap >api.name &&
	expect_bytes site_outside 3000 api.txt && expect_bytes site_region 1000 api.txt &&
	expect_bytes site_untagged 0 api.txt && expect_bytes untagged_thread 0 api.txt
'

if heapprof-analyze --help | grep -q -- --region; then
	snap_case 'API: --region=NAME holds exactly the region'\''s blocks' '
		collapsed --region=inner $PROGS/snapapi $(cat api.name) >region.txt &&
		expect_bytes site_region 1000 region.txt && expect_bytes site_outside 0 region.txt &&
		test "$(awk "{ s += \$NF } END { print s }" region.txt)" = 1000
	'
else
	skip_case 'API: --region=NAME holds exactly the region'\''s blocks' \
		'heapprof-analyze has no --region yet (another step of issue 10)'
fi

snap_case 'HEAPPROF_START=off, then HEAPPROF_TOGGLE_SIGNAL turns tagging on' '
	export HEAPPROF_START=off HEAPPROF_SIGNAL=USR2 HEAPPROF_TOGGLE_SIGNAL=USR1 &&
	start_preloaded $PROGS/snapapi toggle &&
	kill -USR1 $PROG_PID && delivered $PROG_PID && touch go && i=0 &&
	while ! grep -q done prog.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	kill -USR2 $PROG_PID && wait_file heapprof.$PROG_PID.1.snap &&
	collapsed $PROGS/snapapi heapprof.$PROG_PID.1.snap >toggle.txt &&
	expect_bytes site_region 1000 toggle.txt && expect_bytes site_outside 0 toggle.txt
'

if command -v gdb >/dev/null; then
	snap_case 'HEAPPROF_SNAPSHOT=full: gdb opens it, with the thread that took it' '
		export HEAPPROF_SIGNAL=USR2 HEAPPROF_SNAPSHOT=full HEAPPROF_OUTPUT=full.snap &&
		start_preloaded $PROGS/sites small=3x1000 &&
		kill -USR2 $PROG_PID && wait_file full.snap &&
		gdb -batch -ex "info files" -ex "info sharedlibrary" -ex "bt" $PROGS/sites full.snap \
			>gdb.out 2>&1 &&
		grep -q "file type elf64-\\|file type elf32-" gdb.out &&
		grep -q "libsite.so" gdb.out && grep -q " in main " gdb.out &&
		collapsed $PROGS/sites full.snap >full.txt && expect_bytes site_small 3000 full.txt
	'
else
	skip_case 'HEAPPROF_SNAPSHOT=full: gdb opens it' 'gdb is not installed'
fi

path_without_gdb nogdb

snap_case 'a process that cannot be traced: snapshot through the signal and the wrapper, no gdb' '
	SNAPAPI_NODUMP=1 "$WRAP" run $PROGS/snapapi api >w.out 2>w.err &
	pid=$! && started $pid && i=0 &&
	while ! grep -q ready w.out 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	grep -q "snapshot it with: heapprof snapshot $pid" w.err &&
	PATH=$SCRATCH/nogdb "$WRAP" snapshot $pid wrapped.snap 2>snap.err &&
	test -f wrapped.snap && ! grep -q gcore snap.err &&
	PATH=$SCRATCH/nogdb:$BUILD "$WRAP" report --keep $pid -f collapsed >wr.txt 2>wr.err;
	rc=$?; kill $pid; test $rc = 0 && grep -q "keeping the snapshot: " wr.err &&
	test -f "$(sed -n "s/.*keeping the snapshot: //p" wr.err)" &&
	collapsed $PROGS/snapapi wrapped.snap >wrapped.txt && expect_bytes site_outside 3000 wrapped.txt &&
	expect_bytes site_outside 3000 wr.txt
'

snap_case 'the wrapper without a signal and without gdb says why' '
	LD_PRELOAD=$PRELOAD $PROGS/sites small=1x10 >p.out 2>/dev/null &
	pid=$! && started $pid && wait_for grep -q "^ready$" p.out &&
	{ PATH=$SCRATCH/nogdb "$WRAP" snapshot $pid x.snap 2>why.err; rc=$?; kill $pid; } &&
	test $rc = 2 && grep -q "has no HEAPPROF_SIGNAL in its environment, and gcore was not found" why.err
'

snap_case 'the wrapper: --help, bad usage, no process, through a symlink' '
	ln -s "$WRAP" hp && ./hp --help >h.out && grep -q "heapprof snapshot PID" h.out &&
	./hp run --help >rh.out && grep -q "heapprof run" rh.out &&
	{ ./hp bogus >b.out 2>b.err; test $? = 64; } && ! test -s b.out && grep -q "unknown command" b.err &&
	{ ./hp >/dev/null 2>&1; test $? = 64; } &&
	{ ./hp snapshot 999999999 2>np.err; test $? = 2; } && grep -q "no process 999999999" np.err
'

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	snap_case 'the wrapper: a process of another user is "permission denied", with why' '
		{ setpriv --reuid=nobody --regid=nogroup --clear-groups sh "$WRAP" snapshot 1 2>perm.err;
		  test $? = 2; } && grep -q "permission denied: process 1 belongs to root" perm.err
	'
else
	skip_case 'the wrapper: a process of another user' 'needs root and setpriv to be another user'
fi

snap_case 'many snapshots from 4 allocating threads: no deadlock, none lost or corrupt' '
	$PROGS/snapapi load 25 >want.out &&
	HEAPPROF_OUTPUT=load-%n.snap LD_PRELOAD=$PRELOAD timeout 60 $PROGS/snapapi load 25 \
		>got.out 2>load.err &&
	expect_same want.out got.out &&
	i=0 && while { [ "$(ls load-*.snap 2>/dev/null | wc -l)" != 25 ] ||
			[ "$(grep -c "written: " load.err)" != 25 ]; } && [ $i -lt 600 ]; do
		sleep 0.1; i=$((i + 1)); done &&
	expect_eq "snapshots written within 60 s" 25 "$(ls load-*.snap | wc -l)" &&
	expect_eq "files still being written" "" "$(ls *.part 2>/dev/null)" &&
	expect_eq "\"written: \" lines on stderr" 25 "$(grep -c "written: " load.err)" &&
	for f in load-*.snap; do
		readelf -lW "$f" >/dev/null 2>re.err && ! test -s re.err ||
			{ echo "$f: not a readable ELF core:"; show_file re.err; exit 1; }
	done &&
	collapsed $PROGS/snapapi load-25.snap >load.txt
'
