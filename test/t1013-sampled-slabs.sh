#!/bin/sh
# Sampled, a pool of Python's object allocator holds a named block or two, not hundreds:
# its slab table covers a window of its slots around them (8 at first, doubled to take
# in another block, up to the whole pool), no longer the whole pool (8 bytes a slot).
# Resident slab tables of a process holding 500,000 pairs, read by the process itself;
# and the sampled estimates of a function's bytes, which windows must not change.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
need_tool gcore

HELPER=$TEST_DIR/helpers/python_sampled_slabs.py
py=$(python_path debian-3.11)
[ -n "$py" ] || py=$(python_path 3.11)

# resident KIND FILE: the bytes the helper printed for KIND
resident() { awk -F '\t' -v k="$1" '$1 == k { print $2 }' "$2"; }

if [ -z "$py" ]; then
	skip_case "sampled: slab tables of 500,000 pairs are windows (at most 64 KiB resident)" "no python 3.11"
	skip_case "sampled every 64 KiB: the pairs' bytes within 15% of the exact ones" "no python 3.11"
	exit 0
fi

# 500,000 pairs (28 MB) sampled every 512 KiB: some 60 blocks named, in as many pools;
# whole-pool tables (2 KiB each for the 64-byte class) took 320 KiB, windows take 12
test_case 'sampled: slab tables of 500,000 pairs are windows (at most 64 KiB resident)' '
	HEAPPROF_SAMPLE=524288 HEAPPROF_SEED=1 LD_PRELOAD=$PRELOAD \
		"$py" "$HELPER" "$SRC_DIR/bench" 500000 >own.txt 2>own.err &&
	expect_no_grep . own.err && expect_eq pairs 500000 "$(resident pairs own.txt)" &&
	expect_num "slab tables, resident bytes" "$(resident "slab tables" own.txt)" -gt 0 &&
	expect_num "slab tables, resident bytes" "$(resident "slab tables" own.txt)" -le 65536
'

# every 64 KiB, some 430 of the pairs are named, several to a pool, whose window then
# grows: the estimate is the exact bytes (all named, no sampling) within 15%
test_case 'sampled every 64 KiB: the pairs'"'"' bytes within 15% of the exact ones' '
	run_preloaded "$py" "$HELPER" "$SRC_DIR/bench" 500000 wait && take_core exact.core &&
	run_preloaded env HEAPPROF_SAMPLE=65536 HEAPPROF_SEED=1 "$py" "$HELPER" "$SRC_DIR/bench" \
		500000 wait && take_core s.core &&
	heapprof-analyze -f collapsed "$py" exact.core >exact.txt &&
	heapprof-analyze -f collapsed "$py" s.core >s.txt &&
	exact=$(bytes_for make_pairs exact.txt) && est=$(bytes_for make_pairs s.txt) &&
	echo "make_pairs: $exact bytes exact, $est estimated" &&
	expect_num "exact bytes of make_pairs" "$exact" -ge 28000000 &&
	awk -v a="$est" -v b="$exact" "BEGIN { d = a > b ? a - b : b - a; exit !(d * 100 <= 15 * b) }" ||
		{ echo "make_pairs: $est bytes estimated, want $exact within 15%" >&2; false; }
'
