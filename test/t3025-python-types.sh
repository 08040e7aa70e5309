#!/bin/sh
# --by=type on Python objects (issue 34): test/helpers/python_types.py under heapprof.so
# (PYTHONMALLOC=malloc) keeps 20,000 Record objects, each with a str, a list and a
# dict, and a dict of 20,000 str keys and values; it counts sys.getsizeof itself. The
# analyzer's dict, str, list and Record rows agree with it within 5% (bytes and
# objects), on Debian's 3.11 and pyenv's 3.12 and 3.13, from a snapshot and a gcore core.
# 3.13 keeps an instance's attribute values in its own block, which its sys.getsizeof
# leaves out: there a Record's bytes are at least the script's.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/python_heap.sh"
need_tool python3

# compare FILE.json [AT_LEAST] with the script's count lines: one "ok"/"not ok" line
# per type; AT_LEAST: that type's bytes need only be the script's or more
compare()
{
	python3 - "$1" prog.out "${2:-}" <<'PY'
import json, sys
rows = {t['type']: t for t in json.load(open(sys.argv[1]))['types']}
for line in open(sys.argv[2]):
	w = line.split()
	if w[0] != 'count':
		continue
	name, b, n = w[1], int(w[2]), int(w[3])
	got = rows.get(name, {'bytes': 0, 'blocks': 0})
	ok = abs(got['bytes'] - b) <= 0.05 * b or (name == sys.argv[3] and got['bytes'] >= b)
	ok = ok and abs(got['blocks'] - n) <= 0.05 * n
	print('%s %s: script %d bytes in %d, analyzer %d in %d' % ('ok' if ok else 'not ok',
	      name, b, n, got['bytes'], got['blocks']))
PY
}

ran=0
for label in $PY_HEAP; do
	py=$(python_path "$label")
	[ -n "$py" ] || { skip_case "$label: --by=type on its objects" "no python $label here"; continue; }
	ran=1
	inline=
	[ "$label" = 3.13 ] && inline=Record
	core=
	[ "$label" = debian-3.11 ] && command -v gcore >/dev/null && core=1
	# the program runs outside the cases, whose subshells cannot stop it
	rm -f types.snap types.core
	if run_preloaded "$py" "$TEST_DIR/helpers/python_types.py" && py_snap types.snap; then
		[ -z "$core" ] || take_core types.core
	fi
	[ -n "$PROG_PID" ] && kill -9 "$PROG_PID" 2>/dev/null && wait "$PROG_PID" 2>/dev/null
	PROG_PID=
	test_case "$label: --by=type's dict, str, list and Record are the script's (5%)" '
		heapprof-analyze -q --by=type -f json "$py" types.snap >types.json &&
		compare types.json $inline >cmp && cat cmp && all_ok cmp 4
	'
	test_case "$label: a module's type by its qualified name; --short-names drops the module" '
		heapprof-analyze -q --by=type "$py" types.snap >long.txt &&
		heapprof-analyze -q --by=type --short-names "$py" types.snap >short.txt &&
		grep "deque\$" long.txt >got && grep "deque\$" short.txt >>got &&
		printf "%s\n" "300 collections.deque" "300 deque" >want &&
		awk "{ print \$2, \$3 }" got >got2 && expect_same want got2 &&
		sed -n 1p long.txt | grep -q "Python object" || { sed -n 1p long.txt; false; }
	'
	[ -z "$core" ] || test_case "$label: the same from a gcore core, and in text" '
		heapprof-analyze -q --by=type "$py" types.core >types.txt &&
		heapprof-analyze -q --by=type -f json "$py" types.core >core.json &&
		compare core.json >cmp && all_ok cmp 4 &&
		grep -q "^ *[0-9,]*  *20,000  Record\$" types.txt || { cat types.txt; false; }
	'
done
[ $ran = 1 ] || exit 77
