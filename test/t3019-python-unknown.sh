#!/bin/sh
# A Python heapprof does not know (pyenv's 2.7 and 3.10): heapprof.so leaves it alone
# with exactly one line on stderr, the program runs to its normal end, and its snapshot
# gives native stacks as before (the evaluation loop's frames, no Python frames) with
# the bytearrays the script holds.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/python_heap.sh"

# Python 2 and 3 alike: 100 bytearray(10000), then wait for "go"
cat >old.py <<'PY'
import os, sys, time
held = [bytearray(10000) for i in range(100)]
sys.stdout.write('ready\n')
sys.stdout.flush()
while not os.path.exists('go'):
	time.sleep(0.05)
PY

for label in 2.7 3.10; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: not known: native stacks, one line, no crash" "no python $label on this machine"
		continue
	fi
	test_case "python $label: not known: native stacks, one line on stderr, no crash" '
		rm -f go ./*.snap &&
		run_preloaded "$py" old.py && pid=$PROG_PID && py_snap old.snap && : >go &&
		{ wait "$pid"; rc=$?; true; } &&
		{ [ "$rc" = 0 ] || { echo "exit status $rc"; cat prog.err; false; }; } &&
		grep -v "^heapprof: snapshot .* written: " prog.err >said &&
		[ "$(wc -l <said)" = 1 ] && grep -q "^heapprof: python.*: native stacks only$" said &&
		py_report "$py" old.snap >old.json &&
		py_check native old.json >native.checks && all_ok native.checks 1 &&
		python3 -c "import json, sys
s = [s for s in json.load(open(sys.argv[1]))[\"stacks\"] if {\"size\": 10001, \"count\": 100} in s[\"sizes\"]]
sys.exit(len(s) != 1)" old.json || { cat prog.err; false; }
	'
done
