#!/bin/sh
# heapprof.so loads libgcc_s.so.1 (libgcc's unwinder) only when a walk needs it: a
# program that does not link it keeps none of its pages in the default mode, where the
# cfi unwinder walks every stack it can; HEAPPROF_UNWIND=libgcc loads it at start, and
# a caller whose frame the cfi unwinder cannot read loads it from inside malloc, its
# stack exact all the same (test/progs/cfaexpr.c).
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool readelf

# maps_has PATTERN: the program started last maps a file matching PATTERN
maps_has()
{
	grep -q "$1" /proc/$PROG_PID/maps
}

test_case 'the test programs do not link libgcc_s themselves' '
	readelf -d $PROGS/sites $PROGS/cfaexpr >dyn.txt &&
	expect_no_grep libgcc_s dyn.txt
'

# the sanitizers' runtime, which the sanitizer run's heapprof.so links, needs libgcc_s
if [ -n "${SANITIZE:-}" ]; then
	skip_case 'sampled, cfi unwinder: no libgcc_s in the process' \
		"heapprof.so built with SANITIZE=$SANITIZE links the sanitizers' runtime"
else
test_case 'sampled, cfi unwinder: no libgcc_s in the process' '
	HEAPPROF_SAMPLE=524288 HEAPPROF_SEED=1 run_preloaded $PROGS/sites small=300x1000 big=10x65536 &&
	cp /proc/$PROG_PID/maps sampled.maps &&
	kill -9 $PROG_PID && expect_no_grep libgcc_s sampled.maps
'
fi

test_case 'HEAPPROF_UNWIND=libgcc: loaded at start, bytes exact' '
	HEAPPROF_UNWIND=libgcc run_preloaded $PROGS/sites small=3x1000 big=1x4096 &&
	cp /proc/$PROG_PID/maps libgcc.maps &&
	take_core libgcc.core &&
	expect_grep libgcc_s libgcc.maps &&
	heapprof-analyze -f collapsed $PROGS/sites libgcc.core >libgcc.txt &&
	expect_bytes site_small 3000 libgcc.txt && expect_bytes site_big 4096 libgcc.txt
'

if [ "$(uname -m)" = x86_64 ]; then
	test_case 'a caller the cfi unwinder cannot read: libgcc_s loaded in malloc, stack exact' '
		run_preloaded $PROGS/cfaexpr &&
		cp /proc/$PROG_PID/maps expr.maps &&
		take_core expr.core &&
		expect_grep libgcc_s expr.maps &&
		heapprof-analyze -f collapsed $PROGS/cfaexpr expr.core >expr.txt &&
		grep "expr_malloc" expr.txt >got &&
		expect_grep -E "(^|;)main;site_expr;expr_malloc 4000$" got &&
		expect_bytes site_plain 1000 expr.txt
	'
else
	skip_case 'a caller the cfi unwinder cannot read' 'the caller is x86_64 assembly'
fi
