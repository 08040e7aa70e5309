#!/bin/sh
# Stacks a thread runs on besides its own, and code without unwind tables, end to end
# (test/progs/otherstacks.c): coroutines on a malloc'd and on an mmap'd stack between
# guard pages, a signal handler on a sigaltstack, and two functions without tables.
# Exact bytes under each allocating function with the callers memcheck names for it
# (the coroutine's, ending at its entry function; the handler's, on through the signal
# frame), a caller found on the stack, and a walk that could not go on marked.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# by_stack FILE: a collapsed report's bytes summed per stack of names, sorted
by_stack()
{
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); s[$0] += n } END { for (k in s) print k, s[k] }' "$1" |
		LC_ALL=C sort
}

# the stacks through FUNC in REPORT
stacks_through()
{
	by_stack "$2" | grep -E "(^|;)$1( |;)"
}

# the functions without tables are x86_64 assembly
no_tables=
[ "$(uname -m)" = x86_64 ] && no_tables=no-tables

test_case 'a program allocating on other stacks and from code without unwind tables: a core' '
	run_preloaded $PROGS/otherstacks coro-heap coro-mmap altstack $no_tables &&
	take_core other.core &&
	heapprof-analyze -f collapsed $PROGS/otherstacks other.core >other.txt
'

test_case 'a coroutine on a malloc'"'"'d stack: the allocating function and its callers' '
	echo "coro_heap_entry;coro_heap_work;coro_heap_alloc 3000" >want &&
	stacks_through coro_heap_alloc other.txt >got &&
	expect_same want got
'

test_case 'a coroutine on an mmap'"'"'d stack between guard pages: the same' '
	echo "coro_mmap_entry;coro_mmap_work;coro_mmap_alloc 1500" >want &&
	stacks_through coro_mmap_alloc other.txt >got &&
	expect_same want got
'

# libc's frames between raise() and the handler are named as its symbols allow
test_case 'a handler on a sigaltstack: on through the signal frame to the code it interrupted' '
	stacks_through sig_alloc other.txt >got &&
	test "$(wc -l <got)" = 1 &&
	grep -Eq "^_start;.*;main;raise_on_altstack;([^;]+;)+on_signal;sig_alloc 8000$" got ||
	{ echo "want main;raise_on_altstack;...;on_signal;sig_alloc 8000, got:" >&2; cat got >&2; false; }
'

if [ -n "$no_tables" ]; then
	test_case 'code without unwind tables: its caller found on the stack, or the stack marked' '
		printf "%s\n" "[truncated];untabled_big;big_leaf 700" >want &&
		stacks_through untabled_big other.txt >got &&
		expect_same want got &&
		stacks_through untabled_small other.txt >got &&
		grep -Eq "^_start;.*;main;no_tables;tabled_caller;untabled_small 600$" got ||
		{ echo "want ...;main;no_tables;tabled_caller;untabled_small 600, got:" >&2; cat got >&2; false; }
	'
else
	skip_case 'code without unwind tables' 'its functions are x86_64 assembly'
fi

for mode in fp libgcc; do
	test_case "HEAPPROF_UNWIND=$mode: the same bytes under each allocating function" '
		HEAPPROF_UNWIND='$mode' run_preloaded $PROGS/otherstacks coro-heap coro-mmap altstack &&
		take_core '$mode'.core &&
		heapprof-analyze -f collapsed $PROGS/otherstacks '$mode'.core >'$mode'.txt &&
		expect_bytes coro_heap_alloc 3000 '$mode'.txt &&
		expect_bytes coro_mmap_alloc 1500 '$mode'.txt &&
		expect_bytes sig_alloc 8000 '$mode'.txt
	'
done
