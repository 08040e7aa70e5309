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

# script NAME: a script of the test cases on standard input, run; its output in NAME.out
script()
{
	{ echo ". \"$TEST_DIR/lib.sh\""; cat; } >$1.sh
	sh $1.sh >$1.out 2>&1
}

# log_of N FILE: what FILE shows under "not ok N"
log_of()
{
	awk -v n="$1" '/^(not )?ok / { on = ($0 ~ "^not ok " n " ") ; next } on' "$2"
}

# A failing case says what it expected and what it got: the log under "not ok" holds
# the pattern, value or bound, and what the file or value was.
script grep <<'EOS'
printf 'alpha\nbeta\n--gamma\n' >three
test_case ok 'expect_grep ^bet three && expect_grep -x alpha three && expect_grep -- --gam three &&
	expect_no_grep -F a.p three && expect_no_grep -x alph three'
test_case bad 'expect_grep -x alph three'
test_case stdin 'seq 100 | expect_grep "^1000$"'
test_case none 'seq 12 | expect_no_grep ^1'
EOS

test_case 'expect_grep, expect_no_grep: silent when right' '
	expect_grep -x "ok 1 - ok" grep.out && expect_grep -x "not ok 2 - bad" grep.out
'

test_case 'expect_grep: else the pattern and the file' '
	log_of 2 grep.out >bad &&
	expect_grep -x -F "#   expected a line matching (grep -x) '"'alph'"' in three; it holds:" bad &&
	expect_grep -x -F "#     | alpha" bad && expect_grep -x -F "#     | --gamma" bad
'

test_case 'expect_grep: standard input, shown to its 30th line' '
	log_of 3 grep.out >stdin &&
	expect_grep -x -F "#   expected a line matching '"'^1000\$'"' in standard input; it holds:" stdin &&
	expect_grep -x "#     | 30" stdin && expect_no_grep -x "#     | 31" stdin &&
	expect_grep -x -F "#     | ... 70 more lines (KEEP=1 keeps the file)" stdin
'

test_case 'expect_no_grep: the lines that match' '
	log_of 4 grep.out >none &&
	expect_grep -x -F "#   expected no line matching '"'^1'"' in standard input; found:" none &&
	expect_grep -x "#     | 12" none && expect_grep -x "#     | 1" none &&
	expect_no_grep -x "#     | 2" none
'

script values <<'EOS'
test_case eq 'expect_eq total 15 16'
test_case num 'expect_num peak 5 -gt 9'
test_case empty 'expect_num peak "" -gt 9'
test_case right 'expect_eq a 1 1 && expect_num b 3 -le 3 && expect_num c -2 -lt 0'
EOS

test_case 'expect_eq and expect_num: what was wanted, what came' '
	expect_grep -x -F "#   total: expected '"'15'"', got '"'16'"'" values.out &&
	expect_grep -x -F "#   peak: expected > 9, got '"'5'"'" values.out &&
	expect_grep -x -F "#   peak: expected > 9, got '"''"'" values.out &&
	expect_grep -x "ok 4 - right" values.out
'
