#!/bin/sh
# test/lib.sh itself: a script's exit status says whether its cases passed, so that
# test/run (and anything else running one script) sees a failure.
. "$(dirname "$0")/lib.sh"

# inner NAME CMDS...: a script of one test_case running CMDS; its status in NAME.rc
inner()
{
	name=$1
	shift
	printf '%s\n' ". \"$TEST_DIR/lib.sh\"" "$*" >$name.sh
	sh $name.sh >$name.out 2>&1
	echo $? >$name.rc
}

test_case 'a script with a failing case exits non-zero' '
	inner fail "test_case one true; test_case two false" &&
	grep -q "^not ok 2 - two" fail.out && [ "$(cat fail.rc)" != 0 ]
'

test_case 'a script whose cases pass exits 0, one skipped by need_tool 77' '
	inner pass "test_case one true" && grep -q "^ok 1 - one" pass.out &&
	[ "$(cat pass.rc)" = 0 ] &&
	inner skip "need_tool no-such-tool-heapprof; test_case one false" &&
	[ "$(cat skip.rc)" = 77 ]
'
