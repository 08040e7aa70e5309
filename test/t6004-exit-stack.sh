#!/bin/sh
# The stack at exit as --leaks sees it in HEAPPROF_AT_EXIT snapshots: scanned from
# where exit() was entered, not from exit's handlers' frames or heapprof's own (so a
# pointer left in a dead frame below exit(), even in the holes exit's handlers leave
# in it, is no root, as memcheck says), and kept in compact snapshots too (so a block
# held by a local of main is reachable); the snapshot comes after the program's C++
# destructors, in a static program too.
. "$(dirname "$0")/lib.sh"

# the program's own stacks of a collapsed report (a sanitizer's runtime has its own)
own() { grep ";main[;\ ]" "$1"; }

# exit_snap MODE [near]: the at-exit snapshot of exitstack, MODE compact or full
exit_snap()
{
	HEAPPROF_AT_EXIT=1 HEAPPROF_SNAPSHOT=$1 HEAPPROF_OUTPUT=$1${2:-}.snap LD_PRELOAD=$PRELOAD \
		$PROGS/exitstack ${2:-} 2>$1.err && test -f $1${2:-}.snap
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

# exit's handlers (__run_exit_handlers, _dl_fini in a dynamic program, heapprof's
# destructor) put their frames over the dead one below main's, and what they leave
# unwritten still points at alloc_near's block: the scan starts where exit was entered
sort want - >want.near <<'EOF2'
[definitely lost];_start;__libc_start_main_impl;__libc_start_call_main;main;near_frame 56
EOF2

test_case 'at exit, the holes exit'"'"'s handlers leave below main are no roots (compact, full)' '
	for m in compact full; do
		exit_snap $m near && heapprof-analyze --leaks=all -f collapsed $PROGS/exitstack \
			${m}near.snap >all.txt && own all.txt | sort >$m.txt && expect_same want.near $m.txt ||
			exit 1
	done
'

# from main on: a static libc's frames above it may be named otherwise
from_main() { sed "s/\];.*;main\([; ]\)/];main\1/" "$@"; }

test_case 'the same in a static program (libheapprof.a), whose exit has no _dl_fini' '
	from_main want.near >want.smain &&
	for m in compact full; do
		HEAPPROF_AT_EXIT=1 HEAPPROF_SNAPSHOT=$m HEAPPROF_OUTPUT=s$m.snap $PROGS/exitstack-static \
			near 2>s$m.err && heapprof-analyze --leaks=all -f collapsed $PROGS/exitstack-static \
			s$m.snap >all.txt && own all.txt | from_main | sort >s$m.txt &&
			expect_same want.smain s$m.txt || exit 1
	done
'

# a global std::string of 100,001 characters, freed by its destructor at exit: registered
# with __cxa_atexit as the program starts, which in a static program is before heapprof's
# constructor (linked last) could register anything
test_case 'a C++ global'"'"'s destructor has run before the at-exit snapshot: dynamic and static' '
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=cxx.snap LD_PRELOAD=$PRELOAD $PROGS/cxxglobal 2>cxx.err &&
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=cxxs.snap $PROGS/cxxglobal-static 2>cxxs.err &&
	for p in cxxglobal:cxx cxxglobal-static:cxxs; do
		heapprof-analyze -f collapsed $PROGS/${p%:*} ${p#*:}.snap >${p#*:}.txt &&
		expect_bytes alloc_kept 120 ${p#*:}.txt && ! grep "basic_string" ${p#*:}.txt || exit 1
	done
'

# vg_classes LOG: memcheck's loss records as "class function bytes" for the records
# whose stack has a frame of exitstack's, the innermost of them
vg_classes()
{
	awk '/ bytes in [0-9,]+ blocks are / { b = $2; gsub(",", "", b); c = $0
		sub(/.* blocks are /, "", c); sub(/ in loss record.*/, "", c); rec = 1; next }
	rec && / (at|by) 0x/ && match($0, /(alloc_held|dead_frame|near_frame|main) /) {
		print c, substr($0, RSTART, RLENGTH - 1), b; rec = 0 }
	/^==[0-9]+== *$/ { rec = 0 }' "$1" | sort
}

if command -v valgrind >/dev/null 2>&1 && [ -n "$(valgrind --version 2>/dev/null)" ]; then
test_case 'memcheck classes the same three blocks alike' '
	valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
		$PROGS/exitstack near 2>vg.log && vg_classes vg.log >vg.classes &&
	printf "%s\n" "definitely lost dead_frame 40" "definitely lost near_frame 56" \
		"still reachable main 24" | sort >vg.want && expect_same vg.want vg.classes
'
else
	skip_case 'memcheck classes the same three blocks alike' 'valgrind is not installed'
fi
