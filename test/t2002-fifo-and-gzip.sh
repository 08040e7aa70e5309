#!/bin/sh
# Inputs that could stall or flood the analyzer: FIFOs and devices given as CORE,
# PROGRAM or --raw, or named inside a core; gzip cores that inflate past what their
# ELF headers promise, that are no core at all, or that are cut short. Each must end
# quickly with one line (or a report and a warning), never hang or fill $TMPDIR.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# one_line_exit2 ARGS...: exit 2 within 20 s with exactly one "heapprof-analyze: " line
one_line_exit2()
{
	timeout 20 heapprof-analyze "$@" >out 2>err; rc=$?
	[ $rc = 2 ] && ! test -s out && [ "$(wc -l <err)" = 1 ] && grep -q "^heapprof-analyze: " err ||
	{ echo "args [$*]: status $rc"; cat err; return 1; }
}

test_case 'a FIFO as CORE, PROGRAM or --raw image is refused at once' '
	mkfifo fifo &&
	one_line_exit2 $PROGS/sites fifo && grep -q "'"'fifo' is not a regular file (a FIFO)"'" err &&
	one_line_exit2 fifo fifo && grep -q "not a regular file (a FIFO)" err &&
	one_line_exit2 --raw fifo@0x1000 $PROGS/sites && grep -q "not a regular file (a FIFO)" err &&
	one_line_exit2 $PROGS/sites /dev/null && grep -q "not a regular file (a character device)" err
'

test_case 'CORE - from a pipe is refused with the same message' '
	echo | one_line_exit2 $PROGS/sites - &&
	grep -q "'"'-' (standard input) is not a regular file (a FIFO)"'" err
'

# A program and its library run from copy/, so that the core names files there.
test_case 'a core of a program run from a copy' '
	mkdir copy && cp $PROGS/sites $PROGS/libsite.so copy/ &&
	run_preloaded ./copy/sites small=10x1000 lib=2x5000 &&
	take_core copy.core &&
	timeout 20 heapprof-analyze -f collapsed $PROGS/sites copy.core >copy.txt 2>copy.err &&
	expect_bytes site_small 10000 copy.txt
'

test_case 'a FIFO where the core names a library: skipped with a warning, still a report' '
	rm copy/libsite.so && mkfifo copy/libsite.so &&
	timeout 20 heapprof-analyze -f collapsed $PROGS/sites copy.core >lib.txt 2>lib.err &&
	grep -q "warning: .*copy/libsite.so.*not a regular file (a FIFO)" lib.err &&
	expect_bytes site_small 10000 lib.txt
'

test_case 'a FIFO where the core names the executable: skipped, PROGRAM still used' '
	rm copy/libsite.so copy/sites && cp $PROGS/libsite.so copy/ && mkfifo copy/sites &&
	timeout 20 heapprof-analyze -f collapsed $PROGS/sites copy.core >exe.txt 2>exe.err &&
	grep -q "warning: .*copy/sites.*not a regular file (a FIFO)" exe.err &&
	expect_bytes site_small 10000 exe.txt
'
