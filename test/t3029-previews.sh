#!/bin/sh
# Stack previews (report_preview, issue 32): the one-line stacks of --why, --memory's
# pinned list and the page reach the program's code past the allocator's frames
# (heapprof's operator new, the C++ library's allocation), name inlined functions,
# honour --short-names and --hide, and end with the stack's number in the report.
# The bottom-up table (--by=function) charges self to that same frame. On a C++
# program whose std::vector growth is inlined into build_index at -O2
# (test/progs/cxx_index.cc): 64 vectors of 4,096 ints, 16,384 bytes each.
. "$(dirname "$0")/lib.sh"
need_tool gcore

C=$PROGS/cxx_index
PUSH='std::vector<int, std::allocator<int> >::push_back(int const&)'

test_case 'a core of the index' '
	run_preloaded $C && take_core index.core &&
	heapprof-analyze --top=3 $C index.core >report.txt &&
	grep -A2 "^#1 " report.txt >top &&
	expect_grep "^#1  .*  1,048,576 bytes in 64 blocks " top &&
	expect_grep "operator new(unsigned long) .*(heapprof.so)" top
'

test_case '--why: the block is build_index'"'"'s, past operator new and allocate, with its number' '
	heapprof-analyze --why=build_index --top=1 $C index.core >why.txt &&
	echo "1,048,576 bytes in 64 blocks  $PUSH < build_index < main < ...  #1" >want &&
	sed -n "s/^  \(1,048,576 bytes in 64 blocks .*\)/\1/p" why.txt >got &&
	expect_same want got &&
	echo "allocated at $PUSH < build_index < main < ...  #1" >want &&
	sed -n "s/^0x[0-9a-f]*: 16,384 bytes, retains 16,384 bytes, \(.*\)/\1/p" why.txt >got &&
	expect_same want got
'

test_case '--why --short-names: the names as the stacks print them' '
	heapprof-analyze --why=build_index --top=1 --short-names $C index.core >why.txt &&
	echo "1,048,576 bytes in 64 blocks  std::vector::push_back < build_index < main < ...  #1" >want &&
	sed -n "s/^  \(1,048,576 bytes in 64 blocks .*\)/\1/p" why.txt >got &&
	expect_same want got
'

test_case '--why --hide: hidden frames are not previewed, the number stays' '
	heapprof-analyze --why=build_index --top=1 --hide="push_back|^main$" $C index.core >why.txt &&
	echo "1,048,576 bytes in 64 blocks  build_index < __libc_start_call_main < __libc_start_main_impl < ...  #1" >want &&
	sed -n "s/^  \(1,048,576 bytes in 64 blocks .*\)/\1/p" why.txt >got &&
	expect_same want got
'

test_case '--memory: the pinned list previews build_index, with the number' '
	heapprof-analyze --memory --top=3 $C index.core >mem.txt &&
	sed -n "s/^ *[0-9,]* bytes by [0-9,]* blocks ([0-9,]* in whole pages): //p" mem.txt >got &&
	echo "$PUSH < build_index < main < __libc_start_call_main < ...  #1" >want &&
	expect_same want got
'

test_case '--memory -f json and the page: the same preview, the stack number' '
	heapprof-analyze --memory -f json --top=3 $C index.core >mem.json &&
	python3 -c "import json, sys; p = json.load(sys.stdin)[\"memory\"][\"pinned\"][0]; print(p[\"preview\"]); print(p[\"stack\"])" <mem.json >got &&
	printf "%s\n1\n" "$PUSH < build_index < main < __libc_start_call_main < ...  #1" >want &&
	expect_same want got &&
	heapprof-analyze --memory -f html --top=3 $C index.core >mem.html &&
	expect_grep "\"preview\": \"std::vector\\\\u003cint, std::allocator\\\\u003cint> >::push_back(int const&) \\\\u003c build_index \\\\u003c main" mem.html
'

test_case '--by=function: self is the program'"'"'s frame, not heapprof'"'"'s operator new' '
	heapprof-analyze --by=function --top=0 $C index.core >by.txt &&
	sed -n "3s/^ *\([0-9]*\) *[0-9.]*% *\([0-9]*\) *[0-9.]*% *\([0-9]*\)  /\1 \2 \3 /p" by.txt >got &&
	echo "1048576 1048576 64 $PUSH" >want &&
	expect_same want got &&
	awk "/operator new/ && \$1 != 0" by.txt >got && : >want && expect_same want got
'
