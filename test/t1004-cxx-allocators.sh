#!/bin/sh
# C++ with another allocator preloaded: jemalloc exports operator new and delete of its
# own. Behind heapprof.so every new and delete must still pass through heapprof (and
# pair up); in front of it, heapprof records nothing and must say so. Out of memory,
# heapprof's operator new behaves as the standard's.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# heapprof's operator new out of memory: new_handler, bad_alloc, nullptr, as without it
run_tap oom env LD_PRELOAD="$PRELOAD" $PROGS/cxx_oom

jemalloc=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1)
if [ -z "$jemalloc" ]; then
	echo "# skipped: libjemalloc2 is not installed"
	exit 77
fi

test_case 'heapprof.so before jemalloc: new and delete pass through heapprof, exact bytes' '
	HP_PRELOAD="$PRELOAD $jemalloc" run_preloaded $PROGS/cxx_chain &&
	take_core chain.core &&
	heapprof-analyze -f collapsed $PROGS/cxx_chain chain.core >chain.txt &&
	expect_bytes cxx_churn 0 chain.txt &&
	expect_bytes cxx_keep 101920 chain.txt &&
	expect_bytes cxx_map 40048 chain.txt &&
	! grep -q heapprof: prog.err
'

run_tap oom-jemalloc env LD_PRELOAD="$PRELOAD $jemalloc" $PROGS/cxx_oom

test_case 'jemalloc before heapprof.so: one line at start-up, the analyzer says why' '
	HP_PRELOAD="$jemalloc $PRELOAD" run_preloaded $PROGS/cxx_chain &&
	take_core first.core &&
	[ $(wc -l <prog.err) = 1 ] &&
	grep -q "^heapprof: malloc is not heapprof.s but .*libjemalloc.so.2.s, which comes first: nothing will be recorded" prog.err &&
	{ heapprof-analyze $PROGS/cxx_chain first.core >out 2>err; [ $? = 2 ]; } &&
	grep -q "but recorded no allocation: its malloc was never called" err &&
	! grep -q "everything allocated had been freed" err
'
