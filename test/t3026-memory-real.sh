#!/bin/sh
# --memory on real programs leaves at most 2% of the dump's anonymous bytes of no known
# origin ("other anonymous"), and its anonymous bytes agree with the process's own
# /proc/PID/smaps, read just before gcore (test/helpers/memory_vs_smaps.py says how):
# progs/maps (a C program mapping its own rings and arenas), sqlite3 holding a table
# in a 64 MiB cache, python3 under PYTHONMALLOC=malloc with json documents, an sqlite
# table and compiled regexes.
. "$(dirname "$0")/lib.sh"
need_tool gcore
CHECK="python3 $SRC_DIR/test/helpers/memory_vs_smaps.py"

# check NAME PROGRAM: smaps, core, report and the comparison of a ready program
check()
{
	cat /proc/$PROG_PID/smaps >"$1.smaps" &&
	take_core "$1.core" &&
	heapprof-analyze --memory -f json --top=3 "$2" "$1.core" >"$1.json" &&
	$CHECK "$1.smaps" "$1.json"
}

test_case 'a C program that maps its own arenas: other <= 2%, smaps agrees' '
	run_preloaded $PROGS/maps &&
	check maps $PROGS/maps
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

cat >work.py <<'EOF'
import json, re, sqlite3, time
docs = [json.dumps({"id": i, "name": "item%d" % i, "tags": ["a", str(i)]}) for i in range(30000)]
index = {d["id"]: d for d in map(json.loads, docs)}
db = sqlite3.connect(":memory:")
db.execute("create table t(a, b)")
db.executemany("insert into t values (?, ?)", ((i, "x" * 100) for i in range(50000)))
pats = [re.compile("a%db+c{%d}" % (i, i % 7 + 1)) for i in range(500)]
print("ready", flush=True)
time.sleep(600)
EOF
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
test_case 'python3 under PYTHONMALLOC=malloc: other <= 2%, smaps agrees' '
	PYTHONMALLOC=malloc run_preloaded $PY work.py &&
	check python "$(readlink -f $PY)"
'
