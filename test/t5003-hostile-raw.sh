#!/bin/sh
# Hostile raw images, written by progs/mkdump: noise, headers cut at either edge of the
# image, impossible fields, images of one byte, at the top of a 64-bit or 32-bit address
# space, overlapping, in the wrong byte order. Each gives a report (exit 0) or one line
# (exit 2), never a crash; the expected reports are exact.
. "$(dirname "$0")/lib.sh"

MKDUMP=$PROGS/mkdump
PROG=$PROGS/sites-nopie

# one_line_exit2 ARGS...: exit 2 with exactly one "heapprof-analyze: " line
one_line_exit2()
{
	heapprof-analyze "$@" >out 2>err; rc=$?
	[ $rc = 2 ] && ! test -s out && [ "$(wc -l <err)" = 1 ] && grep -q "^heapprof-analyze: " err ||
	{ echo "args [$*]: status $rc"; cat err; return 1; }
}

# collapsed ARGS...: exit 0, the collapsed report in out, warnings in err
collapsed()
{
	heapprof-analyze -f collapsed "$@" >out 2>err || { echo "args [$*]: status $?"; cat err; return 1; }
}

# pc FUNC: an address inside FUNC of sites-nopie, as a return address into it would be
pc()
{
	printf '0x%x\n' $((0x$(nm "$PROG" | awk -v f="$1" '$3 == f { print $1 }') + 4))
}

SMALL=$(pc site_small) BIG=$(pc site_big) MAIN=$(pc main)

test_case 'fixture: two live blocks and a spoilt one, exact report' '
	$MKDUMP fix.bin 0x10100:1000:$SMALL,$MAIN 0x10200:24:$BIG,$MAIN 0x10300:5:$SMALL:check=bad &&
	collapsed --raw fix.bin@0x10000 $PROG &&
	printf "main;site_small 1000\nmain;site_big 24\n" >expect && expect_same expect out &&
	expect_grep "^heapprof-analyze: warning: skipped 1 candidates: bad check value" err
'

test_case 'random bytes: one line, exit 2' '
	for seed in 1 2 3; do
		$MKDUMP -R $seed -n 1048576 noise.bin &&
		one_line_exit2 --raw noise.bin@0x10000 $PROG &&
		grep -q "no heapprof blocks in .noise.bin@0x10000." err || exit 1
	done
'

test_case 'random bytes around live blocks: exactly those count' '
	$MKDUMP -R 9 -n 65536 mixed.bin 0x10040:777:$SMALL 0x18000:3:$BIG,$MAIN &&
	collapsed --raw mixed.bin@0x10000 $PROG &&
	printf "site_small 777\nmain;site_big 3\n" >expect && expect_same expect out
'

test_case 'a header in the last bytes of the image counts; one cut at its start does not' '
	$MKDUMP -n 256 edges.bin 0x10100:77:$SMALL,$MAIN 0x10040:9:$BIG,$MAIN,$MAIN &&
	collapsed --raw edges.bin@0x10000 $PROG &&
	echo "main;site_small 77" >expect && expect_same expect out &&
	expect_grep "skipped 1 candidates: header cut off at an edge of the memory image" err &&
	$MKDUMP -n 64 cut.bin 0x10030:9:$BIG,$MAIN &&
	one_line_exit2 --raw cut.bin@0x10000 $PROG &&
	expect_grep "1 candidates rejected, most for: header cut off at an edge" err
'

test_case 'impossible fields: 255 frames, offsets, 4-byte pcs, unknown flags and version' '
	$MKDUMP -n 8192 fields.bin 0x10100:1:$SMALL:nframes=255 0x10300:2:$SMALL:offset=52 \
		0x10500:3:$SMALL:offset=4294967288 0x10700:4:$SMALL:wsize=4 \
		0x10900:5:$SMALL:flags=0x10000 0x10b00:6:$BIG:flags=1 0x10d00:7:$SMALL:version=3 &&
	collapsed --raw fields.bin@0x10000 $PROG &&
	echo "site_big 6" >expect && expect_same expect out &&
	expect_grep "skipped 4 candidates: impossible frame count, word size or offset" err &&
	expect_grep "skipped 1 candidates: unknown incompatible flags" err &&
	expect_grep "skipped 1 candidates: unknown format version" err &&
	$MKDUMP -n 256 v3.bin 0x10100:7:$SMALL:version=3 &&
	one_line_exit2 --raw v3.bin@0x10000 $PROG &&
	expect_grep "format version 3; this analyzer reads versions 1 and 2" err &&
	$MKDUMP -n 256 nf.bin 0x10100:7:$SMALL:nframes=255 &&
	one_line_exit2 --raw nf.bin@0x10000 $PROG &&
	expect_grep "most for: impossible frame count" err
'

test_case 'images of 0, 1 and 7 bytes; a missing image; a directory' '
	$MKDUMP -n 1 one.bin && one_line_exit2 --raw one.bin@0x10000 $PROG &&
	$MKDUMP -n 7 seven.bin && one_line_exit2 --raw seven.bin@0x10001 $PROG &&
	: >empty.bin && one_line_exit2 --raw empty.bin@0x10000 $PROG && expect_grep "is empty" err &&
	one_line_exit2 --raw nonexistent.bin@0x10000 $PROG && expect_grep "No such file" err &&
	mkdir dir.bin && one_line_exit2 --raw dir.bin@0x10000 $PROG && expect_grep "not a regular file" err
'

test_case 'the top of a 64-bit space: an image ending at 2^64, one running past it' '
	$MKDUMP -a 0xffffffffffffff00 -n 256 top.bin 0xffffffffffffff80:5:$SMALL 0:77:$BIG &&
	collapsed --raw top.bin@0xffffffffffffff00 $PROG &&
	echo "site_small 5" >expect && expect_same expect out &&
	expect_grep "skipped 1 candidates: impossible frame count, word size or offset" err &&
	one_line_exit2 --raw top.bin@0xffffffffffffff08 $PROG && expect_grep "runs past the end" err &&
	heapprof-analyze --raw top.bin@0x10000000000000000 $PROG 2>err; [ $? = 64 ]
'

test_case '32-bit big-endian PROGRAM: an image ending at 2^32, one past it, 2^32 as user pointer' '
	$MKDUMP -E -w 4 -B -m 8 mips.elf &&
	$MKDUMP -w 4 -B -a 0xffffff00 -n 256 top32.bin 0xffffff80:5:0x401234,0x400010 \
		0x100000000:77:0x401234 &&
	collapsed --raw top32.bin@0xffffff00 mips.elf &&
	echo "0x400010;0x401234 5" >expect && expect_same expect out &&
	expect_grep "skipped 1 candidates: impossible frame count, word size or offset" err &&
	one_line_exit2 --raw top32.bin@0xffffff08 mips.elf && expect_grep "runs past the end" err &&
	one_line_exit2 --raw top32.bin@0x100000000 mips.elf && expect_grep "runs past the end" err
'

test_case 'every word size and byte order read as its PROGRAM says, in text and collapsed' '
	for t in "8 big 22 s390x" "4 big 8 mips" "4 little 40 armhf"; do
		set -- $t
		be=; [ $2 = big ] && be=-B
		$MKDUMP -E -w $1 $be -m $3 $4.elf &&
		$MKDUMP -w $1 $be -a 0x400000 $4.bin 0x400100:1000:0x401234,0x400010 \
			0x400200:24:0x401300 &&
		collapsed --raw $4.bin@0x400000 $4.elf &&
		printf "0x400010;0x401234 1000\n0x401300 24\n" >expect && expect_same expect out &&
		heapprof-analyze --raw $4.bin@0x400000 $4.elf >$4.text 2>/dev/null &&
		grep -q "^  memory:     $4.bin@0x400000 ($(($1 * 8))-bit $2-endian)\$" $4.text ||
		{ cat $4.text; exit 1; }
	done
'

test_case 'the wrong byte order or word size for PROGRAM finds no block: one line' '
	one_line_exit2 --raw s390x.bin@0x400000 $PROG && expect_grep "no heapprof blocks" err &&
	one_line_exit2 --raw armhf.bin@0x400000 $PROG &&
	expect_grep "2 candidates rejected, most for: impossible frame count, word size" err
'

test_case 'overlapping images: each block counts once, a warning says so' '
	$MKDUMP -n 4096 ov.bin 0x10100:1000:$SMALL 0x10f00:24:$BIG &&
	collapsed --raw ov.bin@0x10000 --raw ov.bin@0x10800 --raw ov.bin@0x10000 $PROG &&
	printf "site_small 1000\nsite_big 24\n" >expect && expect_same expect out &&
	expect_grep "warning: 2 raw images overlap others and were left out" err &&
	expect_grep "warning: raw image .ov.bin. \[0x10800, 0x11800) overlaps .ov.bin. \[0x10000, 0x11000) and was left out: 4096 of its bytes differ from or lie outside it, and blocks there are not counted" err &&
	expect_grep "warning: raw image .ov.bin. \[0x10000, 0x11000) overlaps .ov.bin. \[0x10000, 0x11000) and was left out: it holds the same bytes, so no block is hidden" err
'

test_case 'two overlapping images: the one left out is named, and the block it hides' '
	$MKDUMP -n 4096 a.bin 0x10100:1000:$SMALL,$MAIN &&
	$MKDUMP -a 0x10800 -n 4096 b.bin 0x10900:77:$BIG,$MAIN &&
	collapsed --raw b.bin@0x10800 --raw a.bin@0x10000 $PROG &&
	printf "main;site_small 1000\n" >expect && expect_same expect out &&
	expect_grep "warning: 1 raw images overlap others and were left out" err &&
	expect_grep "warning: raw image .b.bin. \[0x10800, 0x11800) overlaps .a.bin. \[0x10000, 0x11000) and was left out: 4096 of its bytes differ from or lie outside it, and blocks there are not counted" err
'

test_case 'images at unaligned addresses: headers are found on 8-byte target addresses only' '
	$MKDUMP -a 0x10004 -n 4096 odd.bin 0x10100:1000:$SMALL 0x10f00:24:$BIG &&
	collapsed --raw odd.bin@0x10004 $PROG &&
	printf "site_small 1000\nsite_big 24\n" >expect && expect_same expect out &&
	one_line_exit2 --raw odd.bin@0x10000 $PROG
'

test_case 'bad --raw and --module arguments: exit 64' '
	for a in "--raw fix.bin" "--raw @0x10" "--raw fix.bin@zz" "--raw fix.bin@" \
		"--raw fix.bin@0x10000 --module x" "--load-base 0x1000"; do
		heapprof-analyze $a $PROG >out 2>err; rc=$?
		[ $rc = 64 ] && grep -q "^heapprof-analyze: " err || { echo "[$a]: status $rc"; exit 1; }
	done
'

test_case 'corrupted bytes anywhere in a dense image: 40 mangled copies, no crash' '
	blocks= && i=0 &&
	while [ $i -lt 64 ]; do
		blocks="$blocks $((0x10100 + i * 256)):$((i + 1)):$SMALL,$BIG,$MAIN,$MAIN,$BIG"; i=$((i + 1))
	done &&
	$MKDUMP -n 16640 dense.bin $blocks &&
	collapsed --raw dense.bin@0x10000 $PROG && expect_bytes site_small 2080 out &&
	for seed in $(seq 1 40); do
		cp dense.bin m.bin && $PROGS/mangle m.bin $seed 200 &&
		heapprof-analyze -f collapsed --raw m.bin@0x10000 $PROG >m.out 2>m.err; rc=$?
		if [ $rc != 0 ] && [ $rc != 2 ]; then echo "seed $seed: status $rc"; cat m.err; exit 1; fi
		if grep -qv "^heapprof-analyze: " m.err; then echo "seed $seed:"; cat m.err; exit 1; fi
	done
'
