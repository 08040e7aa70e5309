#!/bin/sh
# Issue 12: --base (the difference of two cores, of one process at two moments and of
# two runs with their own address layouts), the views (--focus, --ignore, --hide,
# --max-frames, --by), -f json against docs/report-schema.json, and golden outputs of
# every writer from the fixed v1 fixture (test/data/v1).
. "$(dirname "$0")/lib.sh"
need_tool gcore
SITES_PROG=$PROGS/sites

# snap FILE: a core of the running program, which goes on
snap()
{
	gcore -o "$SCRATCH/snap" "$PROG_PID" >gcore.log 2>&1 || { cat gcore.log >&2; return 1; }
	mv "$SCRATCH/snap.$PROG_PID" "$1"
}

# next_phase N: SIGUSR1, then wait for the Nth "ready"
next_phase()
{
	kill -USR1 "$PROG_PID" && i=0 &&
	while [ "$(grep -c '^ready$' prog.out)" -lt "$1" ]; do
		i=$((i + 1)); [ $i -lt 600 ] || return 1; sleep 0.1
	done
}

total() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

test_case '--base: one process at two moments, growth per function exact' '
	run_preloaded $SITES_PROG small=3x1000 tmp=2x500 wait big=2x300000 small=2x1000 \
		free-tmp=2 zeroed=4x333 &&
	snap old.core && next_phase 2 && take_core new.core &&
	heapprof-analyze -f collapsed --base=old.core $SITES_PROG new.core >diff.txt &&
	cat diff.txt &&
	expect_bytes site_big 600000 diff.txt && expect_bytes site_small 2000 diff.txt &&
	expect_bytes site_tmp -1000 diff.txt && expect_bytes site_zeroed 1332 diff.txt &&
	[ "$(total diff.txt)" = 602332 ] &&
	heapprof-analyze --base=old.core $SITES_PROG new.core >diff.text &&
	cat diff.text &&
	grep -q "^  change:     +602,332 bytes, +6 blocks" diff.text &&
	sed -n "/^#1 /,/^\$/p" diff.text | grep -q "^    site_big " &&
	grep -q "^#[0-9]*  -1,000 bytes  -2 blocks" diff.text &&
	[ "$(grep "^#" diff.text | tail -n 1 | cut -d" " -f3)" = -1,000 ]
'

test_case '--base: two runs, two address layouts, matched by module and offset' '
	run_preloaded $SITES_PROG small=3x1000 big=1x300000 lib=2x777 && take_core run1.core &&
	run_preloaded $SITES_PROG small=5x1000 big=1x300000 lib=1x777 dup=3x50 &&
	take_core run2.core &&
	heapprof-analyze -f json $SITES_PROG run1.core >run1.json &&
	heapprof-analyze -f json $SITES_PROG run2.core >run2.json &&
	if [ "$(grep -m1 "libc.so" run1.json)" = "$(grep -m1 "libc.so" run2.json)" ]; then
		echo "# note: the two runs share their libc address (no ASLR?)"; fi &&
	heapprof-analyze -f collapsed --base=run1.core $SITES_PROG run2.core >runs.txt &&
	cat runs.txt &&
	expect_bytes site_small 2000 runs.txt && expect_bytes site_big 0 runs.txt &&
	expect_bytes lib_alloc -777 runs.txt && expect_bytes site_dup 150 runs.txt &&
	[ "$(total runs.txt)" = 1373 ] &&
	heapprof-analyze -f collapsed --base=run2.core $SITES_PROG run1.core >back.txt &&
	[ "$(total back.txt)" = -1373 ] && expect_bytes site_dup -150 back.txt
'

test_case '--base: a core against itself is no difference' '
	heapprof-analyze -f collapsed --base=run1.core $SITES_PROG run1.core >self.txt &&
	! test -s self.txt
'

if have_pprof; then
	test_case '--base -f pprof: signed values, pprof reads them' '
		heapprof-analyze -f pprof -o diff.pb.gz --base=old.core $SITES_PROG new.core &&
		"$PPROF" -raw diff.pb.gz >raw 2>raw.err && ! test -s raw.err &&
		[ "$(awk "/^inuse_space/ { on = 1; next } /^Locations/ { on = 0 } on { s += \$1 } END { print s }" raw)" = 602332 ] &&
		"$PPROF" -top -nodefraction=0 -unit=B -sample_index=inuse_space diff.pb.gz >top &&
		grep -q " -1000B .* site_tmp\$" top
	'
	test_case 'pprof -base on our two profiles gives what our --base gives' '
		heapprof-analyze -f pprof -o old.pb.gz $SITES_PROG old.core &&
		heapprof-analyze -f pprof -o new.pb.gz $SITES_PROG new.core &&
		"$PPROF" -top -nodefraction=0 -unit=B -sample_index=inuse_space \
			-base old.pb.gz new.pb.gz | sed -n "/flat%/,\$p" >theirs &&
		sed -n "/flat%/,\$p" top >ours && test -s ours && expect_same ours theirs
	'
else
	skip_case '--base -f pprof read by pprof' "$PPROF_WHY"
fi

test_case '--base: usage errors' '
	heapprof-analyze -f svg --base=old.core $SITES_PROG new.core 2>err; [ $? = 64 ] &&
	heapprof-analyze --base=missing.core $SITES_PROG new.core 2>err; [ $? = 2 ] &&
	grep -q "missing.core" err
'

test_case 'a core for the views' '
	. "$TEST_DIR/helpers/sites.sh" &&
	run_preloaded $SITES_PROG $SITES && take_core sites.core &&
	heapprof-analyze -f collapsed $SITES_PROG sites.core >all.txt && check_sites all.txt
'

test_case '--focus keeps the stacks through a matching frame, nothing else' '
	heapprof-analyze -f collapsed --focus="^site_(small|big)\$" $SITES_PROG sites.core >f.txt &&
	[ "$(total f.txt)" = 602000 ] && [ "$(wc -l <f.txt)" = 2 ] &&
	heapprof-analyze --focus=site_small $SITES_PROG sites.core >f.text &&
	grep -q "^  view:       .* left out by --focus/--ignore" f.text
'

test_case '--ignore drops them' '
	heapprof-analyze -f collapsed --ignore="^site_(small|big)\$" $SITES_PROG sites.core >i.txt &&
	[ "$(( $(total i.txt) + 602000 ))" = "$(total all.txt)" ] &&
	expect_bytes site_small 0 i.txt && expect_bytes site_grow 25000 i.txt
'

test_case '--hide removes frames, keeps the bytes, merges what became one' '
	heapprof-analyze -f collapsed --hide="^(main|do_arg|_start|__libc_start.*)\$" $SITES_PROG sites.core >h.txt &&
	[ "$(total h.txt)" = "$(total all.txt)" ] &&
	! grep -Eq "(^|;)main;" h.txt && grep -q "^site_small 2000\$" h.txt &&
	heapprof-analyze -f collapsed --hide="^site_" $SITES_PROG sites.core >h2.txt &&
	expect_bytes site_small 0 h2.txt && [ "$(total h2.txt)" = "$(total all.txt)" ]
'

test_case '--max-frames keeps the innermost frames, marked truncated' '
	heapprof-analyze -f collapsed --max-frames=1 $SITES_PROG sites.core >m.txt &&
	[ "$(total m.txt)" = "$(total all.txt)" ] &&
	grep -q "^\[truncated\];site_big 600000\$" m.txt &&
	[ "$(sort m.txt | uniq -d | wc -l)" = 0 ] &&
	heapprof-analyze --max-frames=0 $SITES_PROG sites.core 2>err; [ $? = 64 ]
'

test_case '--by=function: self and total per function (pprof -top)' '
	heapprof-analyze --by=function $SITES_PROG sites.core >by.txt && cat by.txt &&
	awk "\$NF == \"site_big\" && \$1 == 600000 && \$3 == 600000 { ok = 1 } END { exit !ok }" by.txt &&
	awk "\$NF == \"inl_alloc\" && \$1 == 1400 { ok = 1 } END { exit !ok }" by.txt &&
	awk "\$NF == \"site_inl\" && \$1 == 0 && \$3 == 1400 { ok = 1 } END { exit !ok }" by.txt &&
	heapprof-analyze --by=module $SITES_PROG sites.core >bym.txt &&
	awk "\$NF == \"libsite.so\" && \$1 == 2331 { ok = 1 } END { exit !ok }" bym.txt &&
	heapprof-analyze --by=file $SITES_PROG sites.core | grep -q "test/progs/sites.c\$" &&
	heapprof-analyze -f collapsed --by=function $SITES_PROG sites.core 2>err; [ $? = 64 ]
'

test_case '--by -f json: the text'"'"'s rows, in the schema, beside the stacks' '
	heapprof-analyze --by=function --top=4 $SITES_PROG sites.core >by4.txt &&
	heapprof-analyze -f json --by=function --top=4 $SITES_PROG sites.core >by.json &&
	json_valid by.json &&
	python3 -c "import json, sys
j = json.load(open(\"by.json\"))
for r in j[\"by\"][\"rows\"]:
    print(r[\"self\"], r[\"total\"], r[\"total_blocks\"], r[\"name\"])
print(j[\"by\"][\"more_rows\"], len(j[\"stacks\"]) > 0)" >json-rows &&
	awk "NR > 2 && NF >= 6 && !/more functions/ { n = \$1 \" \" \$3 \" \" \$5; for (i = 6; i <= NF; i++) n = n \" \" \$i; print n }
		/more functions/ { more = \$1 } END { print more + 0, \"True\" }" by4.txt >text-rows &&
	expect_same text-rows json-rows
'

test_case 'views: a bad regular expression is a usage error' '
	heapprof-analyze --hide="(" $SITES_PROG sites.core 2>err; [ $? = 64 ] &&
	grep -q "bad regular expression" err
'

if python3 -c "import jsonschema" 2>/dev/null; then
	test_case '-f json: valid against docs/report-schema.json, figures as in collapsed' '
		heapprof-analyze -f json $SITES_PROG sites.core >s.json && json_valid s.json &&
		python3 -c "
import json, sys
r = json.load(open(\"s.json\"))
assert r[\"version\"] == 1
assert sum(s[\"bytes\"] for s in r[\"stacks\"]) == $(total all.txt)
names = [f[\"function\"] for s in r[\"stacks\"] for f in s[\"frames\"]]
assert \"site_small\" in names and \"inl_alloc\" in names
assert any(f[\"inlined\"] for s in r[\"stacks\"] for f in s[\"frames\"])
assert any(m[\"build_id\"] for m in r[\"modules\"])
" &&
		heapprof-analyze -f json --base=old.core $SITES_PROG new.core >d.json && json_valid d.json &&
		python3 -c "
import json
r = json.load(open(\"d.json\"))
assert r[\"base\"][\"source\"] == \"old.core\"
assert sum(s[\"bytes\"] for s in r[\"stacks\"]) == 602332
assert min(s[\"bytes\"] for s in r[\"stacks\"]) == -1000
"
	'
else
	skip_case '-f json validated' 'python3-jsonschema missing (scripts/install-deps --test)'
fi

# Golden outputs: the fixed v1 fixture, named by relative paths so that the output does
# not depend on where the tree is. Regenerate with GOLDEN=write after a deliberate change.
golden()
{
	name=$1
	shift
	(cd "$TEST_DIR/data/v1" && heapprof-analyze -q "$@" v1prog v1prog.core.gz) |
		sed "s/heapprof-analyze [0-9][^\"]*\"/heapprof-analyze VERSION\"/" >"$name.out" &&
	if [ "${GOLDEN:-}" = write ]; then cp "$name.out" "$TEST_DIR/data/$name.expected"; fi &&
	expect_same "$TEST_DIR/data/$name.expected" "$name.out"
}

test_case 'golden: text' 'golden v1-text'
test_case 'golden: collapsed' 'golden v1-collapsed -f collapsed'
test_case 'golden: json' 'golden v1-json -f json'
test_case 'golden: svg' 'golden v1-svg -f svg'
test_case 'golden: --by=function' 'golden v1-by --by=function'
test_case 'golden: --focus and --hide' 'golden v1-views -f collapsed --focus=^v1_ --hide=^_start\$'
