#!/bin/sh
# Names from the target that no output may print raw: a real program built with -g in a
# directory whose name holds an escape sequence, a Latin-1 byte and a C1 control, its
# sites in a library named as badly, their symbol names holding escape sequences, bytes
# that are not UTF-8 and long UTF-8 names (test/progs/hostile.h). Under heapprof.so,
# gcore'd and analyzed in every format: text outputs and messages hold no control
# character and are UTF-8, each bad byte shown as \xNN (doc/heapprof-analyze.1, NAMES)
# and said once on stderr; the SVG is well-formed XML with labels cut between
# characters, the JSON strict UTF-8, pprof's strings too; every format gives the
# collapsed stacks' exact bytes. Then a Python script in a Latin-1 directory (JSON).
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool python3

PLAIN="python3 $TEST_DIR/helpers/plain_text.py"
DIR=$(printf 'dir-caf\351-\033]0;owned\007-\302\233')
LIB=$(printf 'lib-\033[7m\351.so')
# the same, as the reports spell them
DIR_ESC='dir-caf\xe9-\x1b]0;owned\x07-\xc2\x9b'
LIB_ESC='lib-\x1b[7m\xe9.so'
ESC_FN='esc_\x1b[31mred\x1b[0m\x07'
LATIN_FN='latin_caf\xe9_\x9b2J'
C1_FN='c1_\xc2\x9b2J'
W=$(printf '\303\251\342\202\254\346\274\242')
W=$W$W$W$W$W
WIDE_A=wide_a_$W$W$W$W
WIDE_BB=wide_bb_$W$W$W$W
P=$SCRATCH/$DIR/hostile
C=$SCRATCH/$DIR/core
export DIR_ESC LIB_ESC ESC_FN LATIN_FN C1_FN WIDE_A WIDE_BB

test_case 'a core of a program and library in a hostile directory' '
	mkdir "$DIR" && cp "$SRC_DIR/test/progs/hostile.c" "$SRC_DIR/test/progs/hostile.h" "$DIR/" &&
	cc -O2 -fPIC -shared -I"$SRC_DIR/test/progs" -Wl,-soname,"$LIB" -o "$DIR/$LIB" \
		"$SRC_DIR/test/progs/hostile_sites.c" &&
	cc -g -O2 -o "$P" "$SCRATCH/$DIR/hostile.c" "$DIR/$LIB" -Wl,-rpath,"\$ORIGIN" &&
	HEAPPROF_EVENTS=64 run_preloaded "$P" && take_core "$C"
'

# exact live bytes under each site, the names as the reports spell them
cat >sites.expected <<EOF
$ESC_FN 1000
$LATIN_FN 3000
$C1_FN 5000
$WIDE_A 7000
$WIDE_BB 9000
in_dir 11000
EOF
# sites FILE: the collapsed stacks of FILE summed by their site (the frame below main)
sites()
{
	python3 -c '
import sys
from collections import defaultdict
t = defaultdict(int)
for line in open(sys.argv[1], encoding="utf-8"):
    path, _, v = line.rstrip("\n").rpartition(" ")
    f = path.split(";")
    if "main" in f and f.index("main") + 1 < len(f):
        t[f[f.index("main") + 1]] += int(v)
order = ["esc_", "latin_", "c1_", "wide_a", "wide_bb", "in_dir"]
for k in sorted(t, key=lambda k: [i for i, o in enumerate(order) if k.startswith(o)] or [9]):
    if any(k.startswith(o) for o in order):
        print(k, t[k])
' "$1"
}

an() { heapprof-analyze "$@" "$P" "$C"; }

test_case 'collapsed: every name escaped, the exact bytes under each' '
	an -f collapsed >collapsed 2>err && $PLAIN collapsed err &&
	sites collapsed >got && expect_same sites.expected got
'

test_case 'said once on stderr, with the first name so escaped' '
	an -f collapsed 2>err >/dev/null &&
	[ "$(grep -c "not UTF-8" err)" = 1 ] &&
	grep -q "^heapprof-analyze: warning: .*control characters or bytes that are not UTF-8.*\\\\x" err
'

test_case 'text: program, memory, functions, files and modules escaped' '
	an --top=0 >text 2>err && $PLAIN text err &&
	grep -Fqx "  program:    $SCRATCH/$DIR_ESC/hostile" text &&
	grep -Fq "  memory:     $SCRATCH/$DIR_ESC/core (" text &&
	grep -Fq "  $ESC_FN  ($LIB_ESC)" text &&
	grep -Fq "  $LATIN_FN  ($LIB_ESC)" text &&
	grep -Fq "  $C1_FN  ($LIB_ESC)" text &&
	grep -Fq "  in_dir  $SCRATCH/$DIR_ESC/hostile.c:" text
'

test_case '--by function, file and module: escaped' '
	an --by=function >byf 2>err && an --by=file >byfile 2>>err && an --by=module >bym 2>>err &&
	$PLAIN byf byfile bym err &&
	grep -Fq "  $ESC_FN" byf && grep -Fq "  $C1_FN" byf &&
	grep -Fq "  $SCRATCH/$DIR_ESC/hostile.c" byfile &&
	grep -Fq "  $LIB_ESC" bym
'

test_case '--why, --events --stacks and --leaks: escaped' '
	an --why="^esc_" >why 2>err && an --events --stacks >events 2>>err &&
	an --leaks=all >leaks 2>>err && $PLAIN why events leaks err &&
	grep -Fq "$ESC_FN" why && grep -Fq "$LATIN_FN" events && grep -Fq "$C1_FN" leaks
'

# POSIX ERE: \\ is a backslash, \[ a bracket
FOCUS='^esc_\\x1b\[31m'
test_case '--focus matches names as shown, escapes included' '
	an -f collapsed --focus="$FOCUS" >focus 2>err && $PLAIN focus err &&
	sites focus >got && echo "$ESC_FN 1000" >want && expect_same want got &&
	[ "$(wc -l <focus)" = 1 ]
'

test_case '--base: both dumps named escaped' '
	an --base="$C" >diff 2>err && $PLAIN diff err &&
	grep -Fqx "  program:    $SCRATCH/$DIR_ESC/hostile" diff &&
	grep -Fq "  old:        $SCRATCH/$DIR_ESC/core:" diff
'

test_case 'messages quoting a hostile path are escaped' '
	! heapprof-analyze "$P" "$SCRATCH/$DIR/missing" 2>err &&
	$PLAIN err &&
	grep -Fq "$DIR_ESC/missing" err && [ "$(wc -l <err)" = 1 ] &&
	! heapprof-analyze --focus="$(printf "\033[2J(")" "$P" "$C" 2>err2 >/dev/null &&
	$PLAIN err2 && grep -Fq "bad regular expression '"'"'\x1b[2J('"'"'" err2
'

test_case 'svg: well-formed XML, labels cut between characters, exact bytes' '
	an -f svg -o flame.svg 2>err && $PLAIN flame.svg err &&
	xmllint --noout flame.svg &&
	python3 -c "
import sys, xml.etree.ElementTree as ET
ns = {\"s\": \"http://www.w3.org/2000/svg\"}
cut = 0
for g in ET.parse(sys.argv[1]).getroot().iter(\"{http://www.w3.org/2000/svg}g\"):
    if g.get(\"class\") != \"f\":
        continue
    name = g.find(\"s:title\", ns).text.rsplit(\" (\", 1)[0]
    label = g.find(\"s:text\", ns).text or \"\"
    if label.endswith(\"..\") and label != name:
        assert name.startswith(label[:-2]), (name, label)
        cut += name.startswith(\"wide_\")
    else:
        assert label in (\"\", name), (name, label)
assert cut >= 2, \"no wide name was cut: %d\" % cut
" flame.svg &&
	python3 "$TEST_DIR/helpers/stacks_of.py" svg flame.svg >s1 &&
	python3 "$TEST_DIR/helpers/stacks_of.py" tree collapsed >s2 && expect_same s2 s1
'

test_case 'json: strict UTF-8, names escaped, the stacks of collapsed' '
	an -f json >report.json 2>err && $PLAIN err &&
	python3 -c "
import json, os, sys
d = json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\"))
funcs = {f[\"function\"] for s in d[\"stacks\"] for f in s[\"frames\"]}
for k in (\"ESC_FN\", \"LATIN_FN\", \"C1_FN\", \"WIDE_A\"):
    assert os.environ[k] in funcs, (k, sorted(funcs))
assert d[\"program\"].endswith(os.environ[\"DIR_ESC\"] + \"/hostile\"), d[\"program\"]
" report.json &&
	python3 "$TEST_DIR/helpers/stacks_of.py" json report.json >j1 &&
	python3 "$TEST_DIR/helpers/stacks_of.py" collapsed collapsed >j2 && expect_same j2 j1 &&
	json_valid report.json
'

test_case 'html: the page is UTF-8 without control bytes, its data the stacks of collapsed' '
	an -f html -o page.html 2>err && $PLAIN page.html err &&
	python3 "$TEST_DIR/helpers/stacks_of.py" html page.html >h1 &&
	python3 "$TEST_DIR/helpers/stacks_of.py" collapsed collapsed >h2 && expect_same h2 h1
'

if ! have_pprof; then
	skip_case 'pprof: strings UTF-8 and escaped, exact bytes' "$PPROF_WHY"
else
	test_case 'pprof: strings UTF-8 and escaped, exact bytes' '
		an -f pprof -o prof.pb.gz 2>err && "$PPROF" -raw prof.pb.gz >raw && $PLAIN raw err &&
		grep -Fq "$ESC_FN" raw && grep -Fq "$LIB_ESC" raw &&
		"$PPROF" -traces -unit=B -sample_index=inuse_space prof.pb.gz >traces &&
		python3 "$TEST_DIR/helpers/stacks_of.py" traces traces >p1 &&
		python3 "$TEST_DIR/helpers/stacks_of.py" collapsed collapsed >p2 && expect_same p2 p1
	'
fi

# Python keeps a file name that is not UTF-8 with its bytes as lone surrogates
# (surrogateescape): the report gives the bytes back, escaped.
PY=/usr/bin/python3
if [ ! -x $PY ] || ! $PY -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
	skip_case 'a Python script in a Latin-1 directory: strict JSON' "no $PY 3.11"
	exit 0
fi
PYDIR=$(printf 'caf\351-\033[31m')
export PYFILE="$SCRATCH/caf\\xe9-\\x1b[31m/app.py"
test_case 'a Python script in a Latin-1 directory: strict JSON, its file escaped' '
	mkdir "$PYDIR" && printf "%s\n" "import signal" "def fill(n):" \
		"    return [bytearray(10000) for i in range(n)]" "keep = fill(100)" \
		"print(\"ready\", flush=True)" "signal.pause()" >"$PYDIR/app.py" &&
	PYTHONMALLOC=malloc run_preloaded $PY "$SCRATCH/$PYDIR/app.py" && take_core py.core &&
	heapprof-analyze -q -f json $PY py.core >py.json &&
	heapprof-analyze -q --top=1 $PY py.core >py.txt && $PLAIN py.txt &&
	python3 -c "
import json, os, sys
d = json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\"))
files = {f[\"file\"] for s in d[\"stacks\"] for f in s[\"frames\"] if f[\"file\"]}
assert os.environ[\"PYFILE\"] in files, sorted(files)
" py.json &&
	grep -Fq "  fill  $PYFILE:3  [python]" py.txt
'
