#!/bin/sh
# Python frames in made-up stack records (progs/mkdump, raw mode): a fake evaluation
# loop (progs/fakeeval) whose frames --python=merged replaces by the Python frames, in
# every format and view, --python=native and python, and damaged pairs and records giving "unknown" frames, never a crash.
. "$(dirname "$0")/lib.sh"

MKDUMP=$PROGS/mkdump
PROG=$PROGS/fakeeval

pc()
{
	printf '0x%x\n' $((0x$(nm "$PROG" | awk -v f="$1" '$3 == f { print $1 }') + 4))
}

# word A of a Python frame: HP2_PYFRAME_TAG, flags (1 = HP2_PYFRAME_ENTRY), offset
pyword() { printf '0xf17e%04x%08x\n' "$1" "$2"; }

RES=$(pc bytearray_resize) EV=$(pc _PyEval_EvalFrameDefault) CALL=$(pc call_object)
MAIN=$(pc main)
NAT="$RES,$EV,$CALL,$EV,$MAIN"
FILL=$(pyword 0 2) RUN=$(pyword 1 0) MOD=$(pyword 1 4) PUT=$(pyword 1 0)

# dump FILE SHIFT [SPEC...]: stack 1 Cache.fill (a.py:11) < run (a.py:20) in the inner
# loop, <module> (a.py:32) in the outer; stack 2 Other.put (b.py:40) < <module>; stack 3
# as stack 1 through another record of Cache.fill.
dump()
{
	f=$1
	shift
	r1=0x10800 r2=0x10900 r3=0x10a00 r4=0x10b00 r5=0x10c00
	$MKDUMP -n 8192 "$f" proc@0x10000 \
		"stack@0x10100:1:$NAT,$FILL,$r1,$RUN,$r2,$MOD,$r3:python" \
		"stack@0x10180:2:$NAT,$PUT,$r4,$MOD,$r3:python" \
		"stack@0x10200:3:$NAT,$FILL,$r5,$RUN,$r2,$MOD,$r3:python" \
		site@0x10300:1:1 site@0x10340:2:2 site@0x10380:3:3 \
		"pycode@$r1:Cache.fill:a.py:10" "pycode@$r2:run:a.py:20" \
		"pycode@$r3:<module>:a.py:30" "pycode@$r4:Other.put:b.py:40" \
		"pycode@$r5:Cache.fill:a.py:10" "$@"
}

BLOCKS="v2@0x11010:1000:1 v2@0x11410:300:2 v2@0x11610:24:3"

an() { heapprof-analyze --raw a.bin@0x10000 "$@" $PROG; }

test_case 'merged (default): each loop frame replaced by its group, innermost first' '
	dump a.bin $BLOCKS && an -f collapsed >out 2>err && ! test -s err &&
	cat >want <<-EOF &&
	main;<module>;call_object;run;Cache.fill;bytearray_resize 1024
	main;<module>;call_object;Other.put;bytearray_resize 300
	EOF
	expect_same want out &&
	an -f collapsed --python=merged >out2 && expect_same want out2
'

# A name record's magic shares the block tags' top 16 bits: one whose preceding word
# names a known site (as a real dump's line-table bytes can) is a record, not a tag.
test_case 'a name record after a word that names a site: no damaged header' '
	$MKDUMP -n 8192 a.bin proc@0x10000 "stack@0x10100:1:$NAT" site@0x10300:1:1 \
		v2@0x11010:1000:1 v2@0x10d10:24:1 "pycode@0x10d08:f:a.py:1" &&
	an >out 2>err && ! test -s err && expect_grep "^#1  100.0%  1,000 bytes in 1 blocks" out
'

test_case '--python=native: as without Python frames, the stacks that became one merged' '
	dump a.bin $BLOCKS && an -f collapsed --python=native >out &&
	echo "main;_PyEval_EvalFrameDefault;call_object;_PyEval_EvalFrameDefault;bytearray_resize 1324" >want &&
	expect_same want out && expect_no_grep "0xf17e" out
'

test_case '--python=python: the Python frames and the frame that allocated' '
	dump a.bin $BLOCKS && an -f collapsed --python=python >out &&
	cat >want <<-EOF &&
	<module>;run;Cache.fill;bytearray_resize 1024
	<module>;Other.put;bytearray_resize 300
	EOF
	expect_same want out
'

test_case 'text: a Python frame with file:line and [python]; --top cuts after merging' '
	dump a.bin $BLOCKS && an --top=1 >out &&
	expect_grep "^    0x0*10800  Cache.fill  a.py:11  \[python\]\$" out &&
	expect_grep "^    0x0*10900  run  a.py:20  \[python\]\$" out &&
	expect_grep "^    0x0*10a00  <module>  a.py:32  \[python\]\$" out &&
	expect_grep "^#1  77.3%  1,024 bytes in 2 blocks" out && expect_no_grep "^#2" out
'

test_case 'json: Python frames as frames, valid against the schema' '
	dump a.bin $BLOCKS && an -f json >out.json &&
	python3 - out.json <<-EOF &&
	import json, sys
	r = json.load(open(sys.argv[1]))
	fr = r["stacks"][0]["frames"]
	names = [(f["function"], f["file"], f["line"], f["module"], f.get("python", False)) for f in fr]
	assert names[1] == ("Cache.fill", "a.py", 11, "[python]", True), names
	assert names[4] == ("<module>", "a.py", 32, "[python]", True), names
	assert not names[0][4] and names[0][0] == "bytearray_resize", names
	assert r["stacks"][0]["bytes"] == 1024
	EOF
	json_valid out.json
'

if have_pprof; then
	test_case 'pprof: one location per Python line, named with file:line' '
		dump a.bin $BLOCKS && an -f pprof -o p.pb.gz &&
		"$PPROF" -raw p.pb.gz >raw 2>raw.err && ! test -s raw.err &&
		expect_grep "^ *[0-9]*: 0x0 Cache.fill a.py:11 s=0" raw &&
		expect_grep "^ *[0-9]*: 0x0 <module> a.py:32 s=0" raw &&
		[ $(grep -c " Cache.fill a.py:11 " raw) = 1 ] &&
		"$PPROF" -top -nodefraction=0 -unit=B -sample_index=inuse_space p.pb.gz >top &&
		expect_grep " 1324B .* <module>\$" top && expect_grep " 1024B .* Cache.fill\$" top
	'
else
	skip_case 'pprof: Python locations' "$PPROF_WHY"
fi

# the page's frames are [name, file, line, module, kind]: Python functions kind 4, the
# native ones the program's (0) or a library's (1)
test_case 'svg, html: the Python names in the page, of their own kind' '
	dump a.bin $BLOCKS && an -f svg -o a.svg && expect_grep "Cache.fill" a.svg &&
	an -f html -o a.html && expect_grep "Cache.fill" a.html && expect_grep "a.py" a.html &&
	python3 -c "import json, re, sys
d = json.loads(re.search(r\"<script id=.hp-data. type=.application/json.>(.*?)</script>\",
	open(sys.argv[1]).read(), re.S).group(1))
kind = {d[\"names\"][f[0]]: f[4] for f in d[\"frames\"]}
print(sorted(kind.items()))
sys.exit(0 if all(kind[n] == 4 for n in (\"run\", \"Cache.fill\", \"Other.put\", \"<module>\")) and
	kind[\"main\"] in (0, 1) and kind[\"bytearray_resize\"] in (0, 1) else 1)" a.html
'

test_case '--focus, --hide, --by=function and --by=file see Python frames' '
	dump a.bin $BLOCKS &&
	an -f collapsed --focus="^Other[.]put\$" >out &&
	echo "main;<module>;call_object;Other.put;bytearray_resize 300" >want && expect_same want out &&
	an -f collapsed --hide="^(run|Cache[.]fill|Other[.]put)\$" >out &&
	echo "main;<module>;call_object;bytearray_resize 1324" >want && expect_same want out &&
	an --by=function >by && expect_grep -E "^ +0 +0.0% +1,?324 .*<module>\$" by &&
	expect_grep -E "^ +0 +0.0% +1,?024 .*Cache.fill\$" by &&
	an --by=file >byf && expect_grep -E "^ +0 +0.0% +1,?324 .* a.py\$" byf &&
	expect_grep -E " b.py\$" byf
'

test_case 'damaged: a bad record check, a pair pointing nowhere, odd counts, a pc among pairs' '
	$MKDUMP -n 8192 d.bin proc@0x10000 \
		"stack@0x10100:1:$NAT,$FILL,0x10800,$RUN,0x10900:python" \
		"stack@0x10180:2:$NAT,$FILL,0x10808,$RUN:python" \
		"stack@0x10200:3:$NAT,$FILL,0x10800,$MAIN,0x10900:python" \
		site@0x10300:1:1 site@0x10340:2:2 site@0x10380:3:3 \
		"pycode@0x10800:Cache.fill:a.py:10:check=bad" "pycode@0x10900:run:a.py:20" \
		$BLOCKS &&
	heapprof-analyze -f collapsed --raw d.bin@0x10000 $PROG >out 2>err &&
	cat >want <<-EOF &&
	main;_PyEval_EvalFrameDefault;call_object;run;unknown;bytearray_resize 1000
	main;_PyEval_EvalFrameDefault;call_object;unknown;unknown;bytearray_resize 324
	EOF
	sort want >w && sort out >o && expect_same w o &&
	heapprof-analyze -f json --raw d.bin@0x10000 $PROG >/dev/null &&
	heapprof-analyze -f pprof -o d.pb.gz --raw d.bin@0x10000 $PROG
'

test_case 'a cut Python stack: its frames counted once each, not by words' '
	$MKDUMP -n 8192 c.bin proc@0x10000 \
		"stack@0x10100:1:$NAT,$FILL,0x10800,$RUN,0x10900,$MOD,0x10a00:python:truncated" \
		site@0x10300:1:1 "pycode@0x10800:Cache.fill:a.py:10" "pycode@0x10900:run:a.py:20" \
		"pycode@0x10a00:<module>:a.py:30" v2@0x11010:1000:1 &&
	heapprof-analyze --raw c.bin@0x10000 $PROG >out &&
	expect_grep "^    (stack cut at 8 frames)\$" out &&
	heapprof-analyze -f json --raw c.bin@0x10000 $PROG | expect_grep "\"recorded_frames\": 8,"
'

test_case '--python takes merged, native or python; anything else is a usage error' '
	dump a.bin $BLOCKS &&
	{ an --python=mixed >out 2>err; test $? = 64; } &&
	expect_grep "^heapprof-analyze: --python takes merged, native or python, not .mixed.\$" err &&
	heapprof-analyze --help | expect_grep "^      --python=MODE "
'
