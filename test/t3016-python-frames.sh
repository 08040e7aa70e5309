#!/bin/sh
# Python frames in allocation stacks, end to end on each interpreter heapprof knows:
# test/helpers/python_heap.py's functions (a method, a comprehension's helper, a generator, a
# function run in a thread, a key function sorted calls from C, five functions deleted
# in a loop) hold known bytearrays; a snapshot's report gives each function its bytes
# (within test/helpers/python_heap_check.py's stated tolerance), at its file and line, under
# the Python frames sys._getframe saw; --python=python and --python=native as documented.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/python_heap.sh"

for label in $PYTHONS; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: bytes, files and lines per Python function" "no python $label on this machine"
		continue
	fi
	rm -f ./*.snap
	if ! py_start "$py" wait || ! py_snap "$label.snap"; then
		test_case "python $label: runs under heapprof.so and is dumped" 'cat prog.out prog.err; false'
		kill -9 "$PROG_PID" 2>/dev/null
		continue
	fi
	kill -9 "$PROG_PID" 2>/dev/null
	wait "$PROG_PID" 2>/dev/null
	PROG_PID=
	py_report "$py" "$label.snap" >"$label.json" 2>"$label.err"
	echo $? >"$label.rc"
	py_check bytes "$label.json" prog.out >"$label.checks"
	cp prog.out "$label.out"
	cp prog.err "$label.prog.err"

	test_case "python $label: a method, a comprehension, a generator, a thread, a sort key: bytes, file, line, callers" '
		[ "$(cat "$label.rc")" = 0 ] || { cat "$label.err"; false; } &&
		grep -E "^(not )?ok (Cache.fill|helper|comprehension|produce|worker|by_key)( |:|$)" "$label.checks" >main.checks &&
		all_ok main.checks 6
	'
	test_case "python $label: five functions defined, called and deleted in a loop keep their names" '
		grep -qx "ok code objects freed" "$label.out" &&
		grep -E "^(not )?ok doomed_[0-4]( |:|$)" "$label.checks" >doomed.checks && all_ok doomed.checks 5
	'
	test_case "python $label: collapsed output names the same functions with the same bytes" '
		heapprof-analyze -f collapsed "$py" "$label.snap" >c.txt 2>/dev/null &&
		sed -n "s/^expect \([^ ]*\) \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p" "$label.out" |
		while read name bytes blocks; do
			got=$(bytes_for "$name" c.txt)
			[ "$got" -ge "$bytes" ] && [ "$got" -le $((bytes + 8 * blocks + 1024)) ] ||
				{ echo "$name: $got bytes, want $bytes + up to $((8 * blocks + 1024))"; exit 1; }
		done
	'
	test_case "python $label: --python=python: the allocating native frame, then Python frames" '
		py_report "$py" "$label.snap" --python=python >p.json &&
		py_check python p.json "$label.out" >p.checks && all_ok p.checks 11
	'
	test_case "python $label: --python=native: native stacks, the evaluation loop in them" '
		py_report "$py" "$label.snap" --python=native >n.json &&
		py_check native n.json >n.checks && all_ok n.checks 1
	'
	# a Python frame in a stack changes nothing in the blocks' headers
	test_case "python $label: every block header whole, none damaged" '
		[ "$(jnum damaged "$label.json")" = 0 ] || { cat "$label.err"; false; }
	'
	test_case "python $label: heapprof.so says nothing but the snapshot" '
		! grep -v "^heapprof: snapshot .* written: " "$label.prog.err"
	'
done
