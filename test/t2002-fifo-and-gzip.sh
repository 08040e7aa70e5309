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

# CORE may be a pipe or a FIFO (it is copied first: t2003); PROGRAM and --raw may not.
test_case 'a FIFO as PROGRAM or --raw image, a device as CORE: refused at once' '
	mkfifo fifo &&
	one_line_exit2 fifo fifo && grep -q "'"'fifo' is not a regular file (a FIFO)"'" err &&
	one_line_exit2 --raw fifo@0x1000 $PROGS/sites && expect_grep "not a regular file (a FIFO)" err &&
	one_line_exit2 $PROGS/sites /dev/null &&
	expect_grep "not a regular file or a pipe (a character device)" err
'

test_case 'CORE - from a pipe that holds no core: one line' '
	echo | one_line_exit2 $PROGS/sites - &&
	grep -q "'"'-' is not an ELF core: no ELF header"'" err
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
	expect_grep "warning: .*copy/libsite.so.*not a regular file (a FIFO)" lib.err &&
	expect_bytes site_small 10000 lib.txt
'

test_case 'a FIFO where the core names the executable: skipped, PROGRAM still used' '
	rm copy/libsite.so copy/sites && cp $PROGS/libsite.so copy/ && mkfifo copy/sites &&
	timeout 20 heapprof-analyze -f collapsed $PROGS/sites copy.core >exe.txt 2>exe.err &&
	expect_grep "warning: .*copy/sites.*not a regular file (a FIFO)" exe.err &&
	expect_bytes site_small 10000 exe.txt
'

# The race between a check and a reopen, played by a preloaded shim that turns the file
# into a FIFO at its second blocking open (the core's library is another build now, so
# it used to be opened by name by libdwfl's listing, then again when its frames were
# named). Opened once, without blocking, and checked on that descriptor, nothing is
# left to swap: no hang, a warning, still a report.
test_case 'a library swapped for a FIFO between its check and a reopen: no hang' '
	rm -f copy/sites copy/libsite.so && cp $PROGS/sites copy/ &&
	cp $PROGS/libplugin.so copy/libsite.so &&
	HP_SWAP_PATH=$PWD/copy/libsite.so HP_SWAP_LOG=$PWD/swap.log \
	ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$PROGS/libopenswap.so \
		timeout 20 heapprof-analyze -f collapsed $PROGS/sites copy.core >swap.txt 2>swap.err &&
	expect_bytes site_small 10000 swap.txt &&
	expect_grep "warning: module .*copy/libsite.so. at 0x[0-9a-f]* has build-id" swap.err &&
	expect_no_grep plain swap.log && [ "$(grep -c nonblock swap.log)" = 1 ] && test -f copy/libsite.so
'

# gzip cores. A bomb is the real core's gzip followed by gzip members of 64 MiB of
# zeros each (concatenated members are one valid gzip stream): 2 GiB inflated from a
# few MiB, made in well under a second. ulimit -f caps what the analyzer may write:
# dash counts 512-byte blocks, bash 1024; either way far below the bomb.
test_case 'a gzip core inflates and gives the same report' '
	gzip -1 -c copy.core >copy.core.gz &&
	timeout 20 heapprof-analyze -f collapsed $PROGS/sites copy.core.gz >gz.txt 2>gz.err &&
	expect_bytes site_small 10000 gz.txt && expect_no_grep gzip gz.err
'

test_case 'a gzip bomb stops at the size the ELF headers promise, with a warning' '
	head -c 64M /dev/zero | gzip -1 >zeros.gz &&
	cp copy.core.gz bomb.gz && for i in $(seq 32); do cat zeros.gz >>bomb.gz; done &&
	limit=$(( $(wc -c <copy.core) / 512 + 64 )) && mkdir tmp &&
	( ulimit -f $limit && TMPDIR=$PWD/tmp timeout 20 heapprof-analyze -f collapsed \
		$PROGS/sites bomb.gz >bomb.txt 2>bomb.err ) &&
	expect_grep "warning: .bomb.gz. inflates to more than the $(wc -c <copy.core) bytes its ELF headers promise" bomb.err &&
	expect_bytes site_small 10000 bomb.txt && [ -z "$(ls tmp)" ]
'

test_case 'a gzip that is no ELF core is refused before a few KiB are written' '
	cat zeros.gz zeros.gz >notcore.gz &&
	( ulimit -f 8 && one_line_exit2 $PROGS/sites notcore.gz ) &&
	grep -q "'"'notcore.gz' is not an ELF core (inside gzip)"'" err &&
	gzip -c $PROGS/sites >prog.gz && one_line_exit2 $PROGS/sites prog.gz &&
	expect_grep "not an ELF core (inside gzip): an ELF file of another type" err
'

test_case 'a gzip core cut in half: a cut-short warning and still a report' '
	size=$(wc -c <copy.core.gz) && head -c $((size / 2)) copy.core.gz >cut.gz &&
	timeout 20 heapprof-analyze -f collapsed $PROGS/sites cut.gz >cut.txt 2>cut.err &&
	expect_grep "warning: .cut.gz.: gzip stream is cut short after [0-9]* bytes; the rest of the core is missing" cut.err &&
	expect_grep "truncated: [0-9]* segments cut short" cut.err && test -s cut.txt
'

test_case 'a core bigger than the room in TMPDIR is refused with the size it needs' '
	( ulimit -f 64 && one_line_exit2 $PROGS/sites copy.core.gz ) &&
	expect_grep "cannot inflate .copy.core.gz. into .*: File too large (it needs $(wc -c <copy.core) bytes" err
'
