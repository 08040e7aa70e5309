#!/bin/sh
# Lean snapshots of real programs (issue 35 item 2): sqlite3 and python3, sampled, each
# idle on its input after its work; a lean snapshot asked by signal and a core gcore
# takes at the same moment give the same figures per stack, to the byte, from a file a
# fraction of the core's size. What needs the heap is refused by name; pprof, the
# many-dumps merge and the interval snapshots' pipeline read lean ones as usual.
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool sqlite3

SQLITE=$(command -v sqlite3)
PY=/usr/bin/python3

# snap_then_core NAME PROG ARGS...: PROG under heapprof.so (lean snapshots by signal)
# reads a FIFO; once it printed "ready", a lean snapshot NAME.snap, then a core
# NAME.core of the same idle moment
snap_then_core()
{
	name=$1
	shift
	mkfifo $name.in || return
	# (read and write: the program holds a writer itself, and never sees the end)
	HEAPPROF_SAMPLE=65536 HEAPPROF_SNAPSHOT=lean HEAPPROF_SIGNAL=USR2 \
		HEAPPROF_OUTPUT=$SCRATCH/$name.snap LD_PRELOAD=$PRELOAD "$@" \
		<>$name.in >$name.out 2>$name.err &
	PROG_PID=$!
	cat >$name.in &&
	wait_for grep -qx ready $name.out && kill -USR2 $PROG_PID &&
		wait_for test -f $name.snap && take_core $name.core
}

snap_then_core sql "$SQLITE" :memory: <<'EOF'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO t SELECT i, hex(randomblob(16)), abs(random() % 100000) FROM n;
CREATE INDEX tb ON t(b);
SELECT 'ready';
EOF
SQL_RC=$?

cat >app.py <<'EOF'
import sys
def build(n):
    return {i: ("x%d" % i) * (i % 7 + 1) for i in range(n)}
def lists(n):
    return [[j for j in range(i % 50)] for i in range(n)]
keep = [build(20000), lists(20000), bytearray(3 << 20)]
print("ready", flush=True)
sys.stdin.read()
EOF
snap_then_core py "$PY" app.py </dev/null
PY_RC=$?

# same_figures PROG NAME: every metric's collapsed stacks (and warnings), and the text
# report but the lines that name the file, the same from NAME.snap and NAME.core
same_figures()
{
	for m in inuse_space inuse_objects alloc_space alloc_objects; do
		heapprof-analyze -f collapsed --metric=$m "$1" $2.snap >$2.l.$m 2>$2.l.err &&
		heapprof-analyze -f collapsed --metric=$m "$1" $2.core >$2.c.$m 2>$2.c.err &&
		expect_same $2.c.err $2.l.err && expect_same $2.c.$m $2.l.$m || return 1
	done
	# the modules, named as the program knew them (the dynamic linker's list)
	for f in l.snap c.core; do
		heapprof-analyze -q -f json "$1" $2.${f#*.} >$2.$f.json &&
		python3 -c "import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[\"modules\"], indent=1))" \
			$2.$f.json >$2.${f%%.*}.mods || return 1
	done
	expect_same $2.c.mods $2.l.mods &&
	heapprof-analyze "$1" $2.snap >$2.l.txt && heapprof-analyze "$1" $2.core >$2.c.txt &&
	expect_grep "^  lean:       a lean snapshot: " $2.l.txt &&
	grep -v "^  \(memory\|lean\|scanned\|symbols\): " $2.l.txt >$2.l.rest &&
	grep -v "^  \(memory\|lean\|scanned\|symbols\): " $2.c.txt >$2.c.rest &&
	expect_same $2.c.rest $2.l.rest
}

# kilobytes the file takes on disk (a snapshot's zero pages are holes)
disk_kb() { du -k "$1" | cut -f1; }

test_case 'sqlite3: lean snapshot and core of one moment, the same figures per stack' '
	expect_eq "run" 0 "$SQL_RC" && { grep -v "written (lean)" sql.err >sql.rest; true; } &&
	expect_no_grep . sql.rest &&
	same_figures "$SQLITE" sql &&
	expect_num "stacks" "$(wc -l <sql.l.inuse_space)" -ge 2
'

test_case 'sqlite3: the lean snapshot takes a tenth of the core or less' '
	expect_num "lean KiB" "$(disk_kb sql.snap)" -le "$(($(disk_kb sql.core) / 10))"
'

test_case 'python3 (pymalloc, Python frames): the same figures per stack' '
	expect_eq "run" 0 "$PY_RC" && same_figures "$PY" py &&
	expect_grep "build" py.l.inuse_space && expect_grep "lists" py.l.inuse_space &&
	expect_num "lean KiB" "$(disk_kb py.snap)" -le "$(($(disk_kb py.core) / 4))"
'

test_case 'what needs the heap: one line naming the option, exit 2, no report' '
	for o in --leaks --why=build --memory --by=type --metric=retained_space --untagged; do
		heapprof-analyze $o "$PY" py.snap >out 2>err; rc=$?
		expect_eq "$o: exit status" 2 $rc && expect_no_grep . out &&
		expect_num "$o: lines" "$(wc -l <err)" -eq 1 &&
		expect_grep "^heapprof-analyze: ${o%%=*}[=a-z_]* needs the heap.s contents, and .py\.snap. is a lean snapshot" err ||
		exit 1
	done &&
	heapprof-analyze --leaks "$PY" py.core >/dev/null
'

test_case 'json, html, --age, --peak, --timeline read a lean snapshot' '
	heapprof-analyze -f json "$SQLITE" sql.snap >sql.json && json_valid sql.json &&
	expect_eq "lean_dumps" 1 "$(jnum lean_dumps sql.json)" &&
	heapprof-analyze -f html "$SQLITE" sql.snap >sql.html &&
	for o in --age --peak --timeline; do
		heapprof-analyze $o "$SQLITE" sql.snap >/dev/null || exit 1
	done
'

test_case 'many dumps: a lean snapshot merged with the core of its moment is the core twice' '
	heapprof-analyze -q -f collapsed "$SQLITE" sql.snap sql.core >merged &&
	heapprof-analyze -q -f collapsed "$SQLITE" sql.core sql.core >twice &&
	expect_same twice merged &&
	expect_eq "bytes" "$(awk "{ s += 2 * \$NF } END { print s }" sql.l.inuse_space)" \
		"$(awk "{ s += \$NF } END { print s }" merged)" &&
	heapprof-analyze "$SQLITE" sql.snap sql.core >merged.txt &&
	expect_grep "^  lean:       1 of the 2 dumps are lean snapshots" merged.txt
'

if have_pprof; then
	test_case 'pprof: a lean snapshot gives a profile pprof reads, the same bytes' '
		heapprof-analyze -q -f pprof -o sql.pb.gz "$SQLITE" sql.snap &&
		"$PPROF" -raw sql.pb.gz >raw 2>&1 && expect_grep "lean snapshot" raw &&
		"$PPROF" -top -unit=B -sample_index=inuse_space sql.pb.gz >top 2>&1 &&
		total=$(awk "{ s += \$NF } END { print s }" sql.l.inuse_space) &&
		expect_grep "of ${total}B total" top
	'
else
	skip_case 'pprof: a lean snapshot gives a profile pprof reads' "$PPROF_WHY"
fi

# HEAPPROF_INTERVAL with HEAPPROF_SAMPLE: lean without asking; HEAPPROF_KEEP as ever;
# at HEAPPROF_SAMPLE=1 every block is sampled with weight 1: exact bytes
test_case 'interval snapshots of a sampled process are lean: KEEP=3 kept, exact bytes' '
	mkdir iv &&
	SITES_EXIT=1 HEAPPROF_SAMPLE=1 HEAPPROF_INTERVAL=200ms HEAPPROF_KEEP=3 \
		HEAPPROF_OUTPUT=$SCRATCH/iv/s.%n.snap LD_PRELOAD=$PRELOAD \
		"$PROGS/sites" small=3x1000 big=1x4096 sleep=600 free-small=1 sleep=1200 \
		>iv.out 2>iv.err &&
	expect_no_grep . iv.err && expect_num "kept" "$(ls iv | wc -l)" -eq 3 &&
	for f in iv/*.snap; do
		heapprof-analyze "$PROGS/sites" "$f" >r.txt && expect_grep "^  lean:" r.txt &&
		heapprof-analyze -f collapsed "$PROGS/sites" "$f" >c.txt &&
		expect_bytes site_small 2000 c.txt && expect_bytes site_big 4096 c.txt || exit 1
	done
'
