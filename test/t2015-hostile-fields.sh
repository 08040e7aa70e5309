#!/bin/sh
# Real cores with what the analyzer met badly: fields it reads without a check word
# over them, set to the extremes a damaged or hostile dump can hold, and a program whose
# debug info has a unit with no function. Each report is still made (exit 0, nothing on
# stderr), its figures are the true ones, and under the sanitizers (make check
# SANITIZE=address,undefined) no arithmetic on them overflows and no library call gets
# a NULL array.
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool python3

P=$PROGS/lifetimes
INT64_MAX=9223372036854775807
UINT64_MAX=18446744073709551615

# ring_times.py CORE: in every event ring (heapprof_format.h: w2 N, w3 written, then N
# slots of 6 words, s4 the time, s5 the sequence number) a free at the process record's
# start + INT64_MAX ns, every other call at start - 2^63 (INT64_MIN); prints the rings
cat >ring_times.py <<'PY'
import struct, sys
RING, PROC, FREE = 0xA3E152494E475632, 0xA3E150524F435632, 10
d = bytearray(open(sys.argv[1], "rb").read())
def at(magic):
    k, i = struct.pack("<Q", magic), -1
    while (i := d.find(k, i + 1)) >= 0:
        if i % 8 == 0:
            yield i
start = {struct.unpack_from("<Q", d, p + 32)[0] for p in at(PROC)}
assert len(start) == 1, start
start, rings = start.pop(), 0
for p in at(RING):
    w2, written = struct.unpack_from("<QQ", d, p + 16)
    n = w2 >> 32
    if not 0 < n <= 1 << 20:
        continue
    for seq in range(max(1, written - n + 1), written + 1):
        s = p + 32 + (seq - 1) % n * 48
        if s + 48 <= len(d) and struct.unpack_from("<Q", d, s + 40)[0] == seq:
            t = (1 << 63) - 1 if d[s] == FREE else -(1 << 63)
            struct.pack_into("<Q", d, s + 32, (start + t) % (1 << 64))
    rings += 1
open(sys.argv[1], "wb").write(d)
print(rings)
PY

test_case 'event rings whose calls are at the ends of time: --events prints them' '
	HEAPPROF_EVENTS=4096 run_preloaded $P 100 && take_core lt.core &&
	cp lt.core far.core && python3 ring_times.py far.core >rings &&
	expect_num "rings patched" "$(cat rings)" -ge 1 &&
	heapprof-analyze --events $P far.core >ev.txt 2>err && expect_same /dev/null err &&
	grep "^\[thread [0-9]* lifetimes\] " ev.txt >calls &&
	grep " free(" calls >freed && grep -v " free(" calls >made &&
	expect_num "frees" "$(wc -l <freed)" -ge 100 && expect_num "calls" "$(wc -l <made)" -ge 100 &&
	expect_num "frees at another time" "$(grep -vc " +9223372036\.854775 s #" freed)" -eq 0 &&
	expect_num "calls at another time" "$(grep -vc " -9223372036\.854775 s #" made)" -eq 0
'

# a free INT64_MAX after the call that made its block, INT64_MIN: 2^64 - 1 ns apart,
# and the sum of five of them stops at 2^64 - 1, not wrapping below its largest term
test_case '--lifetimes across the whole range of times: exact spans, sums that stop' '
	heapprof-analyze --lifetimes --metric=alloc_objects -f json $P far.core >lt.json 2>err &&
	expect_same /dev/null err && json_valid lt.json &&
	python3 -c "import json
d = json.load(open(\"lt.json\"))
print(\"end_ns\", d[\"lifetimes\"][\"end_ns\"])
for s in d[\"stacks\"]:
    l = s[\"lifetime\"]
    if s[\"path\"][-1] in (\"site_slow\", \"site_counted\"):
        print(s[\"path\"][-1], l[\"freed\"], l[\"freed_min_ns\"], l[\"freed_max_ns\"], l[\"freed_sum_ns\"])
" | sort >got &&
	cat >want <<-EOF &&
	end_ns $INT64_MAX
	site_counted 1 $UINT64_MAX $UINT64_MAX $UINT64_MAX
	site_slow 5 $UINT64_MAX $UINT64_MAX $UINT64_MAX
	EOF
	expect_same want got &&
	heapprof-analyze --lifetimes --metric=alloc_objects --top=0 $P far.core >lt.txt 2>err &&
	expect_same /dev/null err &&
	expect_grep "^  lifetimes: 5 freed after [0-9.]* s on average (18446744073\.710 s to 18446744073\.710 s)\$" lt.txt
'

# asm_alloc is assembly: its unit in the debug info has an address range and no
# function, and the index of that unit's functions is empty (under the sanitizers this
# stopped the analyzer: qsort of a NULL list)
if [ "$(uname -m)" = x86_64 ]; then
	test_case 'a frame in a unit of assembly: named by its symbol, exact bytes' '
		run_preloaded $PROGS/asmsite && take_core asm.core &&
		heapprof-analyze -f collapsed $PROGS/asmsite asm.core >asm.txt 2>err &&
		expect_same /dev/null err && expect_bytes asm_alloc 777 asm.txt &&
		expect_grep "^[^ ]*main;asm_alloc 777\$" asm.txt
	'
else
	skip_case 'a frame in a unit of assembly: named by its symbol, exact bytes' \
		'test/progs/asmsite_x86_64.S is x86-64 assembly'
fi
