#!/bin/sh
# Block format version 2 in raw images written by progs/mkdump: the join of blocks,
# sites and stacks as the writers print it ([truncated], [unknown stack], estimates
# when sampled), and the messages of an image with a process record and no block.
. "$(dirname "$0")/lib.sh"

MKDUMP=$PROGS/mkdump
PROG=$PROGS/sites-nopie

collapsed()
{
	heapprof-analyze -f collapsed "$@" >out 2>err || { echo "args [$*]: status $?"; cat err; return 1; }
}

pc()
{
	printf '0x%x\n' $((0x$(nm "$PROG" | awk -v f="$1" '$3 == f { print $1 }') + 4))
}

SMALL=$(pc site_small) BIG=$(pc site_big) MAIN=$(pc main)

# stacks 1 (site_small <- main), 2 (site_big, cut at the frame limit); sites 1..2
RECS="proc@0x10000 stack@0x10100:1:$SMALL,$MAIN stack@0x10180:2:$BIG,$MAIN:truncated
	site@0x10200:1:1 site@0x10240:2:2"

test_case 'v2: exact bytes per stack; a cut stack starts with [truncated]' '
	$MKDUMP -n 8192 a.bin $RECS 0x10400:1000:$SMALL,$MAIN v2@0x10810:300:1 \
		v2@0x10910:24:2:shift=1 v2@0x10a10:7:0 &&
	collapsed --raw a.bin@0x10000 $PROG &&
	printf "main;site_small 1300\n[truncated];main;site_big 24\n[no stack] 7\n" >expect &&
	expect_same expect out && ! test -s err
'

test_case 'v2 text report: the cut stack says so' '
	$MKDUMP -n 8192 a.bin $RECS v2@0x10910:24:2 &&
	heapprof-analyze --raw a.bin@0x10000 $PROG >out 2>err &&
	grep -q "^    (stack cut at 2 frames)\$" out
'

test_case 'v2: a damaged stack record, a missing site: [unknown stack] with exact bytes, a warning' '
	$MKDUMP -n 8192 b.bin proc@0x10000 stack@0x10100:1:$SMALL,$MAIN \
		stack@0x10180:2:$BIG,$MAIN:check=bad site@0x10200:1:1 site@0x10240:2:2 \
		v2@0x10810:300:1 v2@0x10910:24:2 v2@0x10a10:5:9 &&
	collapsed --raw b.bin@0x10000 $PROG &&
	printf "main;site_small 300\n[unknown stack] 29\n" >expect && expect_same expect out &&
	grep -q "warning: 2 blocks (29 bytes) have no readable stack record: shown as \[unknown stack\]" err &&
	heapprof-analyze --raw b.bin@0x10000 $PROG >out 2>/dev/null &&
	grep -q "^  unknown:    2 blocks (29 bytes) have no readable stack record\$" out &&
	grep -q "^    \[unknown stack: no readable stack record\]\$" out
'

test_case 'v2: tags with a bad check are noise unless they name a known site' '
	$MKDUMP -n 8192 c.bin $RECS v2@0x10810:300:1 v2@0x10a10:5:77:check=bad &&
	collapsed --raw c.bin@0x10000 $PROG && ! test -s err &&
	$MKDUMP -n 8192 c.bin $RECS v2@0x10810:300:1 v2@0x10a10:5:1:check=bad &&
	collapsed --raw c.bin@0x10000 $PROG &&
	grep -q "warning: skipped 1 damaged headers" err && ! grep -q "skipped 1 candidates" err
'

test_case 'v2 sampled: estimates, marked as such in the text header' '
	$MKDUMP -n 8192 d.bin proc@0x10000:period=1000 stack@0x10100:1:$SMALL,$MAIN \
		site@0x10200:1:1 v2@0x10810:2000:1:sampled v2@0x10910:100:1:sampled \
		v2@0x10a10:50:1 &&
	collapsed --raw d.bin@0x10000 $PROG &&
	want=$(awk "BEGIN { w1 = 1 / (1 - exp(-2)); w2 = 1 / (1 - exp(-0.1));
		printf \"%d\", 50 + int(2000 * w1 + 100 * w2 + 0.5) }") &&
	echo "main;site_small $want" >expect && expect_same expect out &&
	heapprof-analyze --raw d.bin@0x10000 $PROG >out 2>/dev/null &&
	grep -q "^  sampled:    one per 1,000 bytes on average; figures are estimates\$" out &&
	$MKDUMP -n 8192 e.bin stack@0x10100:1:$SMALL,$MAIN site@0x10200:1:1 \
		v2@0x10810:2000:1:sampled &&
	collapsed --raw e.bin@0x10000 $PROG && echo "main;site_small 2000" >expect &&
	expect_same expect out && grep -q "no process record gives the sample period" err
'

test_case 'v2: heapprof.so loaded but no live block; records cut at the image end' '
	$MKDUMP -n 4096 f.bin proc@0x10000 stack@0x10100:1:$SMALL,$MAIN site@0x10200:1:1 &&
	heapprof-analyze --raw f.bin@0x10000 $PROG >out 2>err; [ $? = 2 ] &&
	grep -q "^heapprof-analyze: heapprof.so was loaded in .f.bin@0x10000. (pid [0-9]*) but no block was live: everything allocated had been freed\$" err &&
	$MKDUMP -n 4096 f2.bin proc@0x10000 &&
	heapprof-analyze --raw f2.bin@0x10000 $PROG >out 2>err; [ $? = 2 ] &&
	grep -q "^heapprof-analyze: heapprof.so was loaded in .f2.bin@0x10000. (pid [0-9]*) but recorded no allocation: its malloc was never called" err &&
	$MKDUMP -n 4096 g.bin &&
	heapprof-analyze --raw g.bin@0x10000 $PROG >out 2>err; [ $? = 2 ] &&
	grep -q "was .* run with LD_PRELOAD=heapprof.so" err &&
	$MKDUMP -n 0x110 h.bin site@0x10000:1:1 v2@0x10080:9:1 stack@0x10100:1:$SMALL,$MAIN &&
	collapsed --raw h.bin@0x10000 $PROG && echo "[unknown stack] 9" >expect &&
	expect_same expect out && grep -q "skipped 1 candidates: header cut off" err
'

# slab tables (a pool's blocks named out of band): slot I is the block at START + 48 +
# I * STRIDE; bad slot words (size 17 over a stride of 16, size 0, flag bit 61) and a
# table with a bad check name nothing, and the analyzer says how many it skipped
test_case 'v2 slab tables: slots are blocks without a header, exact; bad ones skipped and said' '
	$MKDUMP -n 8192 s.bin $RECS slab@0x10400:0x7f0000004000:64:48/1,0,40/1,64/2 \
		slab@0x10600:0x7f0000008000:16:16/1,=0x0000001100000001,=0x5,=0x2000001000000001 \
		slab@0x10700:0x7f000000c000:16:16/1:check=bad &&
	collapsed --raw s.bin@0x10000 $PROG &&
	printf "main;site_small 104\n[truncated];main;site_big 64\n" >expect && expect_same expect out &&
	cat >expect <<-\EOF &&
	heapprof-analyze: warning: skipped 1 candidates: bad check value (stale, copied or overwritten header)
	heapprof-analyze: warning: skipped 3 slab table slots: a size of 0 or over the stride, or an unknown flag
	EOF
	expect_same expect err
'

test_case 'v2: -j1 and -j2 give the same report' '
	$MKDUMP -n 8192 a.bin $RECS 0x10400:1000:$SMALL,$MAIN v2@0x10810:300:1 \
		v2@0x10910:24:2:shift=1 v2@0x10a10:7:0 &&
	heapprof-analyze -j1 --raw a.bin@0x10000 $PROG >one 2>/dev/null &&
	heapprof-analyze -j2 --raw a.bin@0x10000 $PROG >two 2>/dev/null &&
	expect_same one two
'
