#!/bin/sh
# The malloc family keeps the running libc's semantics on its edge cases: odd and
# zero alignments, zero and huge sizes, overflowing products, realloc(p, 0). The
# answers are the libc's own, taken from a plain run on this machine, not a table.
. "$(dirname "$0")/lib.sh"

prog=$PROGS/libc_semantics
strict=$PROGS/libstrict_aligned.so

test_case 'the edge cases run plainly' '
	$prog >"$SCRATCH/want" 2>err && ! test -s err && test -s "$SCRATCH/want"
'

for mode in cfi fp libgcc libunwind; do
	# an unwinder this machine cannot start says so on stderr, once
	if HEAPPROF_UNWIND=$mode LD_PRELOAD=$PRELOAD /bin/true 2>&1 | grep -q .; then
		skip_case "same answers with HEAPPROF_UNWIND=$mode" "$mode does not load here"
		continue
	fi
	test_case "same answers with HEAPPROF_UNWIND=$mode" "
		HEAPPROF_UNWIND=$mode LD_PRELOAD=\$PRELOAD \$prog >got 2>err &&
		expect_same \"\$SCRATCH/want\" got && ! test -s err
	"
done

test_case 'same answers with HEAPPROF_FRAMES=1' '
	HEAPPROF_FRAMES=1 LD_PRELOAD=$PRELOAD $prog >got 2>err &&
	expect_same "$SCRATCH/want" got && ! test -s err
'

# A libc whose aligned_alloc refuses odd alignments (glibc 2.38 on) behind heapprof:
# heapprof must follow it too, where this machine's glibc may answer otherwise.
# sampled: most blocks pass straight through to the allocator, a few get headers
for rate in 1 4096; do
	test_case "same answers with HEAPPROF_SAMPLE=$rate" "
		HEAPPROF_SAMPLE=$rate HEAPPROF_SEED=7 LD_PRELOAD=\$PRELOAD \$prog >got 2>err &&
		expect_same want got && ! test -s err
	"
done

test_case 'same answers behind an aligned_alloc that refuses odd alignments' '
	LD_PRELOAD=$strict $prog >want-strict 2>err && ! test -s err &&
	grep -q "^aligned_alloc(3, 100): NULL errno=EINVAL\$" want-strict &&
	LD_PRELOAD="$PRELOAD $strict" $prog >got 2>err &&
	expect_same want-strict got && ! test -s err
'

# heapprof.so.7 (NOTES, HEAPPROF_REPLAY): a thread's end is seen through one pthread key
# of heapprof's own, and the replay table of each thread is freed at its exit through
# another; without replay there is one
test_case 'pthread keys: two fewer with HEAPPROF_REPLAY=1, as documented, one with 0' '
	all=$($PROGS/keys) &&
	test "$(HEAPPROF_REPLAY=1 LD_PRELOAD=$PRELOAD $PROGS/keys)" = $((all - 2)) &&
	test "$(HEAPPROF_REPLAY=0 LD_PRELOAD=$PRELOAD $PROGS/keys)" = $((all - 1))
'
