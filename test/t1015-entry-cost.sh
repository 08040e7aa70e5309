#!/bin/sh
# What heapprof.so's entry points execute for the calls sparse sampling leaves out (the
# always-on mode): instructions counted by callgrind, which gives the same count on every
# run (no timing). free of a block without a header is one test of a flag, of NULL, the arena's
# range and the block's magic, then the allocator's free by a jump; realloc of such a
# block, when the sample point is further than the new size, goes the same way.
. "$(dirname "$0")/lib.sh"
need_tool valgrind
need_tool python3
[ -n "$(valgrind --version 2>/dev/null)" ] || { echo "# skipped: valgrind does not run"; exit 77; }

N=20000
env HEAPPROF_SAMPLE=524288 HEAPPROF_SEED=1 LD_PRELOAD=$PRELOAD \
	valgrind --tool=callgrind --callgrind-out-file=$SCRATCH/cg.out \
	"$PROGS/entrycost" $N >prog.out 2>prog.err
echo $? >prog.rc
python3 "$TEST_DIR/helpers/callgrind_self.py" "$SCRATCH/cg.out" heapprof.so >self.txt

# per_call FUNCTION: its instructions in heapprof.so per call of the program's (start-up's
# few calls and the sample points add less than one)
per_call()
{
	awk -v f="$1" -v n=$N '$2 == f { s += $1 } END { print int(s / n) }' self.txt
}

test_case 'the program ran under valgrind' '
	expect_eq "exit status" 0 "$(cat prog.rc)" && expect_grep "^done $N$" prog.out
'

# the sanitizer run's heapprof.so carries UBSan's checks on every path: other counts
if [ -n "${SANITIZE:-}" ]; then
	for c in 'free of an unsampled block: 13 instructions, no frame' \
		'realloc of an unsampled block: no frame, no tagging path' \
		'malloc of an unsampled block: 7 instructions'; do
		skip_case "$c" "heapprof.so built with SANITIZE=$SANITIZE: instrumented"
	done
	exit 0
fi

test_case 'free of an unsampled block: 13 instructions, no frame' '
	expect_num "free, per call" "$(per_call free)" -le 13
'

test_case 'realloc of an unsampled block: no frame, no tagging path' '
	expect_num "realloc, per call" "$(per_call realloc)" -le 21 &&
	expect_num "hooks_tag_realloc, per call" "$(per_call hooks_tag_realloc)" -le 1
'

test_case 'malloc of an unsampled block: 7 instructions' '
	expect_num "malloc, per call" "$(per_call malloc)" -le 7
'

