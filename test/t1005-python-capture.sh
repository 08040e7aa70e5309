#!/bin/sh
# Python frames captured from C (preload/interp_python.c, not yet called by the hooks) inside
# real interpreters, through test/progs/pycapture.c loaded with ctypes: known call
# chains give the names, files and lines sys._getframe gives, from the name records and
# from the live code objects. Interpreters heapprof does not know: one line, no frames.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"

LIB=$PROGS/libpycapture.so
CASES='method|method, GIL released|comprehension|generator|sorted key callback|thread'

for label in $PYTHONS; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: frames from C" "no python $label on this machine"
		continue
	fi
	"$py" "$TEST_DIR/helpers/python_chain.py" "$LIB" >"out.$label" 2>"err.$label"
	echo "$?" >"rc.$label"
	IFS='|'
	for c in $CASES; do
		test_case "python $label: $c: names, files and lines as sys._getframe says" '
			grep -qx "ok $c" "out.$label" || { cat "out.$label" "err.$label"; false; }
		'
	done
	unset IFS
	test_case "python $label: five functions deleted in a loop named from their records" '
		grep -qx "ok code objects freed" "out.$label" &&
		[ "$(grep -c "^ok deleted doomed_[0-4] doomed.py 2\$" "out.$label")" = 5 ] &&
		! grep "^not ok" "out.$label" && [ "$(cat "rc.$label")" = 0 ] || { cat "out.$label" "err.$label"; false; }
	'
	test_case "python $label: known, nothing on stderr" '
		grep -q "^version 0x30[bcd]" "out.$label" && ! [ -s "err.$label" ] || cat "err.$label"
	'
done

# an embedding program: no Python at first, then a libpython loaded with RTLD_GLOBAL
py=$(python_path 3.12)
if [ -z "$py" ]; then
	skip_case "python loaded later by dlopen is found then" "no python 3.12 on this machine"
else
	test_case "python loaded later by dlopen is found then" '
		lib=$(ls "$(dirname "$py")"/../lib/libpython3.12.so.1.0) &&
		"$PROGS/pyhost" "$LIB" "$lib" >out 2>err &&
		grep -qx "0 0x30c0[0-9a-f]* 0" out && ! [ -s err ] || { cat out err; false; }
	'
fi

# pyenv keeps these; a Python before 3.11 has no Py_Version, no layout we know
for label in 2.7 3.10; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: not known, left alone" "no python $label on this machine"
		continue
	fi
	test_case "python $label: not known: no frames, one line on stderr" '
		"$py" -c "import ctypes, sys
lib = ctypes.PyDLL(sys.argv[1]); buf = ctypes.create_string_buffer(4096)
sys.stdout.write(\"%d %d %d\\n\" % (lib.pyc_init(), lib.pyc_capture(buf, 4096), lib.pyc_init()))" "$LIB" >out 2>err &&
		[ "$(cat out)" = "0 0 0" ] && [ "$(wc -l <err)" = 1 ] &&
		grep -q "^heapprof: python before 3.11 in .*libpython$label.*: native stacks only\$" err ||
		{ cat out err; false; }
	'
done
