#!/bin/sh
# What a copied core (compressed, or from a pipe) costs in $TMPDIR, and what the
# analyzer says when the copy fails: pages of zeros are holes, so a small compressed
# file whose headers promise gigabytes of zeros takes almost no disk; a damaged
# compressed core is called damaged, not too big for the disk.
. "$(dirname "$0")/lib.sh"
need_tool zstd
need_tool python3

# core_header PROMISE: an x86_64 ELF core header and one PT_LOAD of PROMISE bytes at
# file offset 4096, padded to 4096 bytes
core_header()
{
	python3 -c 'import struct, sys
n = int(sys.argv[1])
eh = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 4, 62, 1, 0, 64,
                 0, 0, 64, 56, 1, 0, 0, 0)
ph = struct.pack("<IIQQQQQQ", 1, 6, 4096, 0x10000000, 0, n, n, 4096)
sys.stdout.buffer.write((eh + ph).ljust(4096, b"\0"))' "$1"
}

# The analyzer is held by a FIFO that stays open after 1 GiB of zeros and one page of
# 0xff; once its copy has that size, its allocated blocks are what the zeros cost.
test_case 'a zstd core of 1 GiB of zeros (3 GiB promised) takes no disk for the zeros' '
	core_header $((3 << 30)) >hdr &&
	{ cat hdr; head -c 1G /dev/zero; head -c 4096 /dev/zero | tr "\0" "\377"; } |
		zstd -q -1 >zeros.zst &&
	test $(wc -c <zeros.zst) -lt 200000 &&
	want=$((4096 + (1 << 30) + 4096)) && mkdir tmp && mkfifo in &&
	{ { cat zeros.zst; exec sleep 60; } >in & } && writer=$! &&
	{ TMPDIR=$PWD/tmp heapprof-analyze $PROGS/sites in >out 2>err & } && pid=$! &&
	size=0 i=0 && while [ $i -lt 600 ]; do
		for fd in /proc/$pid/fd/*; do
			case $(readlink $fd) in */heapprof-core.*) copy=$fd ;; esac
		done
		size=$(stat -L -c %s ${copy:-/nonexistent} 2>/dev/null || echo 0)
		[ "$size" -ge $want ] && break
		i=$((i + 1)) && sleep 0.1
	done
	kb=$(($(stat -L -c "%b * %B" ${copy:-/nonexistent} 2>/dev/null || echo 0) / 1024))
	kill $pid $writer 2>/dev/null; wait $pid 2>/dev/null
	echo "copy: $size of $want bytes, $kb KiB on disk" && cat err &&
	[ "$size" -ge $want ] && [ $kb -lt 4096 ]
'

# A gzip core in stored (uncompressed) deflate blocks, one byte of it changed: it
# inflates without a complaint until the CRC at the end, as a real damaged core may.
# The byte is the top one of p_filesz: the headers then promise exabytes.
damaged_gzip()
{
	{ core_header 8192 && head -c 8192 /dev/zero | tr "\0" "\021"; } >good.core &&
	python3 -c 'import sys, zlib
c = zlib.compressobj(0, zlib.DEFLATED, 31)
d = bytearray(c.compress(sys.stdin.buffer.read()) + c.flush())
assert d[10] & 6 == 0 and d[15:19] == b"\x7fELF"  # one stored block, the core at 15
d[15 + 64 + 32 + 7] = int(sys.argv[1], 0)
sys.stdout.buffer.write(d)' "$1" <good.core >"$2" &&
	! gzip -t "$2" 2>/dev/null
}

# one_line_exit2 ARGS...: exit 2 within 20 s with exactly one "heapprof-analyze: " line
one_line_exit2()
{
	timeout 20 heapprof-analyze "$@" >out 2>err; rc=$?
	[ $rc = 2 ] && ! test -s out && [ "$(wc -l <err)" = 1 ] && grep -q "^heapprof-analyze: " err ||
	{ echo "args [$*]: status $rc"; cat err; return 1; }
}

test_case 'a damaged gzip core whose headers promise more than any disk: called damaged' '
	damaged_gzip 0xe9 past.gz && one_line_exit2 $PROGS/sites past.gz &&
	grep -q "'"'past.gz' is a damaged gzip file: incorrect data check"'" err &&
	damaged_gzip 0x10 huge.gz && one_line_exit2 $PROGS/sites huge.gz &&
	grep -q "'"'huge.gz' is a damaged gzip file: incorrect data check"'" err
'

test_case 'the same core undamaged is read, and too big for the disk is still said so' '
	gzip -c good.core >good.gz && one_line_exit2 $PROGS/sites good.gz &&
	grep -q "no heapprof blocks in .good.gz." err &&
	core_header $((1 << 60)) | gzip >big.gz && one_line_exit2 $PROGS/sites big.gz &&
	grep -q "promise 1152921504606851072 bytes but only [0-9]* are free there" err
'

# Not zeros: 512 MiB of one byte, which zstd keeps in a few KiB, under headers that
# promise 1 GiB. The copy stops at 1000 times the compressed size (past 64 MiB).
test_case 'a zstd bomb of non-zero bytes stops at --max-ratio, not at the disk' '
	core_header $((1 << 30)) >hdr &&
	{ cat hdr; head -c 512M /dev/zero | tr "\0" "\252"; } | zstd -q -1 >bomb.zst &&
	test $(wc -c <bomb.zst) -lt 1000000 &&
	mkdir -p tmp && ! TMPDIR=$PWD/tmp heapprof-analyze $PROGS/sites bomb.zst >out 2>err &&
	grep -q "^heapprof-analyze: .bomb.zst. inflates to more than 1000 times its [0-9]* compressed bytes" err &&
	! TMPDIR=$PWD/tmp heapprof-analyze --max-ratio=0 $PROGS/sites bomb.zst >out 2>err0 &&
	! grep -q "inflates to more than" err0
'

# The bound heapprof report passes for a snapshot another user wrote: a plain CORE (by
# name or on stdin) by its size, a compressed one by what its headers promise, refused
# before a byte is copied; at exactly the limit it is read as always.
test_case 'a CORE over --max-size is refused before it is mapped or copied' '
	core_header 8192 >small.core && head -c 8192 /dev/zero >>small.core &&
	n=$(wc -c <small.core) && mkdir -p tmp2 &&
	one_line_exit2 --max-size=$((n - 1)) $PROGS/sites small.core &&
	grep -q "^heapprof-analyze: .small.core. is too big: $n bytes, more than --max-size=$((n - 1))$" err &&
	timeout 20 heapprof-analyze --max-size=$((n - 1)) $PROGS/sites - <small.core >out 2>err; test $? = 2 &&
	grep -q "^heapprof-analyze: .-. is too big: $n bytes" err &&
	one_line_exit2 --max-size=$n $PROGS/sites small.core && grep -q "no heapprof blocks" err &&
	core_header $((1 << 30)) | gzip >promise.gz &&
	TMPDIR=$PWD/tmp2 one_line_exit2 --max-size=$((1 << 20)) $PROGS/sites promise.gz &&
	grep -q "^heapprof-analyze: .promise.gz. is too big: its ELF headers promise $((4096 + (1 << 30))) bytes, more than --max-size=1048576$" err &&
	test -z "$(ls tmp2)"
'
