#!/bin/sh
# Views on Python stacks, on each interpreter heapprof knows: --leaks=all (each Python
# function keeps its bytes over the classes; what is definitely lost is only the blocks
# malloc'd through ctypes and dropped, under the Python function that made them),
# --by=function (each Python function's total) and --base (two snapshots of one
# process: what Cache.fill added, what went with produce's blocks, helper's unchanged,
# matched frame by frame; the same between two runs, where every address differs).
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/python_heap.sh"

for label in $PY_HEAP; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: --leaks, --by=function and --base on Python stacks" "no python $label on this machine"
		continue
	fi
	rm -f ./*.snap
	# a run dumped at its two phases, and another run at its second
	if ! { py_start "$py" wait 5 && py_snap one.snap && py_phase2 && py_snap two.snap &&
	       kill -9 "$PROG_PID" && cp prog.out first.out &&
	       py_start "$py" wait 5 && py_phase2 && py_snap other.snap; }; then
		test_case "python $label: runs under heapprof.so and is dumped" 'cat prog.out prog.err; false'
		kill -9 "$PROG_PID" 2>/dev/null
		continue
	fi
	kill -9 "$PROG_PID" 2>/dev/null
	wait "$PROG_PID" 2>/dev/null
	PROG_PID=
	mv first.out prog.out

	test_case "python $label: --leaks=all: lost and reachable blocks under their Python functions" '
		py_report "$py" one.snap --leaks=all >leaks.json &&
		py_check leaks leaks.json prog.out >leaks.checks && all_ok leaks.checks 13
	'
	test_case "python $label: --by=function: each Python function's total" '
		heapprof-analyze --by=function --top=0 "$py" one.snap >by.txt &&
		py_check by by.txt prog.out >by.checks && all_ok by.checks 11
	'
	test_case "python $label: --base: growth and shrinkage per Python function, frames matched" '
		py_report "$py" two.snap --base=one.snap >diff.json &&
		py_check diff diff.json prog.out >diff.checks && all_ok diff.checks 3
	'
	# other addresses (name records, code objects, the heap): frames still match
	test_case "python $label: --base across two runs: the same growth, frames matched" '
		py_report "$py" other.snap --base=one.snap >runs.json &&
		py_check diff runs.json prog.out >runs.checks && all_ok runs.checks 3
	'
done
