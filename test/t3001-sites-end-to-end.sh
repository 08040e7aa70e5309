#!/bin/sh
# End to end: a real program under heapprof.so, a real core from gcore, exact live
# bytes per allocating function for every way of allocating.
. "$(dirname "$0")/lib.sh"
need_tool gcore

. "$TEST_DIR/helpers/sites.sh"

test_case 'PIE: exact live bytes per call site' '
	run_preloaded $PROGS/sites $SITES &&
	take_core pie.core &&
	heapprof-analyze -f collapsed $PROGS/sites pie.core >pie.txt &&
	check_sites pie.txt
'

test_case 'the allocating function is the leaf, heapprof frames never appear' '
	grep -q ";site_small 2000\$" pie.txt &&
	grep -q ";site_inl;inl_alloc 1400\$" pie.txt &&
	grep -q ";thread_main;site_thread 80000\$" pie.txt &&
	grep -q ";site_dup;[^;]*strdup 150\$" pie.txt &&
	! grep -q "heapprof\\|do_malloc\\|unwind_capture\\|hp_tag" pie.txt
'

test_case 'stacks reach main and the thread entry' '
	grep -q "^[^ ]*main;.*site_big 600000\$" pie.txt &&
	grep -q "start_thread;thread_main;site_thread" pie.txt
'

test_case 'text report: exact bytes, block counts, sizes and file:line' '
	heapprof-analyze --top=0 $PROGS/sites pie.core >pie.text &&
	grep -q "600,000 bytes in 2 blocks  sizes: 300,000 x2" pie.text &&
	grep -q "80,000 bytes in 800 blocks  sizes: 100 x800" pie.text &&
	grep -q "site_small  .*sites.c:[0-9]" pie.text &&
	grep -q "inl_alloc (inlined)  .*sites.c:[0-9]" pie.text &&
	grep -q "lib_alloc  .*libsite.c:[0-9]*  (libsite.so)" pie.text
'

test_case 'non-PIE executable' '
	run_preloaded $PROGS/sites-nopie $SITES &&
	take_core nopie.core &&
	heapprof-analyze -f collapsed $PROGS/sites-nopie nopie.core >nopie.txt &&
	check_sites nopie.txt
'

test_case 'stripped executable, debug info found by build-id in --debug-dir' '
	run_preloaded $PROGS/sites-stripped $SITES &&
	take_core stripped.core &&
	heapprof-analyze -f collapsed --debug-dir $BUILD/debug $PROGS/sites-stripped stripped.core >stripped.txt &&
	check_sites stripped.txt &&
	heapprof-analyze --top=0 --debug-dir $BUILD/debug $PROGS/sites-stripped stripped.core >stripped.text &&
	grep -q "site_small  .*sites.c:[0-9]" stripped.text
'

test_case 'gzip-compressed core gives the same report' '
	gzip -c pie.core >pie.core.gz &&
	heapprof-analyze -f collapsed $PROGS/sites pie.core.gz >gz.txt &&
	expect_same pie.txt gz.txt
'

test_case 'one thread and two give the same bytes' '
	heapprof-analyze -j1 --top=0 $PROGS/sites pie.core >j1.text &&
	heapprof-analyze -j2 --top=0 $PROGS/sites pie.core >j2.text &&
	expect_same j1.text j2.text
'

case $(cat /proc/sys/kernel/core_pattern) in
"|"*|/*) skip_case 'a core of a crashed program (abort)' 'the kernel pipes or redirects cores here' ;;
*) test_case 'a core of a crashed program (abort)' '
	ulimit -c unlimited &&
	mkdir crash && cd crash &&
	{ LD_PRELOAD=$PRELOAD SITES_ABORT=1 $PROGS/sites small=2x4321 >/dev/null 2>&1; true; } &&
	core=$(ls | grep "^core" | head -n 1) && [ -n "$core" ] &&
	heapprof-analyze -f collapsed $PROGS/sites "$core" >crash.txt &&
	expect_bytes site_small 8642 crash.txt
' ;;
esac

test_case 'the heapprof wrapper: run under it, then report on the live process' '
	export HEAPPROF_SO=$PRELOAD HEAPPROF_ANALYZE=$ANALYZE &&
	"$SRC_DIR/scripts/heapprof" run $PROGS/sites small=4x250 >w.out &
	pid=$! && i=0 &&
	while ! grep -q ready w.out 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	"$SRC_DIR/scripts/heapprof" report $pid -f collapsed >w.txt;
	rc=$?; kill -9 $pid; [ $rc = 0 ] && expect_bytes site_small 1000 w.txt
'
