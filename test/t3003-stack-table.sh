#!/bin/sh
# Block format v2 end to end: whole deep stacks, stacks cut at the limit, many threads
# inserting the same stacks at once, a damaged table, sampling, and a v1 core.
. "$(dirname "$0")/lib.sh"

ST=$PROGS/stacktab

# deep_check REPORT BYTES LEAF_PARENT N: the collapsed line holding BYTES goes from the
# root through LEAF_PARENT, N deep_down frames, to deep_leaf
deep_check()
{
	line=$(grep " $2\$" "$1") &&
	[ "$(echo "$line" | tr ';' '\n' | grep -c '^deep_down$')" = "$4" ] &&
	echo "$line" | grep -q "^[^ ]*;$3;deep_down;.*;deep_down;deep_leaf $2\$" &&
	! echo "$line" | grep -q '^\[truncated\]' || { echo "bad line: $line"; return 1; }
}

test_case 'stacks 50 frames deep come back whole, from main and from the thread entry' '
	run_preloaded $ST deep 50 && take_core deep.core &&
	heapprof-analyze -f collapsed $ST deep.core >deep.txt 2>deep.err &&
	deep_check deep.txt 4000 run_deep 51 &&
	deep_check deep.txt 8000 deep_thread 51 &&
	grep -q "start_thread;deep_thread;" deep.txt &&
	grep -q "^_start;.*;main;run_deep;deep_down" deep.txt
'

test_case 'a 300-frame stack is whole with HEAPPROF_FRAMES=1024' '
	HEAPPROF_FRAMES=1024 run_preloaded $ST deep 300 && take_core deep300.core &&
	heapprof-analyze -f collapsed $ST deep300.core >deep300.txt &&
	deep_check deep300.txt 4000 run_deep 301
'

# cut at 20 frames, the main thread's and the thread's stacks are the same 20 frames
test_case 'a stack cut at HEAPPROF_FRAMES is marked: [truncated] root, a note in text' '
	HEAPPROF_FRAMES=20 run_preloaded $ST deep 50 && take_core cut.core &&
	heapprof-analyze -f collapsed $ST cut.core >cut.txt &&
	line=$(grep " 12000\$" cut.txt) &&
	echo "$line" | grep -q "^\[truncated\];deep_down;.*;deep_leaf 12000\$" &&
	[ "$(echo "$line" | tr ";" "\n" | wc -l)" = 21 ] &&
	heapprof-analyze --top=0 $ST cut.core >cut.text &&
	grep -qi "cut at 20 frames" cut.text
'

test_case '8 threads insert the same 100 stacks at once: each stored once, exact bytes' '
	run_preloaded $ST race 8 100 && take_core race.core &&
	! grep -q twice prog.err &&
	heapprof-analyze -f collapsed $ST race.core >race.txt &&
	[ "$(grep -c ";race_leaf 128\$" race.txt)" = 100 ] &&
	expect_bytes race_leaf 12800 race.txt
'

# spoil PERIOD FILL IN OUT: a copy of core IN with every PERIOD-th v2 stack record, or
# with FILL=page the whole page around it, overwritten
spoil()
{
	python3 - "$@" <<-'EOF'
	import struct, sys
	period, fill, src, dst = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
	data = bytearray(open(src, "rb").read())
	magic = struct.pack("<Q", 0xA3E153544B563243)
	at, n, hit = data.find(magic), 0, 0
	while at >= 0:
	    if at % 8 == 0:
	        n += 1
	        if n % period == 0:
	            hit += 1
	            if fill == "page":
	                base = at - at % 4096
	                data[base:base + 4096] = bytes(4096)
	            else:
	                data[at + 32] ^= 0xFF     # the first pc
	    at = data.find(magic, at + 1)
	open(dst, "wb").write(data)
	print(hit)
	EOF
}

# total REPORT: the bytes of every stack in a collapsed report
total() { awk '{ s += $NF } END { print s }' "$1"; }

test_case 'a damaged stack record costs only its stacks: [unknown stack], same total' '
	hit=$(spoil 2 record race.core bad.core) && [ "$hit" -gt 40 ] &&
	heapprof-analyze -f collapsed $ST bad.core >bad.txt 2>bad.err &&
	[ "$(total bad.txt)" = "$(total race.txt)" ] &&
	unknown=$(awk "/^\[unknown stack\] / { print \$NF }" bad.txt) &&
	[ "$unknown" -gt 0 ] &&
	[ "$unknown" = $(( $(total race.txt) - $(grep -v "^\[unknown stack\]" bad.txt | total /dev/stdin) )) ] &&
	grep -q "unknown stack" bad.err &&
	heapprof-analyze $ST bad.core 2>/dev/null | grep -qi "unknown stack"
'

test_case 'a table page missing: its blocks are counted under [unknown stack]' '
	spoil 7 page race.core page.core >/dev/null &&
	heapprof-analyze -f collapsed $ST page.core >page.txt 2>page.err &&
	[ "$(total page.txt)" = "$(total race.txt)" ] &&
	grep -q "^\[unknown stack\] [1-9]" page.txt
'

# Sampling with a fixed seed. One block of s bytes is taken with p = 1 - exp(-s/P) and
# counts s/p bytes, so n such blocks estimate n*s with sd = s * sqrt(n (1-p) / p):
# at P = 65536, 20,000 x 3,000 bytes: sd 1.96e6 (3.3%); 100,000 x 100: sd 0.81e6
# (8.1%). A realloc is a new allocation with a new draw: 20,000 blocks grown from 100
# to 3,000 bytes estimate 60,000,000 with the big ones' sd (3.3%); 20,000 shrunk from
# 3,000 to 300 bytes estimate 6,000,000 with sd 300 * sqrt(20000 (1-p) / p), p =
# 1 - exp(-300/65536): 0.63e6 (10.4%). The test allows 4 sd.
test_case 'HEAPPROF_SAMPLE=65536: estimates within 4 sd of the truth, marked as sampled' '
	HEAPPROF_SAMPLE=65536 HEAPPROF_SEED=12345 run_preloaded $ST sampled &&
	take_core sampled.core &&
	heapprof-analyze -f collapsed $ST sampled.core >sampled.txt &&
	big=$(awk "/;sampled_big / { s += \$NF } END { print s }" sampled.txt) &&
	small=$(awk "/;sampled_small / { s += \$NF } END { print s }" sampled.txt) &&
	echo "estimates: $big (60000000), $small (10000000)" &&
	[ "$big" -gt $((60000000 - 4 * 1960000)) ] && [ "$big" -lt $((60000000 + 4 * 1960000)) ] &&
	[ "$small" -gt $((10000000 - 4 * 810000)) ] && [ "$small" -lt $((10000000 + 4 * 810000)) ] &&
	grown=$(awk "/;sampled_grown / { s += \$NF } END { print s }" sampled.txt) &&
	shrunk=$(awk "/;sampled_shrunk / { s += \$NF } END { print s }" sampled.txt) &&
	echo "realloc estimates: $grown (60000000), $shrunk (6000000)" &&
	[ "$grown" -gt $((60000000 - 4 * 1960000)) ] && [ "$grown" -lt $((60000000 + 4 * 1960000)) ] &&
	[ "$shrunk" -gt $((6000000 - 4 * 630000)) ] && [ "$shrunk" -lt $((6000000 + 4 * 630000)) ] &&
	heapprof-analyze $ST sampled.core >sampled.text &&
	grep -qi "sampled" sampled.text && grep -q "65,536\|65536" sampled.text
'

test_case 'a v1 core (test/data/v1, heapprof 0.1.0) still gives its report' '
	heapprof-analyze -q -f collapsed $TEST_DIR/data/v1/v1prog $TEST_DIR/data/v1/v1prog.core.gz \
		>v1.txt &&
	expect_bytes v1_small 300 v1.txt &&
	expect_bytes v1_big 5000 v1.txt &&
	[ "$(total v1.txt)" = 9396 ]
'
