#!/bin/sh
# The stack at exit as --leaks sees it in HEAPPROF_AT_EXIT snapshots: scanned from
# where exit's handlers called heapprof, not from heapprof's own frames (so a pointer
# left in a dead frame below exit() is no root, as memcheck says), and kept in compact
# snapshots too (so a block held by a local of main is reachable).
. "$(dirname "$0")/lib.sh"

# the program's own stacks of a collapsed report (a sanitizer's runtime has its own)
own() { grep ";main[;\ ]" "$1"; }

# exit_snap MODE: the at-exit snapshot of exitstack, MODE compact or full
exit_snap()
{
	HEAPPROF_AT_EXIT=1 HEAPPROF_SNAPSHOT=$1 HEAPPROF_OUTPUT=$1.snap LD_PRELOAD=$PRELOAD \
		$PROGS/exitstack 2>$1.err && test -f $1.snap
}

cat >want <<'EOF2'
[definitely lost];_start;__libc_start_main_impl;__libc_start_call_main;main;dead_frame 40
[still reachable];_start;__libc_start_main_impl;__libc_start_call_main;main 24
EOF2

test_case 'full at-exit snapshot: a dead frame below exit() is no root' '
	exit_snap full &&
	heapprof-analyze --leaks=all -f collapsed $PROGS/exitstack full.snap >all.txt &&
	own all.txt >full.txt && expect_same want full.txt
'

test_case 'compact at-exit snapshot: main'"'"'s live frame holds its block' '
	exit_snap compact &&
	heapprof-analyze --leaks=all -f collapsed $PROGS/exitstack compact.snap >all.txt &&
	own all.txt >compact.txt && expect_same want compact.txt
'

if command -v valgrind >/dev/null 2>&1 && [ -n "$(valgrind --version 2>/dev/null)" ]; then
test_case 'memcheck classes the same two blocks alike' '
	valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
		$PROGS/exitstack 2>vg.log &&
	grep -q "40 bytes in 1 blocks are definitely lost" vg.log &&
	grep -q "24 bytes in 1 blocks are still reachable" vg.log
'
else
	skip_case 'memcheck classes the same two blocks alike' 'valgrind is not installed'
fi
