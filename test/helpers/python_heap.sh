# Sourced by the Python heap tests (t3016-t3019): test/helpers/python_heap.py under heapprof.so.
#   PY_HEAP             the interpreters of the longer cases: Debian's 3.11, pyenv's 3.12
#                       and 3.13 (pyenv's 3.11 is the same version as Debian's)
#   py_start PY ARGS...   run it (PYTHONMALLOC=malloc, snapshots on USR2), wait for "ready"
#   py_snap FILE          a snapshot of it now (HEAPPROF_SIGNAL), moved to FILE
#   py_phase2             create "go" and wait for "ready 2" (Cache.fill grows, produce's go)
#   py_report PY SNAP [OPTIONS...]   heapprof-analyze's JSON report, all stacks
#   py_check WHAT ARGS... test/helpers/python_heap_check.py (ok / not ok lines)
#   all_ok FILE N         FILE has N "ok" lines and no "not ok" (else it is printed)
. "$TEST_DIR/helpers/pythons.sh"
export PYTHONMALLOC=malloc HEAPPROF_SIGNAL=USR2
HEAP_PY=$TEST_DIR/helpers/python_heap.py
PY_HEAP='debian-3.11 3.12 3.13'

py_start()
{
	rm -f go
	hp_py=$1
	shift
	run_preloaded "$hp_py" "$HEAP_PY" "$@"
}

py_snap()
{
	n=$(($(ls heapprof."$PROG_PID".*.snap 2>/dev/null | wc -l) + 1))
	kill -USR2 "$PROG_PID" || return 1
	i=0
	while [ ! -f "heapprof.$PROG_PID.$n.snap" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "no snapshot after 20 s" >&2; cat prog.err >&2; return 1; }
		sleep 0.1
	done
	cp "heapprof.$PROG_PID.$n.snap" "$1"
}

py_phase2()
{
	: >go
	i=0
	until grep -q '^ready 2$' prog.out; do
		i=$((i + 1))
		[ $i -lt 300 ] || { echo "no phase 2 after 30 s" >&2; cat prog.err >&2; return 1; }
		sleep 0.1
	done
}

py_report()
{
	hp_py=$1 hp_snap=$2
	shift 2
	heapprof-analyze -f json --top=0 "$@" "$hp_py" "$hp_snap"
}

py_check() { python3 "$TEST_DIR/helpers/python_heap_check.py" "$@"; }

all_ok()
{
	[ "$(grep -c '^ok ' "$1")" = "$2" ] && ! grep -q '^not ok' "$1" || { cat "$1"; false; }
}
