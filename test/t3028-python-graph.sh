#!/bin/sh
# A Python-aware heap graph (issue 33): test/helpers/python_cache.py under heapprof.so
# (PYTHONMALLOC=malloc) keeps a module-global dict that alone holds 27,000 lists of a
# bytes object each, and counts their bytes with sys.getsizeof. The collector's list
# links in front of each list are no ownership edges, so the dict's block retains the
# cache (within 10%), as --why=0xDICT and --metric=retained_space (its stack: one block)
# say, and --why's path to a cached bytes object runs through the dict and its keys;
# --by=type's dict row retains it too.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/python_heap.sh"
need_tool python3

# check WHY.json RETAINED.json CACHE: "ok"/"not ok" lines
check()
{
	python3 - "$@" <<'PY'
import json, sys
why, ret, cache = json.load(open(sys.argv[1]))['why'], json.load(open(sys.argv[2])), int(sys.argv[3])
def say(ok, what):
	print('%s %s' % ('ok' if ok else 'not ok', what))
path = why['shown'][0]['hops']
keys = [i for i, h in enumerate(path) if 'build_cache' in h['stack'] and h['bytes'] > 100000]
say(len(keys) == 1 and keys[0] > 0, 'the path to a cached bytes runs through a keys table of build_cache: %s'
    % [(h['address'], h['bytes']) for h in path])
if keys and keys[0] > 0:
	d = path[keys[0] - 1]
	print('dict %s %d' % (d['address'], d['bytes']))
	stacks = [s for s in ret['stacks'] if s['blocks'] == 1 and s['bytes'] == d['bytes'] and
	          abs(s['value'] - cache) <= 0.1 * cache]
	say(len(stacks) >= 1, "--metric=retained_space: a stack of one %d-byte block retains the cache's %d bytes (10%%)"
	    % (d['bytes'], cache))
PY
}

ran=0
for label in $PY_HEAP; do
	py=$(python_path "$label")
	[ -n "$py" ] || { skip_case "$label: the dict retains the cache" "no python $label here"; continue; }
	ran=1
	# the program runs outside the case, whose subshell cannot stop it
	rm -f cache.snap
	run_preloaded "$py" "$TEST_DIR/helpers/python_cache.py" 27000 && py_snap cache.snap
	[ -n "$PROG_PID" ] && kill -9 "$PROG_PID" 2>/dev/null && wait "$PROG_PID" 2>/dev/null
	PROG_PID=
	test_case "$label: a module-global dict retains its 27 MB cache (10%), --why through it" '
		cache=$(sed -n "s/^cache //p" prog.out) &&
		heapprof-analyze -q -f json --why=value --top=1 "$py" cache.snap >why.json &&
		heapprof-analyze -q -f json --metric=retained_space --top=0 "$py" cache.snap >ret.json &&
		check why.json ret.json "$cache" >cmp && cat cmp &&
		dict=$(sed -n "s/^dict \(0x[0-9a-f]*\) .*/\1/p" cmp) &&
		heapprof-analyze -q -f json --why="$dict" "$py" cache.snap >dict.json &&
		retains=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"why\"][\"shown\"][0][\"retains\"])" dict.json) &&
		echo "--why=$dict: retains $retains, the script counts $cache" &&
		[ $((retains * 10)) -ge $((cache * 9)) ] && [ $((retains * 10)) -le $((cache * 11)) ] &&
		all_ok cmp 2
	'
	test_case "$label: --by=type --metric=retained_space: the dict row retains the cache" '
		cache=$(sed -n "s/^cache //p" prog.out) &&
		heapprof-analyze -q -f json --by=type --metric=retained_space "$py" cache.snap >types.json &&
		python3 - types.json "$cache" <<-PY
		import json, sys
		rows = {t["type"]: t for t in json.load(open(sys.argv[1]))["types"]}
		d, cache = rows["dict"], int(sys.argv[2])
		print("dict: %d bytes in %d, retained %d; the cache %d" % (d["bytes"], d["blocks"], d.get("retained_bytes", 0), cache))
		sys.exit(not d.get("retained_bytes", 0) >= 0.9 * cache)
		PY
	'
done
[ $ran = 1 ] || exit 77
