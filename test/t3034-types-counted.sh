#!/bin/sh
# --by=type with no other analysis needing the block list counts each block by its first
# word during the scan, a table of distinct words with no list; with --age (which keeps
# the list and leaves no block out) or --stacks it names the listed blocks one by one.
# Both give the same table, to the byte: on `types chain` (test/progs/types.cc), 40,000
# blocks whose first words all differ (more than a scan thread's table holds, so most
# spill) with 2,000 Order among them from the 4,000th on, whose vtable pointer finds the
# table full; tagged one for one, and sampled (HEAPPROF_SAMPLE), whose weights are
# summed in address order either way.
. "$(dirname "$0")/lib.sh"
need_tool gcore

T=$PROGS/types

# rows CORE ARGS...: the JSON "types" of --by=type ARGS, a line a row
rows()
{
	core=$1
	shift
	heapprof-analyze --by=type -f json "$@" $T "$core" >rows.json &&
	python3 -c "import json
for t in json.load(open(\"rows.json\"))[\"types\"]:
    print(t[\"type\"], t[\"blocks\"], t[\"bytes\"])"
}

# same_tables CORE: the counted table is the listed one, in text and JSON, -j1 and -j2
same_tables()
{
	for j in 1 2; do
		rows "$1" -j $j >counted.$j && rows "$1" -j $j --age >listed.$j &&
		expect_same listed.$j counted.$j &&
		heapprof-analyze -j $j --by=type $T "$1" >counted.txt &&
		heapprof-analyze -j $j --by=type --age $T "$1" >listed.txt &&
		expect_same listed.txt counted.txt || return 1
	done
	expect_same counted.1 counted.2
}

test_case 'a core of types chain, tagged one for one' '
	run_preloaded $T chain && take_core chain.core
'

test_case 'counted: the 2,000 Orders exact among 40,000 blocks of distinct first words' '
	rows chain.core >got &&
	grep -qx "Order 2000 128000" got && [ "$(wc -l <got)" = 2 ] &&
	untyped=$(awk "\$1 == \"None\" { print \$2 }" got) &&
	[ "$untyped" -ge 40000 ] || { cat got; echo "untyped blocks: $untyped" >&2; false; }
'

test_case 'counted and listed tables are the same, text and json, one thread or two' '
	same_tables chain.core
'

test_case '--stacks names the listed blocks: the same rows' '
	rows chain.core --stacks >stacks && rows chain.core >plain && expect_same plain stacks
'

test_case 'a core of types chain, sampled (HEAPPROF_SAMPLE=4096)' '
	HEAPPROF_SAMPLE=4096 run_preloaded $T chain && take_core sampled.core
'

test_case 'sampled: estimates, and the counted table is the listed one' '
	rows sampled.core >got && grep -q "^Order [0-9]* [0-9]*\$" got &&
	same_tables sampled.core || { cat got; false; }
'
