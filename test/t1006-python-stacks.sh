#!/bin/sh
# Python frames in the stacks heapprof.so records (preload/hooks_tag.c): each interpreter
# runs test/helpers/python_stacks.py under heapprof.so and is dumped with gcore; read with
# build/unit/pystacks, the stacks whose innermost Python frame is a known function at
# its allocating line hold that function's bytes (within 5%: the bytearray objects and
# list growth beside the buffers), and the frames outside it are the ones it ran under.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
need_tool gcore
export PYTHONMALLOC=malloc

SCRIPT=$TEST_DIR/helpers/python_stacks.py
F=python_stacks.py
line_of() { grep -n "# at $1\$" "$SCRIPT" | cut -d: -f1; }

# py_bytes PREFIX: bytes of the stacks (in stacks) whose Python frames begin with the
# frame PREFIX
py_bytes()
{
	awk -v p="$1" '$5 == p || index($5, p ";") == 1 || index($5, p "|") == 1 { s += $1 }
		END { print s + 0 }' stacks
}

# holds PREFIX N: the stacks under frame PREFIX hold N to N * 1.05 bytes
holds()
{
	b=$(py_bytes "$1")
	[ "$b" -ge "$2" ] && [ "$b" -le $(($2 + $2 / 20)) ] ||
		{ echo "$b bytes under $1, want $2 (+5%)"; grep -F "$1" stacks | head -5; false; }
}

# has_frames ERE: some stack's Python frames match ERE whole
has_frames()
{
	awk '{ print $5 }' stacks | grep -Eqx "$1" || { echo "no stack's frames match $1"; false; }
}

for label in $PYTHONS; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: Python frames in the stacks" "no python $label on this machine"
		continue
	fi
	rm -f stacks
	run_preloaded "$py" "$SCRIPT" && take_core py.core && "$BUILD/unit/pystacks" py.core >stacks
	test_case "python $label: a method's bytes under it, called from the module" '
		[ -s stacks ] && ! [ -s prog.err ] &&
		holds "Cache.fill@$F:$(line_of fill)" 2000000 &&
		has_frames "Cache\.fill@$F:$(line_of fill);<module>@$F:$(line_of call_fill)\|"
	'
	test_case "python $label: a helper called from a list comprehension" '
		holds "helper@$F:$(line_of helper)" 1000000 &&
		has_frames "helper@$F:$(line_of helper);[^;]*@$F:$(line_of comprehension)[;|].*"
	'
	test_case "python $label: a generator" '
		holds "gen@$F:$(line_of gen)" 600000
	'
	test_case "python $label: a key function called back from sorted: two calls of the loop" '
		holds "keyfn@$F:$(line_of keyfn)" 400000 &&
		has_frames "keyfn@$F:$(line_of keyfn)\|;<module>@$F:$(line_of sorted)\|"
	'
	test_case "python $label: a function run by a threading.Thread" '
		holds "worker@$F:$(line_of worker)" 1000000 &&
		has_frames "worker@$F:$(line_of worker)[;|].*;Thread\._bootstrap@threading\.py:[0-9]+\|"
	'
	test_case "python $label: one native stack under two Python callers: two sites" '
		holds "twin_a@$F:$(line_of twin_a)" 700100 &&
		holds "twin_b@$F:$(line_of twin_b)" 700100
	'
done
