#!/bin/sh
# Cores taken without heapprof.so: every chunk glibc holds in use is a block with its
# usable size and no stack. test/progs/shop.cc keeps 2,000 Order of 64 bytes and 500
# Customer of 96 (each owning a 200-byte buffer), drops 300 Session of 48 and keeps
# 500 more buffers: --by=type, --leaks (against valgrind memcheck), retained bytes by
# type, --why by type and address, --base of two such cores, --memory, JSON; the same
# program under heapprof.so gives the same counts with exact bytes; mangled heaps.
. "$(dirname "$0")/lib.sh"
need_tool gcore

S=$PROGS/shop

# the usable sizes shop measured: "usable Order 72 Customer 104 Session 56 buffer 200"
usable()
{
	sed -n "s/^usable .*$1 \([0-9]*\).*/\1/p" plain.usable
}

# thousands NUMBER: as the text report prints it
thousands()
{
	printf "%s" "$1" | sed ':a; s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta'
}

test_case 'cores of the shop program: without heapprof.so, a later moment, and under it' '
	run_plain $S && cp prog.out plain.usable && take_core plain.core &&
	run_plain $S more && take_core more.core &&
	run_preloaded $S && take_core tagged.core &&
	grep -q "^usable Order [0-9]* Customer [0-9]* Session [0-9]* buffer 200$" plain.usable
'

test_case 'the report'"'"'s first lines say the chunks are the blocks; exit 0, no warning' '
	heapprof-analyze $S plain.core >plain.txt 2>err && ! test -s err &&
	sed -n 4p plain.txt >line &&
	grep -q "^  untagged:   no heapprof blocks in plain.core: its [0-9,]* in-use chunks of glibc 2\.[0-9]* ([0-9,]* bytes, usable sizes) are the blocks, with no stacks$" line ||
	{ cat plain.txt err; false; }
'

test_case '--by=type: exactly 2,000 Order, 500 Customer, 300 Session, at usable sizes' '
	heapprof-analyze --by=type $S plain.core >types.txt 2>err && ! test -s err &&
	sed -n 1p types.txt | grep -q "^  untagged:   no heapprof blocks" &&
	sed "1,3d" types.txt | grep -v "\[untyped\]$" >typed &&
	o=$(usable Order) c=$(usable Customer) s=$(usable Session) &&
	printf "%16s %12s  %s\n" $(thousands $((2000 * o))) 2,000 Order \
		$(thousands $((500 * c))) 500 Customer $(thousands $((300 * s))) 300 Session >want &&
	expect_same want typed &&
	untyped=$(awk "/\[untyped\]$/ { gsub(/,/, \"\", \$2); print \$2 }" types.txt) &&
	[ "$untyped" -ge 1000 ] || { echo "untyped blocks: $untyped, not the 1,000 buffers" >&2; false; }
'

test_case 'json: "types" and "untagged", in the schema' '
	heapprof-analyze --by=type -f json $S plain.core >types.json &&
	json_valid types.json &&
	python3 -c "import json
j = json.load(open(\"types.json\"))
u = j[\"untagged\"]
print(u[\"only\"], u[\"allocator\"].startswith(\"glibc 2.\"), u[\"blocks\"] == j[\"summary\"][\"live_blocks\"])
for t in j[\"types\"]:
    if t[\"type\"]:
        print(t[\"type\"], t[\"blocks\"], t[\"bytes\"])" >got &&
	printf "%s\n" "True True True" "Order 2000 $((2000 * $(usable Order)))" \
		"Customer 500 $((500 * $(usable Customer)))" "Session 300 $((300 * $(usable Session)))" >want &&
	expect_same want got
'

test_case '--leaks: exactly the 300 Sessions are definitely lost, nothing else lost' '
	heapprof-analyze --leaks=all $S plain.core >leaks.txt &&
	s=$(usable Session) &&
	expect_grep -x "  definitely lost: $(thousands $((300 * s))) bytes in 300 blocks" leaks.txt &&
	grep -qx "  indirectly lost: 0 bytes in 0 blocks" leaks.txt &&
	grep -qx "    possibly lost: 0 bytes in 0 blocks" leaks.txt &&
	heapprof-analyze --leaks -f collapsed $S plain.core >leaks.col &&
	echo "[definitely lost];[untagged] $((300 * s))" >want && expect_same want leaks.col &&
	heapprof-analyze --leaks --by=type $S plain.core | sed "1,3d" >lost &&
	printf "%16s %12s  %s\n" $(thousands $((300 * s))) 300 Session >want && expect_same want lost
'

if command -v valgrind >/dev/null 2>&1 && [ -n "$(valgrind --version 2>/dev/null)" ]; then
test_case 'valgrind memcheck on the same program agrees: 300 blocks definitely lost, Sessions' '
	valgrind --leak-check=full --leak-check-heuristics=none --run-libc-freeres=no \
		--log-file=vg.log $S exit >/dev/null &&
	sed -n "s/^==[0-9]*==    definitely lost: \([0-9,]*\) bytes in \([0-9,]*\) blocks$/\1 \2/p" vg.log >vg &&
	echo "14,400 300" >want && expect_same want vg &&
	grep -A2 "14,400 bytes in 300 blocks are definitely lost" vg.log | grep -q "drop_sessions" &&
	n=$(sed -n "s/^  definitely lost: [0-9,]* bytes in \([0-9,]*\) blocks$/\1/p" leaks.txt) &&
	[ "$n" = 300 ] || { echo "ours: $n blocks" >&2; false; }
'
else
skip_case 'valgrind memcheck on the same program agrees: 300 blocks definitely lost, Sessions' \
	'valgrind is not installed'
fi

test_case 'under heapprof.so: the same counts with exact bytes, and the stack that lost them' '
	heapprof-analyze --by=type $S tagged.core | sed "1,2d" | grep -v "\[untyped\]$" >typed &&
	printf "%16s %12s  %s\n" 128,000 2,000 Order 48,000 500 Customer 14,400 300 Session >want &&
	expect_same want typed &&
	heapprof-analyze --leaks -f collapsed $S tagged.core >tl.col &&
	expect_bytes drop_sessions 14400 tl.col && [ $(wc -l <tl.col) = 1 ]
'

test_case 'retained bytes by type: a Customer keeps its buffer, exact under heapprof.so' '
	heapprof-analyze --by=type --metric=retained_space $S plain.core >ret.txt &&
	c=$(usable Customer) b=$(usable buffer) &&
	grep -q "^ *$(thousands $((500 * c))) *500 *$(thousands $((500 * (c + b))))  Customer$" ret.txt &&
	heapprof-analyze --by=type --metric=retained_space -f json $S tagged.core >ret.json &&
	json_valid ret.json &&
	grep -q "{\"type\": \"Customer\", \"blocks\": 500, \"bytes\": 48000, \"retained_bytes\": 148000}" ret.json ||
	{ cat ret.txt; false; }
'

test_case '--why by type and by address on untagged blocks' '
	heapprof-analyze --why="^Customer\$" --top=1 $S plain.core >why.txt &&
	grep -q "^why alive: 500 blocks match .\^Customer\\$." why.txt &&
	grep -q "^  root: global customers (shop+0x[0-9a-f]*)$" why.txt &&
	grep -q "^retained by the 500 blocks: $(thousands $((500 * ($(usable Customer) + 200)))) bytes in 1,000 blocks" why.txt &&
	heapprof-analyze --why="^Session\$" --top=1 $S plain.core >lost.txt &&
	grep -q "^why alive: 300 blocks match" lost.txt && grep -q "no root reaches it (lost)" lost.txt &&
	addr=$(sed -n "s/^0x\([0-9a-f]*\): .*/\1/p" why.txt | head -1) &&
	heapprof-analyze --why=0x$addr $S plain.core >one.txt &&
	grep -q "^why alive: 1 blocks match .0x$addr.$" one.txt &&
	grep -q "^  root: global customers" one.txt || { cat why.txt one.txt; false; }
'

test_case '--base of two untagged cores by type: the 500 Orders made since' '
	heapprof-analyze --by=type --base=plain.core $S more.core >base.txt &&
	sed -n 4p base.txt >first &&
	printf "%16s %12s  %s\n" +$(thousands $((500 * $(usable Order)))) +500 Order >want &&
	expect_same want first &&
	! sed "1,4d" base.txt | grep -v " +0 *+0  " &&
	heapprof-analyze --by=type --base=plain.core -f json $S more.core >base.json &&
	json_valid base.json
'

test_case '--memory as for any core: the chunks in use, untagged' '
	heapprof-analyze --memory $S plain.core >mem.txt &&
	n=$(sed -n "s/^  untagged:   no heapprof blocks in plain.core: its \([0-9,]*\) in-use.*/\1/p" mem.txt | tr -d ,) &&
	grep -q "^  allocator:  glibc 2\.[0-9]*, 1 arenas in 1 heaps" mem.txt &&
	m=$(sed -n "s/^    in use, untagged *[0-9,]* bytes in \([0-9,]*\) chunks$/\1/p" mem.txt | tr -d ,) &&
	[ $((m - n)) -ge 0 ] && [ $((m - n)) -le 2 ] || { echo "blocks $n, chunks $m" >&2; cat mem.txt; false; }
'

test_case '--untagged on a tagged core: the chunks from before tagging, under [untagged]' '
	heapprof-analyze -f json $S tagged.core >t.json &&
	heapprof-analyze --untagged -f json $S tagged.core >u.json && json_valid u.json &&
	python3 -c "import json
t, j = json.load(open(\"t.json\")), json.load(open(\"u.json\"))
u = j[\"untagged\"]
un = [s for s in j[\"stacks\"] if s[\"path\"] == [\"[untagged]\"]]
print(u[\"only\"], u[\"blocks\"] > 0, len(un) == 1 and un[0][\"blocks\"] == u[\"blocks\"],
      j[\"summary\"][\"live_blocks\"] == t[\"summary\"][\"live_blocks\"] + u[\"blocks\"])" >got &&
	echo "False True True True" >want && expect_same want got &&
	heapprof-analyze --untagged --peak $S tagged.core >out 2>err; [ $? = 64 ] &&
	grep -qx "heapprof-analyze: --untagged counts the chunks live now: no --peak or --events with it" err
'

test_case 'hostile: mangled heaps of an untagged core, bounded, no crash' '
	python3 "$SRC_DIR/test/fuzz/seedgen.py" cut-untagged plain.core cut.core &&
	for seed in $(seq 1 20); do
		cp cut.core m.core && $PROGS/mangle m.core $seed 400 &&
		timeout 60 heapprof-analyze --leaks=all --by=type $S m.core >m.out 2>m.err; rc=$?
		if [ $rc != 0 ] && [ $rc != 2 ]; then echo "seed $seed: status $rc"; cat m.err; exit 1; fi
		if grep -qv "^heapprof-analyze: " m.err; then echo "seed $seed:"; cat m.err; exit 1; fi
	done
'
