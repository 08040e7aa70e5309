#!/bin/sh
# Python frames end to end on Debian's /usr/bin/python3 (3.11) under heapprof.so: a
# method holding known bytes is named with file:line in text, collapsed, pprof and json;
# --python=native and --python=python print what the man page says; --base matches the
# Python frames of two runs, whose name records lie at other addresses.
. "$(dirname "$0")/lib.sh"
need_tool gcore
PY=/usr/bin/python3
[ -x $PY ] || { echo "# skipped: no $PY"; exit 77; }
$PY -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
	{ echo "# skipped: $PY is not 3.11"; exit 77; }

# lines 9 and 10: the bytearrays; 14: run's call; 17: the module's
cat >app.py <<'EOF'
import signal, sys

class Cache:
    def __init__(self):
        self.items = []

    def fill(self, n):
        for i in range(n):
            self.items.append(bytearray(10000))
            self.items.append(bytearray(5000))

def run(n):
    c = Cache()
    c.fill(n)
    return c

keep = run(int(sys.argv[1]))
print("ready", flush=True)
signal.pause()
EOF

core()
{
	PYTHONMALLOC=malloc run_preloaded $PY "$SCRATCH/app.py" "$1" && take_core "$2"
}

an() { heapprof-analyze -q "$@" $PY a.core; }

test_case 'a core of a script whose Cache.fill holds 2 x 1000 bytearrays' '
	core 1000 a.core
'

APP=$SCRATCH/app.py
# the bytearrays' payload at line 9: 1000 blocks of 10001 bytes (the buffer and its
# NUL); with line 10's, all of Cache.fill's
PAYLOAD=10001000 FILL=15002000

test_case 'text: the bytes under Cache.fill, run and <module> with file:line' '
	an --top=1 >out &&
	grep -q "^#1  .*  10,001,000 bytes in 1,000 blocks" out &&
	grep -q "^    0x[0-9a-f]*  PyByteArray_Resize\$" out &&
	grep -q "^    0x[0-9a-f]*  Cache.fill  $APP:9  \[python\]\$" out &&
	grep -q "^    0x[0-9a-f]*  run  $APP:14  \[python\]\$" out &&
	grep -q "^    0x[0-9a-f]*  <module>  $APP:17  \[python\]\$" out &&
	! grep -q "_PyEval_EvalFrameDefault" out &&
	awk "/Cache.fill/ { c = NR } /  run  / { r = NR } /<module>/ { m = NR } /_start/ { s = NR }
	     END { exit !(c < r && r < m && m < s) }" out
'

test_case 'collapsed: Python frames between the native ones, the payload exact' '
	an -f collapsed >all &&
	grep ";PyEval_EvalCode;<module>;run;Cache.fill;_PyObject_MakeTpCall;.*PyByteArray_Resize $PAYLOAD\$" all &&
	grep ";PyEval_EvalCode;<module>;run;Cache.fill;_PyObject_MakeTpCall;.*PyByteArray_Resize 5001000\$" all &&
	[ "$(bytes_for Cache.fill all)" -ge $FILL ] &&
	[ "$(bytes_for Cache.fill all)" -le $((FILL + 200000)) ]
'

test_case 'json: Cache.fill as a frame with file, line and module [python]; valid' '
	an -f json >out.json &&
	python3 - out.json "$APP" <<-EOF &&
	import json, sys
	r = json.load(open(sys.argv[1]))
	s = r["stacks"][0]
	assert s["bytes"] == $PAYLOAD, s["bytes"]
	py = [(f["function"], f["file"], f["line"], f["module"]) for f in s["frames"] if f.get("python")]
	app = sys.argv[2]
	assert py == [("Cache.fill", app, 9, "[python]"), ("run", app, 14, "[python]"),
		      ("<module>", app, 17, "[python]")], py
	EOF
	json_valid out.json
'

if have_pprof; then
	test_case 'pprof: Cache.fill a location with its file:line, its total the payload' '
		an -f pprof -o a.pb.gz && "$PPROF" -raw a.pb.gz >raw 2>raw.err && ! test -s raw.err &&
		grep -q "^ *[0-9]*: 0x0 Cache.fill $APP:9 s=0" raw &&
		"$PPROF" -top -nodefraction=0 -sample_index=inuse_space -unit=B a.pb.gz >top &&
		total=$(awk "\$NF == \"Cache.fill\" { sub(/B\$/, \"\", \$4); print \$4 }" top) &&
		[ "$total" -ge $FILL ] && [ "$total" -le $((FILL + 200000)) ]
	'
else
	skip_case 'pprof: Python locations' "$PPROF_WHY"
fi

test_case '--python=native: the loop frame, no Python frame; the same totals' '
	an --python=native --top=1 >out &&
	grep -q "^    0x[0-9a-f]*  _PyEval_EvalFrameDefault\$" out && ! grep -q "python\]" out &&
	an --python=native -f collapsed >nat && ! grep -q "Cache.fill" nat &&
	[ "$(awk "{ s += \$NF } END { print s }" nat)" = "$(awk "{ s += \$NF } END { print s }" all)" ]
'

test_case '--python=python: the allocating frame and the Python frames alone' '
	an --python=python --top=1 >out &&
	sed -n "/^#1 /,/^\$/p" out | grep "^    0x" | awk "{ print \$2 }" >frames &&
	printf "PyByteArray_Resize\nCache.fill\nrun\n<module>\n" >want && expect_same want frames &&
	an --python=python -f collapsed | grep -q "^<module>;run;Cache.fill;PyByteArray_Resize $PAYLOAD\$"
'

test_case '--base: the Python stacks of two runs match by line, the differences exact' '
	core 1500 b.core &&
	heapprof-analyze -q -f collapsed --base=a.core $PY b.core >diff &&
	grep -q ";<module>;run;Cache.fill;_PyObject_MakeTpCall;.*PyByteArray_Resize 5000500\$" diff &&
	grep -q ";<module>;run;Cache.fill;_PyObject_MakeTpCall;.*PyByteArray_Resize 2500500\$" diff &&
	! grep "Cache.fill.*PyByteArray_Resize -" diff
'
