#!/bin/sh
# --memory on real programs leaves at most 2% of the dump's anonymous bytes of no known
# origin ("other anonymous"), and its anonymous bytes agree with the process's own
# /proc/PID/smaps, read just before gcore (test/helpers/memory_vs_smaps.py says how):
# progs/maps (a C program mapping its own rings and arenas), progs/arena_server (a C++
# server with an arena of its own, new and delete in threads; glibc's figures checked
# against its mallinfo2()), sqlite3 holding a table in a 64 MiB cache, python3 with json documents, an sqlite table and compiled regexes,
# under PYTHONMALLOC=malloc and under its own allocator (pymalloc) on each interpreter
# heapprof knows. The Python script prints the interpreter's own figures at the moment
# of the core (progs/libpystats.so): glibc's mallinfo2(), which --memory's allocator
# figures equal, and pymalloc's statistics, which its pools and arenas equal
# (test/helpers/memory_vs_pymalloc.py); a function's objects hold what sys.getsizeof
# says they do.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
need_tool gcore
CHECK="python3 $SRC_DIR/test/helpers/memory_vs_smaps.py"
PYCHECK="python3 $SRC_DIR/test/helpers/memory_vs_pymalloc.py"

# check NAME PROGRAM [TOP]: smaps, core, report (--top=TOP, 3) and the comparison of a
# ready program
check()
{
	cat /proc/$PROG_PID/smaps >"$1.smaps" &&
	take_core "$1.core" &&
	heapprof-analyze --memory -f json --top="${3:-3}" "$2" "$1.core" >"$1.json" &&
	$CHECK "$1.smaps" "$1.json"
}

test_case 'a C program that maps its own arenas: other <= 2%, smaps agrees' '
	run_preloaded $PROGS/maps &&
	check maps $PROGS/maps
'

# under_stack JSON FUNC BYTES: memory.mapped has one stack through FUNC, with BYTES in
# one mapping
under_stack()
{
	python3 - "$@" <<'EOF'
import json, sys
mapped = json.load(open(sys.argv[1]))["memory"]["mapped"]
got = [(s["mapped_bytes"], s["mappings"]) for s in mapped
       if any(f.get("function") == sys.argv[2] for f in s["frames"])]
want = [(int(sys.argv[3]), 1)]
if got != want:
    sys.exit("stacks through %s: %s (bytes, mappings), want %s" % (sys.argv[2], got, want))
EOF
}

# A C++ server: sessions in an arena it maps itself, requests by new and delete in two
# threads still alive. glibc's figures equal mallinfo2()'s, the responses kept what the
# program counted.
test_case 'a C++ server with an arena of its own: other <= 2%, smaps and mallinfo2 agree' '
	run_preloaded $PROGS/arena_server &&
	check server $PROGS/arena_server &&
	under_stack server.json arena_map "$(sed -n "s/^arena //p" prog.out)" &&
	expect_mallinfo server.json prog.out 0 &&
	heapprof-analyze -f collapsed $PROGS/arena_server server.core >server.txt &&
	expect_bytes make_response "$(sed -n "s/^expect make_response //p" prog.out)" server.txt
'

cat >load.sql <<'EOF'
PRAGMA cache_size=-65536;
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
INSERT INTO t SELECT x, printf('%0200d', x) FROM c;
SELECT 'ready';
EOF
# the SQL, then stdin kept open: sqlite3 waits for more
start_writer()
{
	{ cat load.sql; sleep 300; } >in &
	writer=$!
}
if command -v sqlite3 >/dev/null 2>&1; then
	test_case 'sqlite3 with a 64 MiB cache: other <= 2%, smaps agrees' '
		mkfifo in &&
		start_writer &&
		run_preloaded sh -c "exec sqlite3 :memory: <in" &&
		check sqlite3 "$(command -v sqlite3)"
		rc=$?; kill $writer 2>/dev/null; [ $rc = 0 ]
	'
else
	skip_case 'sqlite3 with a 64 MiB cache' 'no sqlite3'
fi

# make_records' objects, of 2 to 401 bytes, are pymalloc's under its own allocator;
# the list they go in is made elsewhere
cat >work.py <<'EOF'
import ctypes, json, re, sqlite3, sys, time

def make_records(out):
    for i in range(len(out)):
        out[i] = bytes(2 + i % 400)

docs = [json.dumps({"id": i, "name": "item%d" % i, "tags": ["a", str(i)]}) for i in range(30000)]
index = {d["id"]: d for d in map(json.loads, docs)}
db = sqlite3.connect(":memory:")
db.execute("create table t(a, b)")
db.executemany("insert into t values (?, ?)", ((i, "x" * 100) for i in range(50000)))
pats = [re.compile("a%db+c{%d}" % (i, i % 7 + 1)) for i in range(500)]
records = [None] * 20000
make_records(records)
print("make_records %d" % sum(sys.getsizeof(r) for r in records))
stats = ctypes.PyDLL(sys.argv[1]).pymalloc_stats
stats()
print("ready", flush=True)
time.sleep(600)
EOF

# getsizeof NAME PROGRAM: NAME.core's bytes under make_records are what sys.getsizeof
# summed (prog.out's "make_records N")
getsizeof()
{
	heapprof-analyze -f collapsed "$2" "$1.core" >"$1.txt" &&
	expect_bytes make_records "$(sed -n 's/^make_records //p' prog.out)" "$1.txt"
}

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
test_case 'python3 under PYTHONMALLOC=malloc: other <= 2%, smaps and mallinfo2 agree' '
	PYTHONMALLOC=malloc run_preloaded $PY work.py $PROGS/libpystats.so &&
	check python "$(readlink -f $PY)" &&
	expect_mallinfo python.json prog.out 0 &&
	getsizeof python "$(readlink -f $PY)" && rm python.core
'

unset PYTHONMALLOC
for label in debian-3.11 3.12 3.13; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label, its own allocator: other <= 2%, as smaps, mallinfo2 and pymalloc say" "no python $label on this machine"
		continue
	fi
	test_case "python $label, its own allocator: other <= 2%, as smaps, mallinfo2 and pymalloc say" '
		run_preloaded "$py" work.py $PROGS/libpystats.so &&
		check "pym-$label" "$(readlink -f "$py")" 50 &&
		$PYCHECK "pym-$label.json" prog.err work.py &&
		expect_mallinfo "pym-$label.json" prog.out 0 &&
		getsizeof "pym-$label" "$(readlink -f "$py")" && rm "pym-$label.core"
	'
done
