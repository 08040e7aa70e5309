#!/bin/sh
# C++: new and delete in all their forms reach the malloc family through libstdc++,
# so live objects are counted exactly and deleted ones vanish.
. "$(dirname "$0")/lib.sh"
need_tool gcore

test_case 'C++ new forms: exact live bytes, deleted blocks gone' '
	run_preloaded $PROGS/cxx 3 &&
	take_core cxx.core &&
	heapprof-analyze -f collapsed $PROGS/cxx cxx.core >cxx.txt &&
	expect_bytes cxx_plain 3000 cxx.txt &&
	expect_bytes cxx_object 24 cxx.txt &&
	expect_bytes cxx_nothrow 9000 cxx.txt &&
	expect_bytes cxx_aligned 1536 cxx.txt &&
	expect_bytes cxx_aligned_array 2304 cxx.txt &&
	expect_bytes churn 0 cxx.txt
'

test_case 'C++ names are demangled, operator new is a frame of its own' '
	grep -q ";main;cxx_plain;operator new(unsigned long) 3000\$" cxx.txt &&
	grep -q ";cxx_aligned_array;operator new(unsigned long, std::align_val_t) 2304\$" cxx.txt &&
	grep -q ";cxx_nothrow;operator new\[\](unsigned long, std::nothrow_t const&);" cxx.txt
'

test_case 'blocks from library constructors that run before heapprof'"'"'s have stacks too' '
	! grep -q "^\\[no stack\\]" cxx.txt &&
	grep -q "^_dl_start_user;_dl_init;.*libstdc++.so.6+0x[0-9a-f]* 72704\$" cxx.txt
'
