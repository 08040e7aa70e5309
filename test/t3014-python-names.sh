#!/bin/sh
# Python frame names from a real core through analyzer/python.c: each interpreter runs
# test/helpers/python_chain.py (frames captured from C, as t1005), which keeps the code objects
# alive, writes their addresses, offsets and record addresses with the names
# sys._getframe gives, and waits; gcore dumps it. From the core, each name record and
# each live code object must name its frame the same; functions deleted in a loop are
# named from their records alone.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
need_tool gcore

# start_python PY: run the chains, keep the objects, wait for "ready" (PROG_PID is
# the process: take_core ends it, or the script's exit)
start_python()
{
	rm -f kept prog.out
	"$1" "$TEST_DIR/helpers/python_chain.py" "$PROGS/libpycapture.so" core >prog.out 2>prog.err &
	PROG_PID=$!
	i=0
	while ! grep -q '^ready$' prog.out 2>/dev/null; do
		kill -0 "$PROG_PID" 2>/dev/null || { cat prog.out prog.err; return 1; }
		i=$((i + 1))
		[ $i -lt 300 ] || return 1
		sleep 0.1
	done
}

for label in $PYTHONS; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: names from a core" "no python $label on this machine"
		continue
	fi
	start_python "$py" || {
		kill -9 "$PROG_PID" 2>/dev/null
		echo "not ok - python $label did not start"
		failures=$((failures + 1))
		continue
	}
	test_case "python $label: names, files and lines from a core, deleted functions too" '
		take_core py.core &&
		grep -qx "ok code objects freed" prog.out &&
		[ "$(grep -c "^0 .* doomed_[0-4] doomed.py 2\$" kept)" = 5 ] &&
		[ "$(wc -l <kept)" -ge 25 ] &&
		"$BUILD/unit/pyname" py.core <kept >names &&
		[ "$(grep -c "^ok " names)" = "$(wc -l <kept)" ] || { cat names; false; }
	'
done
