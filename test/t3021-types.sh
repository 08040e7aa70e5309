#!/bin/sh
# --by=type end to end: a C++ program (test/progs/types.cc) keeps 2,000 Order of 64
# bytes, 40 PriorityOrder (derived from Order) of 80, 500 Customer of 96 and 300
# Cart<int> of 48, each found by the vtable it starts with, and blocks with none:
# exact counts in text, JSON and the page, --short-names, the report's filters; types
# and stacks together: --focus=type:, --ignore=type:, --by=type with a frame's --focus,
# --by=type --stacks (the Orders come from two stacks: make_orders, and reorder in it).
. "$(dirname "$0")/lib.sh"
need_tool gcore

T=$PROGS/types

cat >typed.expected <<'EOF2'
         128,000        2,000  Order
          48,000          500  Customer
          14,400          300  Cart<int>
           3,200           40  PriorityOrder
EOF2

test_case 'a core of the types program' '
	run_preloaded $T && take_core types.core
'

test_case 'text: each class'"'"'s live blocks and bytes, exact; the rest untyped' '
	heapprof-analyze --by=type $T types.core >types.txt &&
	sed -n 2p types.txt | grep -q "^ *bytes *blocks  type\$" &&
	sed "1,2d" types.txt | grep -v "\[untyped\]\$" >typed &&
	expect_same typed.expected typed &&
	untyped=$(awk "/\[untyped\]\$/ { gsub(/,/, \"\", \$2); print \$2 }" types.txt) &&
	[ "$untyped" -ge 101 ] || { echo "untyped blocks: $untyped, not the 100 buffers and the string" >&2; false; }
'

test_case 'the types'"'"' bytes are the stacks'"'"' that made them' '
	heapprof-analyze -f collapsed $T types.core >types.col &&
	expect_bytes make_orders 128000 types.col && expect_bytes make_customers 48000 types.col &&
	expect_bytes make_carts 14400 types.col && expect_bytes make_priority 3200 types.col
'

test_case '--short-names: a template class without its arguments' '
	heapprof-analyze --by=type --short-names $T types.core >short.txt &&
	grep -q "^          14,400          300  Cart\$" short.txt && ! grep -q "Cart<" short.txt
'

test_case 'json: "types", in the schema, beside the stacks' '
	heapprof-analyze --by=type -f json $T types.core >types.json &&
	json_valid types.json &&
	python3 -c "import json
j = json.load(open(\"types.json\"))
for t in j[\"types\"]:
    print(t[\"type\"], t[\"blocks\"], t[\"bytes\"])
print(len(j[\"stacks\"]) > 0)" | grep -v "^None " >got &&
	printf "%s\n" "Order 2000 128000" "Customer 500 48000" "Cart<int> 300 14400" \
		"PriorityOrder 40 3200" True >want && expect_same want got &&
	grep -q "{\"type\": null, \"blocks\": [0-9]*, \"bytes\": [0-9]*}" types.json
'

test_case 'the report'"'"'s filters hold: the blocks --leaks shows are the ones typed' '
	heapprof-analyze --by=type --leaks=all $T types.core | sed "1,2d" | grep -v "\[untyped\]\$" >all &&
	expect_same typed.expected all &&
	heapprof-analyze --by=type --leaks $T types.core >lost.txt &&
	! grep -q "Order\|Customer\|Cart" lost.txt
'

test_case 'a format without a table of types refuses it in one line' '
	for f in svg pprof collapsed; do
		heapprof-analyze --by=type -f $f $T types.core >out 2>err; rc=$?
		[ $rc = 64 ] && ! test -s out &&
		grep -qx "heapprof-analyze: --by gives a table of types, which -f $f cannot show: use -f text, json or html" err ||
		{ echo "-f $f: status $rc"; cat err; exit 1; }
	done
'

# sum FILE: the bytes of a collapsed file's stacks
sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

test_case '--focus=type: the stacks that made the Orders, and only the Orders'"'"' bytes' '
	heapprof-analyze --focus="type:^Order\$" -f collapsed $T types.core >order.col &&
	expect_bytes make_orders 128000 order.col && expect_bytes reorder 32000 order.col &&
	[ "$(sum order.col)" = 128000 ] && [ "$(wc -l <order.col)" = 2 ] ||
	{ cat order.col; false; }
'

test_case '--focus=type: text says what it kept; --by=function is of those blocks' '
	heapprof-analyze --focus="type:^Order\$" $T types.core >order.txt &&
	grep -q "^  live: .* in 2,000 blocks (128,000 bytes), 2 distinct stacks\$" order.txt &&
	grep -q "^  types:      --focus=type:^Order\$ kept 128,000 bytes in 2,000 blocks, left out [0-9,]* bytes in [0-9,]* blocks (as found)\$" order.txt &&
	grep -q "^#1  75.0%  96,000 bytes in 1,500 blocks" order.txt &&
	grep -q "^#2  25.0%  32,000 bytes in 500 blocks" order.txt &&
	heapprof-analyze --by=function --focus="type:^Customer\$" $T types.core >fn.txt &&
	grep -q "^ *48000 100.0% *48000 100.0% *500  make_customers\$" fn.txt ||
	{ cat order.txt fn.txt; false; }
'

test_case '--ignore=type: leaves a type out (a regex: Order matches PriorityOrder too)' '
	heapprof-analyze --ignore=type:Order -f collapsed $T types.core >no.col &&
	expect_bytes make_customers 48000 no.col && expect_bytes make_carts 14400 no.col &&
	expect_bytes make_orders 0 no.col && expect_bytes make_priority 0 no.col
'

test_case 'a type and a frame at once; json says what --focus=type: kept' '
	heapprof-analyze --focus=reorder --focus="type:^Order\$" -f collapsed $T types.core >both.col &&
	[ "$(sum both.col)" = 32000 ] && expect_bytes reorder 32000 both.col &&
	heapprof-analyze --focus="type:^Order\$" -f json $T types.core >tv.json && json_valid tv.json &&
	grep -q "\"type_view\": {\"focus\": \"^Order\$\", \"ignore\": null, \"kept_bytes\": 128000, \"kept_blocks\": 2000," tv.json
'

test_case '--by=type with --focus/--ignore by frame: the types those stacks made' '
	heapprof-analyze --by=type --focus=reorder $T types.core | sed 1,2d >re &&
	echo "          32,000          500  Order" >want && expect_same want re &&
	heapprof-analyze --by=type --ignore="reorder|make_customers" $T types.core | sed 1,2d |
		grep -v "\[untyped\]\$" >ig &&
	printf "%s\n" "          96,000        1,500  Order" "          14,400          300  Cart<int>" \
		"           3,200           40  PriorityOrder" >want && expect_same want ig
'

test_case '--by=type --focus=type: and --leaks: the table and the classes are of that type' '
	heapprof-analyze --by=type --focus="type:^Cart" $T types.core | sed 1,2d >cart &&
	echo "          14,400          300  Cart<int>" >want && expect_same want cart &&
	heapprof-analyze --leaks=all --focus="type:^Customer\$" -f collapsed $T types.core >lk.col &&
	[ "$(sum lk.col)" = 48000 ] && grep -q "^\[still reachable\];.*;make_customers;" lk.col &&
	heapprof-analyze --leaks=all --timeline --focus="type:^Customer\$" $T types.core >lk.txt &&
	grep -qx "  still reachable: 48,000 bytes in 500 blocks" lk.txt || { cat lk.txt; false; }
'

test_case '--by=type --stacks: each type'"'"'s heaviest stacks under its row, text and json' '
	heapprof-analyze --by=type --stacks $T types.core >st.txt &&
	sed -n "/  Order\$/,/  Customer\$/p" st.txt | sed "1d;\$d" | sed "s/ < __libc_start_call_main.*//" >got &&
	printf "%s\n" "          96,000        1,500    make_orders < main" \
		"          32,000          500    reorder < make_orders < main" >want && expect_same want got &&
	heapprof-analyze --by=type -v -f json $T types.core >st.json && json_valid st.json &&
	python3 -c "import json
for t in json.load(open(\"st.json\"))[\"types\"]:
    if t[\"type\"] == \"Order\":
        for s in t[\"stacks\"]:
            print(s[\"bytes\"], s[\"blocks\"], s[\"frames\"][1])
        print(t[\"more_stacks\"])" >got &&
	printf "%s\n" "96000 1500 make_orders" "32000 500 reorder" 0 >want && expect_same want got
'

test_case 'a bad type regex, --peak with a type, --stacks alone: one line, status 64' '
	heapprof-analyze --focus="type:(" $T types.core >out 2>err; [ $? = 64 ] &&
	grep -q "^heapprof-analyze: --focus=type: bad regular expression .(.: " err &&
	heapprof-analyze --peak --ignore=type:Order $T types.core >out 2>err; [ $? = 64 ] &&
	grep -qx "heapprof-analyze: --focus=type: and --ignore=type: pick blocks: no --peak or --peak-diff with them" err &&
	heapprof-analyze --stacks $T types.core >out 2>err; [ $? = 64 ] &&
	grep -qx "heapprof-analyze: --stacks (-v) goes with --events or --by=type" err
'

if command -v chromium >/dev/null 2>&1 && command -v node >/dev/null 2>&1 &&
   node --experimental-websocket -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null; then
	test_case 'html: the page shows the table of types' '
		heapprof-analyze --by=type -f html -o types.html $T types.core &&
		node --experimental-websocket "$TEST_DIR/helpers/browser.js" types.html "$TEST_DIR/helpers/html_page.js" \
			text "#types" "PriorityOrder" -- text "#types" "2,000 blocks" -- \
			text "#types" "[untyped]" >/dev/null
	'
else
	skip_case 'html: the page shows the table of types' 'no chromium, or no node with WebSocket'
fi
