#!/bin/sh
# --by=type end to end: a C++ program (test/progs/types.cc) keeps 2,000 Order of 64
# bytes, 40 PriorityOrder (derived from Order) of 80, 500 Customer of 96 and 300
# Cart<int> of 48, each found by the vtable it starts with, and blocks with none:
# exact counts in text, JSON and the page, --short-names, the report's filters.
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
