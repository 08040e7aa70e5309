#!/bin/sh
# CORE in every form it may come in: plain, gzip, zstd or xz (told by content), from a
# pipe, from '-' or from a named FIFO. Each must give the same report as the plain
# file; cut streams and decompression bombs end the same safe way as gzip's do
# (t2002), and compressions we do not read get a hint.
. "$(dirname "$0")/lib.sh"
need_tool zstd
need_tool xz

V1=$TEST_DIR/data/v1

# one_line_exit2 ARGS...: exit 2 within 20 s with exactly one "heapprof-analyze: " line
one_line_exit2()
{
	timeout 20 heapprof-analyze "$@" >out 2>err; rc=$?
	[ $rc = 2 ] && ! test -s out && [ "$(wc -l <err)" = 1 ] && grep -q "^heapprof-analyze: " err ||
	{ echo "args [$*]: status $rc"; cat err; return 1; }
}

# run_as NAME PROGRAM CORE [< input]: NAME.out, NAME.err (the core's name made CORE),
# NAME.rc; the three together are what "reads the same" compares
run_as()
{
	name=$1 core=$3
	timeout 60 heapprof-analyze -f collapsed "$2" "$core" >$name.out 2>$name.raw
	echo $? >$name.rc
	sed "s|'$core'|'CORE'|g; s|in $core\$|in CORE|" $name.raw >$name.err
}

same_as_plain()
{
	for f in out err rc; do expect_same plain.$f $1.$f || return 1; done
}

test_case 'the v1 fixture: plain, gzip, zstd, xz, pipes, - and a FIFO read the same' '
	gzip -dc $V1/v1prog.core.gz >v1.core && zstd -q v1.core -o v1.zst && xz -k v1.core &&
	run_as plain $V1/v1prog v1.core && [ "$(cat plain.rc)" = 0 ] &&
	expect_grep "main;v1_big 5000\$" plain.out &&
	run_as gz $V1/v1prog $V1/v1prog.core.gz && sed -i "s|$V1/v1prog.core.gz|CORE|" gz.err &&
	same_as_plain gz &&
	run_as zst $V1/v1prog v1.zst && same_as_plain zst &&
	run_as xz $V1/v1prog v1.core.xz && same_as_plain xz &&
	cat v1.core | run_as pipe $V1/v1prog - && same_as_plain pipe &&
	run_as redirect $V1/v1prog - <v1.core && same_as_plain redirect &&
	cat v1.zst | run_as zpipe $V1/v1prog - && same_as_plain zpipe &&
	run_as xzredirect $V1/v1prog - <v1.core.xz && same_as_plain xzredirect &&
	mkfifo fifo && { cat v1.core.xz >fifo & } && run_as fifo $V1/v1prog fifo &&
	same_as_plain fifo && cp plain.out v1.out
'

test_case 'concatenated zstd frames and xz streams are one core, the rest ignored' '
	cat v1.zst v1.zst >two.zst &&
	timeout 20 heapprof-analyze -f collapsed $V1/v1prog two.zst >two.out 2>two.err &&
	expect_same v1.out two.out &&
	expect_grep "warning: .two.zst. inflates to more than the 155648 bytes its ELF headers promise" two.err
'

if command -v gcore >/dev/null; then
	# A real program's core. With a preload newer than the analyzer it may hold no
	# blocks this analyzer reads: the outcome (report or one line) must still match.
	test_case 'a real core: plain, zstd, xz, a pipe and - read the same' '
		run_preloaded $PROGS/sites small=10x1000 lib=2x5000 && take_core real.core &&
		zstd -q -1 real.core -o real.zst && xz -1 -T1 -k real.core &&
		run_as plain $PROGS/sites real.core &&
		run_as zst $PROGS/sites real.zst && same_as_plain zst &&
		run_as xz $PROGS/sites real.core.xz && same_as_plain xz &&
		cat real.core | run_as pipe $PROGS/sites - && same_as_plain pipe &&
		zstd -q -c real.core | run_as zpipe $PROGS/sites - && same_as_plain zpipe &&
		run_as redirect $PROGS/sites - <real.core.xz && same_as_plain redirect
	'

	# What zstd -d and xz -d make of a cut stream is the plain core it must read as.
	for z in zst xz; do
	test_case "a $z stream cut in half reads as the bytes before the cut" '
		f=$(ls real.*'$z') && size=$(wc -c <$f) && head -c $((size / 2)) $f >cut.'$z' &&
		{ '$([ $z = zst ] && echo zstd || echo xz)' -dc cut.'$z' >partial.core 2>/dev/null; true; } &&
		test -s partial.core &&
		run_as plain $PROGS/sites partial.core && run_as cut $PROGS/sites cut.'$z' &&
		expect_same plain.out cut.out && expect_same plain.rc cut.rc &&
		if [ "$(cat cut.rc)" = 0 ]; then
			expect_grep "warning: .CORE.: '$([ $z = zst ] && echo zstd || echo xz)' stream is cut short after" cut.err
		else
			[ "$(wc -l <cut.err)" = 1 ]
		fi
	'
	done
else
	skip_case 'a real core: plain, zstd, xz, a pipe and - read the same' 'gdb (gcore) is not installed'
fi

# Bombs as in t2002: the fixture's stream, then frames or streams of 64 MiB of zeros;
# ulimit -f caps what the analyzer may write far below the 2 GiB they inflate to.
test_case 'a zstd bomb stops at the size the ELF headers promise, with a warning' '
	head -c 64M /dev/zero | zstd -q -1 >zeros.zst &&
	cp v1.zst bomb.zst && for i in $(seq 32); do cat zeros.zst >>bomb.zst; done &&
	mkdir -p tmp && limit=$(( $(wc -c <v1.core) / 512 + 64 )) &&
	( ulimit -f $limit && TMPDIR=$PWD/tmp timeout 20 heapprof-analyze -f collapsed \
		$V1/v1prog bomb.zst >bomb.out 2>bomb.err ) &&
	expect_grep "warning: .bomb.zst. inflates to more than the 155648 bytes its ELF headers promise" bomb.err &&
	expect_same v1.out bomb.out && [ -z "$(ls tmp)" ]
'

test_case 'an xz bomb through a pipe stops the same way' '
	head -c 64M /dev/zero | xz -1 -T1 >zeros.xz &&
	mkdir -p tmp && limit=$(( $(wc -c <v1.core) / 512 + 64 )) &&
	( ulimit -f $limit && { cat v1.core.xz; for i in $(seq 32); do cat zeros.xz; done; } |
		TMPDIR=$PWD/tmp timeout 20 heapprof-analyze -f collapsed $V1/v1prog - \
		>bomb.out 2>bomb.err ) &&
	expect_grep "warning: .-. inflates to more than the 155648 bytes its ELF headers promise" bomb.err &&
	expect_same v1.out bomb.out && [ -z "$(ls tmp)" ]
'

test_case 'a plain pipe that runs on past the core: the rest ignored, with a warning' '
	{ cat v1.core; head -c 10M /dev/zero; } |
		timeout 20 heapprof-analyze -f collapsed $V1/v1prog - >on.out 2>on.err &&
	expect_grep "warning: .-. runs on to more than the 155648 bytes" on.err &&
	expect_same v1.out on.out
'

test_case 'compressed data that is no core, or nothing, from a pipe: one line' '
	head -c 100000 /dev/zero | zstd -q | one_line_exit2 $V1/v1prog - &&
	grep -q "'"'-' is not an ELF core (inside zstd): no ELF header"'" err &&
	xz -c $V1/v1prog | one_line_exit2 $V1/v1prog - &&
	expect_grep "not an ELF core (inside xz): an ELF file of another type" err &&
	: | one_line_exit2 $V1/v1prog - && grep -q "'"'-' is not an ELF core: nothing inside"'" err &&
	head -c 20 v1.zst | one_line_exit2 $V1/v1prog - &&
	expect_grep "(inside zstd): its stream is cut short before the ELF header" err
'

test_case 'bzip2 and lz4 cores: a hint to decompress them first' '
	bzip2 -c v1.core >v1.bz2 && one_line_exit2 $V1/v1prog v1.bz2 &&
	grep -q "'"'v1.bz2' is compressed with bzip2: decompress it first"'" err &&
	if command -v lz4 >/dev/null; then
		lz4 -q -c v1.core >v1.lz4 && one_line_exit2 $V1/v1prog v1.lz4 &&
		expect_grep "is compressed with lz4: decompress it first" err
	fi
'

test_case 'a device as CORE, and PROGRAM or --raw from a pipe, are still refused' '
	one_line_exit2 $V1/v1prog /dev/null &&
	grep -q "'"'/dev/null' is not a regular file or a pipe (a character device)"'" err &&
	mkfifo pfifo && one_line_exit2 pfifo v1.core && expect_grep "not a regular file (a FIFO)" err &&
	one_line_exit2 --raw pfifo@0x1000 $V1/v1prog && expect_grep "not a regular file (a FIFO)" err
'
