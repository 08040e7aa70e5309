#!/bin/sh
# Untrusted input: missing, foreign, truncated and corrupted files give one line on
# stderr and exit 2, or a partial report with a warning; never a crash or a hang.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# one_line_exit2 ARGS...: exit 2 with exactly one "heapprof-analyze: " line
one_line_exit2()
{
	heapprof-analyze "$@" >out 2>err; rc=$?
	[ $rc = 2 ] && ! test -s out && [ "$(wc -l <err)" = 1 ] && grep -q "^heapprof-analyze: " err ||
	{ echo "args [$*]: status $rc"; cat err; return 1; }
}

test_case 'a real core to spoil' '
	run_preloaded $PROGS/sites small=100x1000 big=1x300000 smash-small=3 &&
	take_core good.core &&
	heapprof-analyze -f collapsed $PROGS/sites good.core >good.txt 2>good.err &&
	expect_bytes site_small 97000 good.txt
'

test_case 'a header the program overwrote is rejected and counted, not reported' '
	grep -q "skipped 3 damaged headers: bad check value" good.err &&
	heapprof-analyze $PROGS/sites good.core 2>/dev/null >good.text &&
	grep -q "rejected:   3 headers" good.text
'

# A stray write of one bit: the rest of the header still reads as one, so it is damaged,
# not a word that shares the tags' 16 bits by chance (noise).
test_case 'a header whose check value alone a stray write changed: damaged' '
	run_preloaded $PROGS/sites small=10x100 flip-small=2 &&
	take_core flip.core &&
	heapprof-analyze -f collapsed $PROGS/sites flip.core >flip.txt 2>flip.err &&
	expect_bytes site_small 800 flip.txt &&
	expect_grep "warning: skipped 2 damaged headers: bad check value" flip.err &&
	heapprof-analyze -f json $PROGS/sites flip.core >flip.json 2>/dev/null &&
	expect_eq damaged 2 "$(jnum damaged flip.json)"
'

test_case 'missing files' '
	one_line_exit2 $PROGS/sites nonexistent.core && grep -q "cannot open .nonexistent.core.: No such file" err &&
	one_line_exit2 ./nonexistent good.core && grep -q "cannot open .*nonexistent" err
'

test_case 'not an ELF file, an empty file, a directory' '
	echo "hello" >text.core && : >empty.core && mkdir dir.core &&
	one_line_exit2 $PROGS/sites text.core && grep -q "not an ELF file" err &&
	one_line_exit2 $PROGS/sites empty.core &&
	one_line_exit2 $PROGS/sites dir.core
'

test_case 'an ELF file that is not a core, and the arguments swapped' '
	one_line_exit2 $PROGS/sites $PROGS/sites && grep -q "not a core" err &&
	one_line_exit2 good.core $PROGS/sites
'

test_case 'a core of another architecture than PROGRAM' '
	cp good.core arm.core &&
	printf "\267\000" | dd of=arm.core bs=1 seek=18 conv=notrunc 2>/dev/null &&
	one_line_exit2 $PROGS/sites arm.core && grep -q "aarch64 core but .* x86_64 program" err
'

test_case 'the wrong PROGRAM: a build-id warning, and the core'"'"'s own files are used' '
	heapprof-analyze -f collapsed $PROGS/demo good.core >wrong.txt 2>wrong.err &&
	grep -q "^heapprof-analyze: warning: PROGRAM .*demo. does not match the core (build-id" wrong.err &&
	expect_bytes site_small 97000 wrong.txt
'

# Its allocator's chunks are the blocks (t3023 has the exact figures); a dump whose
# allocator cannot be read either is one line (t5003's random bytes).
test_case 'a core of a program run without heapprof.so: its chunks, said first' '
	$PROGS/sites small=10x100 >plain.out &
	pid=$! && sleep 0.5 && gcore -o plain $pid >/dev/null 2>&1; kill -9 $pid;
	heapprof-analyze $PROGS/sites plain.$pid >plain.txt 2>err &&
	! test -s err &&
	sed -n 4p plain.txt | grep -q "^  untagged:   no heapprof blocks in plain.$pid: its [0-9,]* in-use chunks of glibc 2\.[0-9]* ([0-9,]* bytes, usable sizes) are the blocks, with no stacks\$" &&
	grep -q "^    \[untagged: an allocator.s chunk with no heapprof header\]\$" plain.txt ||
	{ cat plain.txt err; false; }
'

# no report is status 2 with its one line in every format: a pipeline reading JSON sees
# the status, never an empty document or an empty -o file (issue 32 item 8). Random
# bytes hold no heapprof block and no allocator to read.
test_case 'no heapprof blocks with -f json: status 2, one line, no document, no -o file' '
	$PROGS/mkdump -R 3 -n 65536 noise.bin &&
	one_line_exit2 -f json --raw noise.bin@0x10000 $PROGS/sites &&
	grep -q "no heapprof blocks in .noise.bin@0x10000. (was .* run with LD_PRELOAD=heapprof.so?), and its allocator cannot be read: " err &&
	rm -f none.json && one_line_exit2 -f json -o none.json --raw noise.bin@0x10000 $PROGS/sites &&
	expect_eq "-o file written" "" "$(ls none.json 2>/dev/null)"
'

# heapprof.so under UBSan pulls in libstdc++, whose emergency EH pool stays live
if [ -n "${SANITIZE:-}" ]; then
	skip_case 'a core of a program run with heapprof.so that had freed everything' \
		"heapprof.so built with SANITIZE=$SANITIZE keeps libstdc++'s pool live"
else
test_case 'a core of a program run with heapprof.so that had freed everything' '
	run_preloaded $PROGS/nolive &&
	take_core nolive.core &&
	one_line_exit2 $PROGS/nolive nolive.core &&
	grep -q "heapprof.so was loaded in .nolive.core. (pid [0-9]*) but no block was live: everything allocated had been freed" err &&
	! grep -q "LD_PRELOAD" err
'
fi

# overlap.py CORE: move the second PT_LOAD with bytes 8 bytes above the first (ELF64 LE)
cat >overlap.py <<'PY'
import struct, sys
f = open(sys.argv[1], "r+b"); d = f.read()
phoff, = struct.unpack_from("<Q", d, 0x20); ent, n = struct.unpack_from("<HH", d, 0x36)
loads = [phoff + i * ent for i in range(n)
         if struct.unpack_from("<I", d, phoff + i * ent)[0] == 1 and
         struct.unpack_from("<Q", d, phoff + i * ent + 0x20)[0] > 0]
a, b = loads[0], loads[1]
f.seek(b + 0x10); f.write(struct.pack("<Q", struct.unpack_from("<Q", d, a + 0x10)[0] + 8))
print("%#x %#x" % (struct.unpack_from("<Q", d, a + 8)[0], struct.unpack_from("<Q", d, b + 8)[0]))
PY

test_case 'a core whose PT_LOAD headers overlap: the segment left out is named' '
	cp good.core ov.core && offs=$(python3 overlap.py ov.core) &&
	kept=${offs% *} && left=${offs#* } &&
	heapprof-analyze -f collapsed $PROGS/sites ov.core >ov.txt 2>ov.err &&
	cat ov.err &&
	grep -q "warning: 1 segments of the core overlap others and were left out" ov.err &&
	grep -q "warning: core segment at file offset $left \[0x[0-9a-f]*, 0x[0-9a-f]*) overlaps the one at file offset $kept \[0x[0-9a-f]*, 0x[0-9a-f]*) and was left out: [0-9]* of its bytes differ from or lie outside it, and blocks there are not counted" ov.err &&
	! grep -q "raw image" ov.err &&
	expect_bytes site_small 97000 ov.txt
'

test_case 'a truncated core: partial report and a warning, or one line' '
	size=$(wc -c <good.core) &&
	head -c $((size / 2)) good.core >half.core &&
	heapprof-analyze -f collapsed $PROGS/sites half.core >half.txt 2>half.err; rc=$?
	{ [ $rc = 0 ] && grep -q "truncated" half.err; } || { [ $rc = 2 ] && [ "$(wc -l <half.err)" = 1 ]; } &&
	head -c 100 good.core >tiny.core && one_line_exit2 $PROGS/sites tiny.core
'

test_case 'a damaged gzip core' '
	gzip -c good.core | head -c 300000 >cut.core.gz &&
	heapprof-analyze $PROGS/sites cut.core.gz >/dev/null 2>cut.err; rc=$?
	[ $rc = 0 -o $rc = 2 ] && grep -q "^heapprof-analyze: " cut.err
'

test_case 'corrupted bytes anywhere: 40 mangled cores, no crash' '
	for seed in $(seq 1 40); do
		cp good.core m.core && $PROGS/mangle m.core $seed 2000 &&
		timeout 60 heapprof-analyze -f collapsed $PROGS/sites m.core >m.out 2>m.err; rc=$?
		if [ $rc != 0 ] && [ $rc != 2 ]; then echo "seed $seed: status $rc"; cat m.err; exit 1; fi
		if grep -qv "^heapprof-analyze: " m.err; then echo "seed $seed:"; cat m.err; exit 1; fi
	done
'
