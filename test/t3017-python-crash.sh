#!/bin/sh
# A Python program that crashes (os.kill(os.getpid(), 11)) under HEAPPROF_AT_CRASH=1:
# heapprof.so writes its snapshot before the signal goes on, and that snapshot gives
# each of test/helpers/python_heap.py's functions its bytes, file, line and callers as a
# snapshot of a running process does (t3016). The process still dies of SIGSEGV.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/python_heap.sh"
export HEAPPROF_AT_CRASH=1
# the kernel's own core of the crash is not wanted here
ulimit -c 0 2>/dev/null

for label in $PY_HEAP; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: a crash's snapshot names the Python functions" "no python $label on this machine"
		continue
	fi
	test_case "python $label: a crash's snapshot gives each Python function its bytes, file, line and callers" '
		rm -f ./*.snap &&
		py_start "$py" crash && pid=$PROG_PID &&
		{ wait "$pid"; rc=$?; true; } &&
		{ [ "$rc" = 139 ] || { echo "exit status $rc, not SIGSEGV"; cat prog.err; false; }; } &&
		[ -f "heapprof.$pid.1.snap" ] && grep -q "^heapprof: snapshot .heapprof.$pid.1.snap. written: " prog.err &&
		py_report "$py" "heapprof.$pid.1.snap" >crash.json &&
		py_check bytes crash.json prog.out >crash.checks &&
		all_ok crash.checks 11 && grep -qx "ok code objects freed" prog.out
	'
done
