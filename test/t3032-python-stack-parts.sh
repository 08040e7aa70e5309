#!/bin/sh
# Stacks in parts on a real Python program (test/helpers/python_real.py: json documents
# into a dict index, an sqlite table, compiled regexes; Python frames on, its default
# allocator): run twice from the same addresses (setarch -R, PYTHONHASHSEED=0) with
# HEAPPROF_STACK_PARTS=1 and =0, a snapshot at exit of each. Both give the same reports,
# stack for stack and byte for byte, live and allocated (every stack the run ever
# allocated from, tens of thousands), and --memory's stack records are at least 3 times
# smaller with parts.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
need_tool setarch
setarch -R true 2>/dev/null || { echo "setarch -R cannot turn address randomization off here"; exit 77; }
REAL=$TEST_DIR/helpers/python_real.py

# stack_bytes SNAPSHOT PY: --memory's mapped bytes of stack records
stack_bytes()
{
	heapprof-analyze --memory "$2" "$1" 2>/dev/null |
		sed -n 's/^    stack records  *\([0-9,]*\) bytes$/\1/p' | tr -d ,
}

for label in debian-3.11 3.13; do
	PY=$(python_path $label)
	if [ -z "$PY" ]; then
		skip_case "$label: the same reports with parts and whole records" "no $label here"
		continue
	fi
	export PY label
	test_case "$label: the same reports with parts and whole records, stack records 3x smaller" '
		for v in 0 1; do
			HEAPPROF_STACK_PARTS=$v HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$label.$v.snap \
			PYTHONHASHSEED=0 LD_PRELOAD=$PRELOAD setarch -R "$PY" "$REAL" 3000 \
				>/dev/null 2>run.$v.err &&
			heapprof-analyze -f collapsed "$PY" $label.$v.snap >live.$v.txt 2>/dev/null &&
			heapprof-analyze -f collapsed --metric=alloc_space "$PY" $label.$v.snap \
				>alloc.$v.txt 2>alloc.$v.err || exit 1
		done &&
		expect_same live.0.txt live.1.txt &&
		expect_same alloc.0.txt alloc.1.txt &&
		expect_num "stacks allocated from" "$(wc -l <alloc.1.txt)" -gt 10000 &&
		expect_grep ";<module>;build_index;" alloc.1.txt &&
		expect_no_grep "unknown stack" alloc.1.err &&
		whole=$(stack_bytes $label.0.snap "$PY") parts=$(stack_bytes $label.1.snap "$PY") &&
		echo "stack records: $whole bytes whole, $parts in parts" &&
		expect_num "3 x bytes in parts" $((3 * parts)) -le "$whole"
	'
done
