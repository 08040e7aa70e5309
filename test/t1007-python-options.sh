#!/bin/sh
# Python frames and heapprof.so's options: HEAPPROF_PYTHON=0 records native stacks
# only; a snapshot of heapprof's own (HEAPPROF_SIGNAL) holds the frames as a gcore does;
# HEAPPROF_FRAMES bounds the Python frames as it does the native ones. Read with
# build/unit/pystacks (see t1006).
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
need_tool gcore
export PYTHONMALLOC=malloc

SCRIPT=$TEST_DIR/helpers/python_stacks.py
F=python_stacks.py
FILL="Cache.fill@$F:$(grep -n '# at fill$' "$SCRIPT" | cut -d: -f1)"

# bytes of the stacks whose innermost Python frame is $1
py_bytes()
{
	awk -v p="$1" 'index($5, p ";") == 1 || index($5, p "|") == 1 { s += $1 }
		END { print s + 0 }' stacks
}

# the first interpreter of each kind this machine has (3.11, then 3.12)
py311=$(python_path debian-3.11)
[ -n "$py311" ] || py311=$(python_path 3.11)
py312=$(python_path 3.12)

if [ -z "$py311" ]; then
	skip_case "HEAPPROF_PYTHON=0: native stacks only" "no python 3.11 on this machine"
	skip_case "HEAPPROF_FRAMES bounds the Python frames too" "no python 3.11 on this machine"
else
	test_case "HEAPPROF_PYTHON=0: native stacks only, the same bytes, nothing on stderr" '
		HEAPPROF_PYTHON=0 run_preloaded "$py311" "$SCRIPT" && take_core off.core &&
		"$BUILD/unit/pystacks" off.core >stacks && [ -s stacks ] && ! [ -s prog.err ] &&
		awk "\$4 != 0 { bad = 1 } END { exit bad }" stacks &&
		[ "$(awk "{ s += \$1 } END { print s }" stacks)" -gt 6000000 ] &&
		run_preloaded "$py311" "$SCRIPT" && take_core on.core &&
		"$BUILD/unit/pystacks" on.core >stacks && [ "$(py_bytes "$FILL")" -ge 2000000 ]
	'
	test_case "HEAPPROF_FRAMES bounds the Python frames too: the innermost kept" '
		HEAPPROF_FRAMES=6 run_preloaded "$py311" -c "import time
def deep(n):
    return deep(n - 1) if n else [bytearray(100000) for i in range(10)]
held = deep(40)
print(\"ready\", flush=True)
time.sleep(120)" && take_core deep.core && "$BUILD/unit/pystacks" deep.core >stacks &&
		awk "\$3 > 6 || \$4 > 6 { bad = 1 } END { exit bad }" stacks &&
		grep -q "^10000[0-9][0-9] 10 [0-6] 6 deep.<locals>.<listcomp>@<string>:3;deep@<string>:3;deep@<string>:3;deep@<string>:3;deep@<string>:3;deep@<string>:3\$" stacks ||
		{ sort -rn stacks | head -3; false; }
	'
fi

if [ -z "$py312" ]; then
	skip_case "a snapshot of heapprof's own holds the Python frames" "no python 3.12 on this machine"
else
	test_case "a snapshot of heapprof's own holds the Python frames" '
		HEAPPROF_SIGNAL=USR2 run_preloaded "$py312" "$SCRIPT" &&
		kill -USR2 "$PROG_PID" && i=0 &&
		while ! [ -e "heapprof.$PROG_PID.1.snap" ] && [ $i -lt 300 ]; do
			sleep 0.1; i=$((i + 1))
		done &&
		"$BUILD/unit/pystacks" "heapprof.$PROG_PID.1.snap" >stacks &&
		b=$(py_bytes "$FILL") && [ "$b" -ge 2000000 ] && [ "$b" -le 2100000 ] ||
		{ echo "$b bytes under $FILL"; false; }
	'
fi

# HEAPPROF_EVENTS: a free names its own stack (free_event), Python frames and all: the
# three buffers of 100,001 bytes made in make() are the three freed in drop()
if [ -z "$py312" ]; then
	skip_case "HEAPPROF_EVENTS: frees and allocations name their Python functions" \
		"no python 3.12 on this machine"
else
	test_case "HEAPPROF_EVENTS: frees and allocations name their Python functions" '
		HEAPPROF_EVENTS=100000 run_preloaded "$py312" -c "import time
def make():
    return [bytearray(100000) for i in range(3)]
def drop(x):
    x.clear()
x = make()
drop(x)
print(\"ready\", flush=True)
time.sleep(120)" && take_core ev.core &&
		heapprof-analyze --events --stacks "$py312" ev.core >ev.txt 2>ev.err &&
		awk "/^\[thread / { call = \$0 }
			/^        0x/ && \$2 == \"make\" && \$3 == \"<string>:3\" &&
				call ~ / realloc\(0x0, 100001\) = 0x/ {
				split(call, w, \" = \"); split(w[2], a, \" \"); made[a[1]] = 1 }
			/^        0x/ && \$2 == \"drop\" && \$3 == \"<string>:5\" &&
				match(call, / free\(0x[0-9a-f]*\)/) {
				freed[substr(call, RSTART + 6, RLENGTH - 7)] = 1 }
			END { for (p in made) { m++; if (p in freed) f++ }
				print m + 0, f + 0 }" ev.txt >got &&
		echo "made under make, of them freed under drop: $(cat got)" &&
		[ "$(cat got)" = "3 3" ]
	'
fi
