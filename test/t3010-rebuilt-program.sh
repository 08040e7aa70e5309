#!/bin/sh
# End to end: a core (gcore's, and heapprof's own snapshot) of a program that was then
# rebuilt in place with its functions moved. The core's build-ids must win over the
# files on disk: frames are never named from the rebuilt file; the old build found by
# build-id under --debug-dir names them right; --base-program names OLD's executable;
# the report's program line names the file actually used.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# build_id FILE: its GNU build-id in hex
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }

# old_in DIR: the old build where a build-id lookup under DIR finds it
old_in()
{
	id=$(build_id $PROGS/rebuild) && mkdir -p "$1/.build-id/${id%${id#??}}" &&
	cp $PROGS/rebuild "$1/.build-id/${id%${id#??}}/${id#??}.debug"
}

# no_wrong_names FILE: the collapsed stacks of big() and small() hold no name of the
# program's own (the libc frames may keep theirs), and extra() is nowhere
no_wrong_names()
{
	expect_no_grep "extra" "$1" &&
	expect_grep "^prog+0x[0-9a-f]*;.*;prog+0x[0-9a-f]*;prog+0x[0-9a-f]* 300000\$" "$1" &&
	grep -q "^prog+0x[0-9a-f]*;.*;prog+0x[0-9a-f]*;prog+0x[0-9a-f]* 1000\$" "$1" ||
	{ cat "$1"; return 1; }
}

test_case 'rebuilt in place: no frame is named from the new build' '
	cp $PROGS/rebuild prog &&
	run_preloaded ./prog && take_core old.core &&
	cp $PROGS/rebuild-extra prog &&
	heapprof-analyze -f collapsed ./prog old.core >wrong.txt 2>wrong.err &&
	no_wrong_names wrong.txt &&
	expect_grep "warning: module .*/prog. at 0x[0-9a-f]* has build-id $(build_id $PROGS/rebuild) in the core, but .*/prog. has $(build_id $PROGS/rebuild-extra)" wrong.err
'

test_case 'rebuilt in place: the program line names no rebuilt file' '
	heapprof-analyze ./prog old.core >wrong.text 2>/dev/null &&
	expect_grep "^  program:    /.*/prog (no matching file)\$" wrong.text &&
	heapprof-analyze -f json ./prog old.core 2>/dev/null | expect_grep "\"program\": \"/.*/prog (no matching file)\""
'

test_case 'rebuilt in place: the old build under --debug-dir/.build-id names the frames' '
	old_in dbg &&
	heapprof-analyze -f collapsed --debug-dir dbg ./prog old.core >right.txt &&
	expect_bytes big 300000 right.txt && expect_bytes small 1000 right.txt &&
	expect_grep ";main;big 300000\$" right.txt && expect_no_grep extra right.txt &&
	heapprof-analyze --debug-dir dbg ./prog old.core >right.text &&
	expect_grep "big  .*rebuild.c:31\$" right.text &&
	expect_grep "^  program:    .*/dbg/.build-id/../.*\\.debug\$" right.text
'

test_case 'a wrong PROGRAM: the program line names the file the core led to' '
	cp $PROGS/rebuild prog &&
	heapprof-analyze --top=1 $PROGS/rebuild-extra old.core >fallback.text 2>fallback.err &&
	expect_grep "does not match the core" fallback.err &&
	expect_grep "^  program:    $SCRATCH/prog\$" fallback.text &&
	expect_grep "big  .*rebuild.c:31\$" fallback.text
'

test_case 'a heapprof snapshot before a rebuild: the same' '
	cp $PROGS/rebuild prog && export HEAPPROF_SIGNAL=USR2 &&
	run_preloaded ./prog && kill -USR2 $PROG_PID &&
	i=0 && while [ ! -f heapprof.$PROG_PID.1.snap ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	mv heapprof.$PROG_PID.1.snap old.snap && kill -9 $PROG_PID && wait $PROG_PID 2>/dev/null;
	PROG_PID= && cp $PROGS/rebuild-extra prog &&
	heapprof-analyze -f collapsed ./prog old.snap >snap-wrong.txt 2>/dev/null &&
	no_wrong_names snap-wrong.txt &&
	heapprof-analyze -f collapsed --debug-dir dbg ./prog old.snap >snap-right.txt &&
	expect_grep ";main;big 300000\$" snap-right.txt && expect_grep ";main;small 1000\$" snap-right.txt
'

test_case '--base-program: OLD symbolized with its own executable' '
	mkdir old && cp $PROGS/rebuild old/prog &&
	run_preloaded ./prog && take_core new.core &&
	heapprof-analyze -f collapsed --base old.core --base-program old/prog ./prog new.core >diff.txt &&
	expect_grep ";main;extra 50\$" diff.txt && expect_no_grep "big\|small\|prog+0x" diff.txt &&
	heapprof-analyze -f collapsed --base old.core ./prog new.core >nodiff.txt 2>/dev/null &&
	expect_grep ";main;big 300000\$" nodiff.txt
'

test_case '--base-program without --base: a usage error' '
	heapprof-analyze --base-program old/prog ./prog new.core >out 2>err; [ $? = 64 ] &&
	expect_grep "^heapprof-analyze: --base-program names the executable of --base" err
'
