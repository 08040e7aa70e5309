#!/bin/sh
# The heap graph (graph.c): retained bytes per stack from the dominator tree and the
# shortest path from a named root (--why), exact, on a gcore of a program whose
# ownership is known (test/progs/owners.c): a cache owning an array of entries owning
# payloads, a blob shared by two owners, a list held only from a thread's stack, a
# block held from TLS, a lost block holding another. Then retained sizes with --leaks,
# --by-thread, --region, --base, --age and --older-than, and --why with --region. Last,
# the shapes that were slow (test/progs/shapes.c): a list of 1,000,000 nodes pointing
# back to their owner, and --why through a chain of 1,000,000 blocks.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# leaf function and its retained bytes, summed, sorted: from a collapsed report
by_leaf()
{
	awk '{ n = split($0, a, " "); k = split(substr($0, 1, length($0) - length(a[n]) - 1), fr, ";");
		if (fr[k] ~ /^new_/) t[fr[k]] += a[n] } END { for (x in t) print x, t[x] }' "$1" | sort
}

cat >expected <<'EOF2'
new_blob 500
new_cache 4288
new_entries 4224
new_entry 4192
new_lost_head 80
new_lost_tail 56
new_node 160
new_owner 80
new_payload 4000
new_reg_block 16
new_tls_block 72
EOF2
# the block held from a register only exists on x86-64 (owners.c)
[ "$(uname -m)" = x86_64 ] || { grep -v new_reg_block expected >e && mv e expected; }
# the cache alone, its entries and their payloads: what is new in the nocache core's
# difference and what is old in the age core
grep "^new_cache \|^new_entr\|^new_payload " expected >cache.expected

test_case 'retained_space: exact bytes per allocating function' '
	run_preloaded $PROGS/owners &&
	take_core owners.core &&
	heapprof-analyze --metric=retained_space -f collapsed $PROGS/owners owners.core >ret.txt &&
	by_leaf ret.txt >got && expect_same expected got
'

test_case 'retained_space in text: sorted by it, live beside it' '
	heapprof-analyze --metric=retained_space --focus="^new_" --top=2 $PROGS/owners owners.core >ret.text &&
	grep -q "^  metric:     retained_space" ret.text &&
	grep "^#1 " ret.text | grep -q "4,288 bytes retained, live 64 bytes in 1 blocks" &&
	grep "^#2 " ret.text | grep -q "4,224 bytes retained, live 32 bytes in 1 blocks" &&
	grep -A2 "^#1 " ret.text | grep -q "new_cache"
'

# a block's dominators all retain it, so stacks' retained bytes overlap: the cache
# holds 4,288 bytes of the heap and its entries 4,224 of them; each is a share of the
# live heap, not of the stacks' sum, and --min-percent cuts by that share (the live
# heap is the program's blocks and whatever else the process keeps: shares from it)
test_case 'retained_space: each stack'"'"'s percent is of the live heap, not of an overlapping sum' '
	live=$(sed -n "s/^  live: .*blocks (\([0-9,]*\) bytes).*/\1/p" ret.text | tr -d ,) &&
	awk -v l="$live" "BEGIN { printf \"#1  %.1f%%  4,288 bytes retained\\n#2  %.1f%%  4,224 bytes retained\\n\", 100 * 4288 / l, 100 * 4224 / l }" >want &&
	grep "^#[12] " ret.text | sed "s/, live.*//" >got && expect_same want got &&
	min=$(awk -v l="$live" "BEGIN { printf \"%.4f\", 100 * 4210 / l }") &&
	heapprof-analyze --metric=retained_space --focus="^new_" --min-percent=$min $PROGS/owners owners.core >min.text &&
	grep "^#[0-9]" min.text | sed "s/, live.*//; s/^#[0-9]*  [0-9.]*%  //" >n &&
	printf "%s\n" "4,288 bytes retained" "4,224 bytes retained" >two && expect_same two n &&
	heapprof-analyze --metric=retained_space -f json $PROGS/owners owners.core >ret.json &&
	[ "$(jnum total ret.json)" = "$live" ]
'

test_case 'retained_space in pprof and json: a sample type, the report metric' '
	heapprof-analyze --metric=retained_space -f pprof -o ret.pb.gz $PROGS/owners owners.core &&
	[ -s ret.pb.gz ] &&
	heapprof-analyze --metric=retained_space -f json $PROGS/owners owners.core >ret.json &&
	grep -q "\"metric\": \"retained_space\"" ret.json
'

if have_pprof; then
	test_case 'the real pprof reads retained_space as the default sample type' '
		"$PPROF" -raw ret.pb.gz >raw &&
		grep -q "^inuse_space/bytes inuse_objects/count alloc_space/bytes alloc_objects/count retained_space/bytes\[dflt\]" raw &&
		grep -q "^ *64 *1 *64 *1 *4288: " raw
	'
else
	skip_case 'the real pprof reads retained_space as the default sample type' \
		"$PPROF_WHY"
fi

test_case 'retained_space with --leaks: what the lost blocks retain, per class' '
	heapprof-analyze --metric=retained_space --leaks -f collapsed $PROGS/owners owners.core >lk.txt &&
	sed "s/;.*;/ /" lk.txt >got &&
	cat >want <<-EOF2 &&
	[definitely lost] new_lost_head 80
	[indirectly lost] new_lost_tail 56
	EOF2
	expect_same want got &&
	heapprof-analyze --metric=retained_space --leaks=all -f collapsed $PROGS/owners owners.core >lka.txt &&
	grep -q "^\[still reachable\];.*;new_cache 4288$" lka.txt &&
	grep -q "^\[definitely lost\];.*;new_lost_head 80$" lka.txt &&
	heapprof-analyze --metric=retained_space --leaks $PROGS/owners owners.core >lk.text &&
	grep "^#1 " lk.text | grep -q "80 bytes retained, live 24 bytes in 1 blocks" &&
	grep -q "^  definitely lost: 24 bytes in 1 blocks" lk.text
'

test_case 'retained_space --by-thread: each stack under its thread, nothing split off' '
	heapprof-analyze --metric=retained_space --by-thread -f collapsed $PROGS/owners owners.core >bt.txt &&
	by_leaf bt.txt >got && expect_same expected got &&
	main=$(sed -n "s/^\[thread \([0-9]*\) [^]]*\];.*;new_cache [0-9]*$/\1/p" bt.txt) &&
	node=$(sed -n "s/^\[thread \([0-9]*\) [^]]*\];.*;new_node [0-9]*$/\1/p" bt.txt) &&
	[ -n "$main" ] && [ -n "$node" ] && [ "$main" != "$node" ] &&
	heapprof-analyze --metric=retained_space --by-thread --top=0 $PROGS/owners owners.core >bt.text &&
	! grep -q "retained, live 0 bytes" bt.text
'

test_case 'retained_space --region: the region'\''s blocks, what they retain' '
	heapprof-analyze --metric=retained_space --region=owners -f collapsed $PROGS/owners owners.core >rg.txt &&
	by_leaf rg.txt >got &&
	printf "new_blob 500\nnew_owner 80\n" >want && expect_same want got
'

test_case 'retained_space --base: the difference of retained bytes' '
	run_preloaded $PROGS/owners nocache &&
	take_core nocache.core &&
	heapprof-analyze --metric=retained_space --base=nocache.core -f collapsed $PROGS/owners owners.core >df.txt &&
	by_leaf df.txt >got && expect_same cache.expected got
'

test_case 'retained_space --older-than: the old blocks, what they retain; --age beside it' '
	run_preloaded $PROGS/owners age &&
	take_core age.core &&
	heapprof-analyze --metric=retained_space --older-than=1s -f collapsed $PROGS/owners age.core >old.txt &&
	by_leaf old.txt >got && expect_same cache.expected got &&
	heapprof-analyze --metric=retained_space $PROGS/owners age.core | grep "^#" >noage.stacks &&
	heapprof-analyze --metric=retained_space --age $PROGS/owners age.core >age.text &&
	grep "^#" age.text >age.stacks && expect_same noage.stacks age.stacks &&
	grep -q "^  ages: " age.text
'

test_case '--why with --older-than picks only the old blocks' '
	heapprof-analyze --why=new_cache --older-than=1s $PROGS/owners age.core >wo.txt &&
	grep -q "^why alive: 1 blocks match" wo.txt &&
	{ heapprof-analyze --why=new_owner --older-than=1s $PROGS/owners age.core 2>err; [ $? = 2 ]; } &&
	grep -q "no live block matches" err
'

test_case '--why with --region picks the region'\''s blocks; with --base it is refused' '
	heapprof-analyze --why=new_blob --region=owners $PROGS/owners owners.core >wr.txt &&
	grep -q "^why alive: 1 blocks match" wr.txt &&
	{ heapprof-analyze --why=new_cache --region=owners $PROGS/owners owners.core 2>err; [ $? = 2 ]; } &&
	grep -q "no live block matches" err &&
	{ heapprof-analyze --why=new_cache --base=owners.core $PROGS/owners owners.core 2>err; [ $? = 64 ]; } &&
	[ $(wc -l <err) = 2 ] && grep -q "^heapprof-analyze: --why cannot be combined with --base" err
'

test_case '--why: a payload held through the cache from a global' '
	heapprof-analyze --why=new_payload --top=1 $PROGS/owners owners.core >why.txt &&
	grep -q "^why alive: 4 blocks match .new_payload.; the largest shown" why.txt &&
	grep -q "^0x[0-9a-f]*: 1,000 bytes, retains 1,000 bytes, allocated at new_payload < make_cache < main" why.txt &&
	grep -q "^  root: global g_cache (owners+0x[0-9a-f]*)$" why.txt &&
	grep "^  0x" why.txt | sed "s/^  0x[0-9a-f]*  //; s/  #[0-9]*\$//" >path &&
	cat >want <<-EOF2 &&
	64 bytes  +0 ->  new_cache < make_cache < main < ...
	32 bytes  +0 ->  new_entries < make_cache < main < ...
	48 bytes  +0 ->  new_entry < make_cache < main < ...
	1,000 bytes  new_payload < make_cache < main < ...
	EOF2
	expect_same want path
'

test_case '--why -f json: the same path as data, in the schema, beside the report' '
	heapprof-analyze --why=new_payload --top=1 -f json $PROGS/owners owners.core >why.json &&
	json_valid why.json &&
	python3 -c "import json
j = json.load(open(\"why.json\"))
w = j[\"why\"]
s = w[\"shown\"][0]
print(w[\"match\"], w[\"blocks\"], len(w[\"shown\"]), s[\"bytes\"], s[\"retains\"], s[\"stack\"][0])
print(s[\"root\"][\"kind\"], s[\"root\"][\"symbol\"], s[\"root\"][\"module\"])
for h in s[\"hops\"]:
    print(h[\"bytes\"], h[\"offset\"], h[\"stack\"][0])
print(len(j[\"stacks\"]) > 0)" >got &&
	printf "%s\n" "new_payload 4 1 1000 1000 new_payload" "global g_cache owners" \
		"64 0 new_cache" "32 0 new_entries" "48 0 new_entry" "1000 None new_payload" True >want &&
	expect_same want got
'

test_case '--why with a format that cannot show paths: refused in one line, not text' '
	for f in html svg pprof collapsed; do
		heapprof-analyze --why=new_payload -f $f $PROGS/owners owners.core >out 2>err; rc=$?
		[ $rc = 64 ] && ! test -s out &&
		grep -qx "heapprof-analyze: --why gives paths of pointers, which -f $f cannot show: use -f text or json" err ||
		{ echo "-f $f: status $rc, $(wc -c <out) bytes out"; cat err; exit 1; }
	done
'

test_case '--why: the shared blob, the thread-stack list, the TLS block' '
	heapprof-analyze --why="new_blob|new_tls_block" $PROGS/owners owners.core >why2.txt &&
	grep -q "^why alive: 2 blocks match" why2.txt &&
	grep -A1 ": 500 bytes, retains 500 bytes" why2.txt | grep -q "root: global g_owner_[ab] (owners+0x" &&
	grep -A2 ": 500 bytes, retains" why2.txt | grep -q "  40 bytes  +16 ->  new_owner < make_owners < main" &&
	grep -A1 ": 72 bytes, retains 72 bytes" why2.txt | grep -q "root: thread [0-9]* TLS (0x" &&
	heapprof-analyze --why=new_node --top=1 $PROGS/owners owners.core >why3.txt &&
	grep -q "^0x[0-9a-f]*: 32 bytes, retains 32 bytes, allocated at new_node < make_list < list_thread" why3.txt &&
	grep -q "^  root: thread [0-9]* stack, frame list_thread (0x[0-9a-f]*, sp+0x[0-9a-f]*)$" why3.txt &&
	[ $(grep -c "^  0x[0-9a-f]*  32 bytes  +0 ->  new_node < make_list < list_thread" why3.txt) = 4 ] &&
	[ $(grep -c "^  0x" why3.txt) = 5 ]
'

if [ "$(uname -m)" = x86_64 ]; then
	test_case '--why: a root in a register is named' '
		heapprof-analyze --why=new_reg_block $PROGS/owners owners.core >why7.txt &&
		grep -q "^  root: thread [0-9]* register rbx$" why7.txt
	'
else
	skip_case '--why: a root in a register is named' 'owners holds it in rbx on x86-64 only'
fi

test_case '--why=0xADDR: the block holding an interior address' '
	addr=$(sed -n "s/^0x\([0-9a-f]*\): 1,000 bytes.*/\1/p" why.txt) &&
	inner=$(printf "0x%x" $((0x$addr + 100))) &&
	heapprof-analyze --why=$inner $PROGS/owners owners.core >why4.txt &&
	grep -q "^why alive: 1 blocks match" why4.txt &&
	grep -q "^0x$addr: 1,000 bytes" why4.txt &&
	{ heapprof-analyze --why=0x10 $PROGS/owners owners.core 2>err; [ $? = 2 ]; } &&
	grep -q "no live block matches" err &&
	rm -f nomatch.json &&
	{ heapprof-analyze -f json -o nomatch.json --why=0x10 $PROGS/owners owners.core 2>err; [ $? = 2 ]; } &&
	expect_eq "-o file of a --why that matched nothing" "" "$(ls nomatch.json 2>/dev/null)" &&
	{ heapprof-analyze --why="(" $PROGS/owners owners.core 2>err; [ $? = 64 ]; } &&
	grep -q "bad --why regex" err
'

test_case '--why: what the matching blocks retain, by stack (the dominator tree view)' '
	heapprof-analyze --why=new_cache $PROGS/owners owners.core >why5.txt &&
	sed -n "/^retained by the/,\$p" why5.txt >view &&
	sed "s/  #[0-9]*\$//" view >names &&
	cat >want <<-EOF2 &&
	retained by the 1 blocks: 4,288 bytes in 10 blocks, by stack:
	  4,000 bytes in 4 blocks  new_payload < make_cache < main < ...
	  192 bytes in 4 blocks  new_entry < make_cache < main < ...
	  64 bytes in 1 blocks  new_cache < make_cache < main < ...
	  32 bytes in 1 blocks  new_entries < make_cache < main < ...
	EOF2
	expect_same want names &&
	# each row ends with #N, that stack in the report (its innermost frame the one named)
	heapprof-analyze $PROGS/owners owners.core >whole.txt &&
	for n in $(sed -n "s/.*  #\([0-9]*\)\$/\1/p" view); do
		sed -n "/^#$n /,/^\$/p" whole.txt | grep -m1 "^    0x" | awk "{ print \$2 }"
	done >got &&
	printf "new_payload\nnew_entry\nnew_cache\nnew_entries\n" >want && expect_same want got &&
	heapprof-analyze --why="new_owner|new_blob" $PROGS/owners owners.core >why6.txt &&
	grep -q "^retained by the 3 blocks: 580 bytes in 3 blocks" why6.txt
'

# in_time CMD...: CMD, failed with a message when it runs for 300 s. No timing bound:
# a hang guard. The cases below take a few seconds, and took hours (the dominators
# of the back-pointer list) or wrote gigabytes (--why's paths) before.
in_time()
{
	timeout 300 "$@"
	rc=$?
	[ $rc != 124 ] || echo "still running after 300 s: $*" >&2
	return $rc
}

test_case 'retained_space on a list of 1,000,000 nodes pointing back to their owner' '
	run_preloaded $PROGS/shapes backlist 1000000 &&
	take_core backlist.core &&
	in_time heapprof-analyze --metric=retained_space -f collapsed $PROGS/shapes backlist.core >bl.txt &&
	by_leaf bl.txt >got &&
	printf "new_backnode 16000000\nnew_owner 16000032\n" >want && expect_same want got &&
	in_time heapprof-analyze --why=new_owner $PROGS/shapes backlist.core >blw.txt &&
	grep -q "^0x[0-9a-f]*: 32 bytes, retains 16,000,032 bytes, allocated at new_owner < make_backlist < main" blw.txt &&
	grep -q "^retained by the 1 blocks: 16,000,032 bytes in 1,000,001 blocks, by stack:$" blw.txt
'

test_case 'retained_space on a chain of 1,000,000 blocks' '
	run_preloaded $PROGS/shapes chain 1000000 &&
	take_core chain.core &&
	in_time heapprof-analyze --metric=retained_space -f collapsed $PROGS/shapes chain.core >ch.txt &&
	by_leaf ch.txt >got &&
	printf "new_link 16000064\nnew_tail 64\n" >want && expect_same want got
'

test_case '--why through the chain: the same stack'\''s hops left out in the middle' '
	in_time heapprof-analyze --why=new_tail $PROGS/shapes chain.core >whc.txt &&
	sed -n "/^  root:/,/^\$/p" whc.txt | sed "s/0x[0-9a-f]*/0xA/g; s/  #[0-9]*\$//" >got &&
	link="  0xA  16 bytes  +0 ->  new_link < make_chain < main < ..." &&
	{ echo "  root: global g_chain (shapes+0xA)"
	  for i in 1 2 3 4 5; do echo "$link"; done
	  echo "  ... 999,990 more hops of the same stack ..."
	  for i in 1 2 3 4 5; do echo "$link"; done
	  echo "  0xA  64 bytes  new_tail < make_chain < main < ..."
	  echo; } >want &&
	expect_same want got
'

test_case '--why through the chain: the 20 largest paths, each a few lines' '
	in_time heapprof-analyze --why=new_link $PROGS/shapes chain.core >whl.txt &&
	[ $(grep -c "^0x[0-9a-f]*: 16 bytes, retains" whl.txt) = 20 ] &&
	[ $(grep -c "^  \.\.\. 9[0-9,]* more hops of the same stack \.\.\.$" whl.txt) = 20 ] &&
	awk "/^0x|^retained/ { n = 0 } /^  / { if (++n > most) most = n } END { print most }" whl.txt >most &&
	echo 12 >want && expect_same want most
'
