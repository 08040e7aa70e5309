#!/bin/sh
# A DURATION reads the same in both halves: heapprof.so's HEAPPROF_INTERVAL and the
# analyzer's --older-than take and refuse the same forms (include/heapprof_duration.h;
# test/unit/duration_test.c checks the values). Only the preload's range, 10ms to 24h,
# is its own.
. "$(dirname "$0")/lib.sh"

# FORM YES|NO: a duration or not, as each half must say
FORMS='30 YES
0.5 YES
500ms YES
1.5s YES
90s YES
5m YES
5min YES
1.5h YES
1d YES
1.005s YES
often NO
5x NO
+5s NO
1e3ms NO
0x10 NO
.5s NO
5.s NO
5sec NO'

# the preload: a warning from a value it refuses, none from one it takes
preload_takes()
{
	SITES_EXIT=1 HEAPPROF_INTERVAL=$1 HEAPPROF_OUTPUT=$SCRATCH/none.%n.snap \
		LD_PRELOAD=$PRELOAD "$PROGS/sites" small=1x10 >/dev/null 2>iv.err
	if grep -q "HEAPPROF_INTERVAL=.* is not a duration" iv.err; then
		echo NO
	else
		echo YES
	fi
}

# the analyzer: 64 (bad usage) for a value it refuses; one it takes goes on to the
# input, which is missing (2)
analyzer_takes()
{
	heapprof-analyze --older-than="$1" "$PROGS/sites" "$SCRATCH/no.core" >/dev/null 2>an.err
	case $? in
	64) echo NO ;;
	2) echo YES ;;
	*) echo "status $?" ;;
	esac
}

test_case 'HEAPPROF_INTERVAL and --older-than take and refuse the same forms' '
	echo "$FORMS" | while read -r form want; do
		echo "$form preload $(preload_takes "$form") analyzer $(analyzer_takes "$form")"
	done >got &&
	echo "$FORMS" | sed "s/ \(.*\)/ preload \1 analyzer \1/" >want &&
	expect_same want got
'

test_case 'HEAPPROF_INTERVAL: only 10ms to 24h, as its warning says' '
	for form in 5ms 0.009s 24.001h 2d; do
		expect_eq "$form" NO "$(preload_takes "$form")" || return 1
	done &&
	expect_grep "HEAPPROF_INTERVAL=2d is not a duration from 10ms to 24h" iv.err &&
	expect_eq 24h YES "$(preload_takes 24h)" && expect_eq 10ms YES "$(preload_takes 10ms)"
'
