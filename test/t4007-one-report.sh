#!/bin/sh
# One report, many writers: every format's stacks (split roots, markers, frames) and
# values agree with -f collapsed for the same report with splits (threads, leak
# classes); pprof's sample types are complete whatever --metric, their totals those of
# the text report; options a format cannot show are refused; counts survive --leaks.
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool python3

stacks_of() { python3 "$TEST_DIR/helpers/stacks_of.py" "$@"; }

# same_stacks FORMAT FILE COLLAPSED: FILE's stacks are COLLAPSED's, value for value
same_stacks()
{
	stacks_of "$1" "$2" ${4:-} >"$2.stacks" && stacks_of collapsed "$3" >"$3.stacks" &&
	expect_same "$3.stacks" "$2.stacks"
}

# svg_agrees SVG COLLAPSED: each box of the flame graph holds what the collapsed stacks
# through it hold, and no box of 0.1% or more is missing
svg_agrees()
{
	stacks_of svg "$1" >svg.boxes && stacks_of tree "$2" >tree.boxes &&
	total=$(awk '{ s += $NF } END { print s }' "$2") &&
	awk -v t="$total" 'NR == FNR { want[$0] = 1; if ($NF * 1000 >= t) big[$0] = 1; next }
		{ if (!($0 in want)) { print "box not in collapsed: " $0; bad = 1 } delete big[$0] }
		END { for (b in big) { print "box missing: " b; bad = 1 } exit bad }' \
		tree.boxes svg.boxes >&2
}

C=$PROGS/counts
test_case 'a core of the counts workload (three named threads)' '
	run_preloaded $C && take_core counts.core
'

# (worker-a and worker-b have ended when the core is taken: "(ended)" after their names)
for split in "--by-thread" "--by-thread --metric=alloc_objects" ""; do
	test_case "${split:-no split}: json, svg and html stacks are collapsed's" '
		heapprof-analyze -f collapsed $split $C counts.core >c.txt &&
		grep -q "^\[thread [0-9]* worker-a (ended)\];" c.txt || [ -z "$split" ] &&
		heapprof-analyze -f json $split $C counts.core >r.json &&
		same_stacks json r.json c.txt &&
		heapprof-analyze -f svg $split $C counts.core >r.svg &&
		svg_agrees r.svg c.txt &&
		heapprof-analyze -f html $split $C counts.core >r.html &&
		same_stacks html r.html c.txt
	'
	if have_pprof; then
		test_case "${split:-no split}: pprof -traces gives collapsed's stacks" '
			heapprof-analyze -f pprof -o r.pb.gz $split $C counts.core &&
			m=$(echo "$split" | sed -n "s/.*--metric=//p") &&
			"$PPROF" -traces -unit=B -sample_index=${m:-inuse_space} r.pb.gz >traces &&
			same_stacks traces traces c.txt
		'
	fi
done

if have_pprof; then
	# total SAMPLE_TYPE PROFILE: what pprof -top says the profile holds of it
	total()
	{
		"$PPROF" -top -unit=B -nodefraction=0 -sample_index=$1 "$2" 2>/dev/null |
			sed -n "s/.* of \([0-9.]*\)B* total.*/\1/p"
	}
	test_case 'pprof: every sample type complete, whatever --metric, totals as in text' '
		heapprof-analyze --top=0 $C counts.core >text &&
		live=$(sed -n "s/^  live: .*(\([0-9,]*\) bytes).*/\1/p" text | tr -d ,) &&
		blocks=$(sed -n "s/^  live: .* in \([0-9,]*\) blocks.*/\1/p" text | tr -d ,) &&
		calls=$(sed -n "s/^  allocated: .* in \([0-9,]*\) calls.*/\1/p" text | tr -d ,) &&
		bytes=$(sed -n "s/^  allocated: .*calls (\([0-9,]*\) bytes).*/\1/p" text | tr -d ,) &&
		for m in inuse_space alloc_objects alloc_space; do
			heapprof-analyze -f pprof --metric=$m -o p.pb.gz $C counts.core &&
			[ "$(total inuse_space p.pb.gz)" = "$live" ] &&
			[ "$(total inuse_objects p.pb.gz)" = "$blocks" ] &&
			[ "$(total alloc_objects p.pb.gz)" = "$calls" ] &&
			[ "$(total alloc_space p.pb.gz)" = "$bytes" ] || {
				echo "metric $m: $(total inuse_space p.pb.gz) $(total inuse_objects p.pb.gz) $(total alloc_objects p.pb.gz) $(total alloc_space p.pb.gz), text $live $blocks $calls $bytes" >&2
				return 1; }
		done
	'
	test_case 'pprof: a --top cut is said in the comment' '
		heapprof-analyze -f pprof --top=2 -o p.pb.gz $C counts.core &&
		"$PPROF" -comments p.pb.gz | grep -q "cut by --top/--min-percent: [0-9]* more stacks" &&
		heapprof-analyze -f pprof -o p.pb.gz $C counts.core &&
		! "$PPROF" -comments p.pb.gz | grep -q "cut by"
	'
fi

test_case 'a core of the leaks workload' '
	run_preloaded $PROGS/leaky && take_core leaky.core
'

test_case '--leaks=all: collapsed, json, svg, html and pprof keep the class roots' '
	heapprof-analyze -f collapsed --leaks=all $PROGS/leaky leaky.core >c.txt &&
	grep -q "^\[definitely lost\];" c.txt && grep -q "^\[still reachable\];" c.txt &&
	heapprof-analyze -f json --leaks=all $PROGS/leaky leaky.core >r.json &&
	same_stacks json r.json c.txt &&
	grep -q "\"leak_class\": \"definitely lost\"" r.json &&
	heapprof-analyze -f svg --leaks=all $PROGS/leaky leaky.core >r.svg &&
	svg_agrees r.svg c.txt &&
	heapprof-analyze -f html --leaks=all $PROGS/leaky leaky.core >r.html &&
	same_stacks html r.html c.txt &&
	if have_pprof; then
		heapprof-analyze -f pprof --leaks=all -o r.pb.gz $PROGS/leaky leaky.core &&
		"$PPROF" -traces -unit=B r.pb.gz >traces && same_stacks traces traces c.txt &&
		grep -q "leak_class: *definitely lost" traces
	fi
'

test_case '--leaks: the allocation counts of the dump survive in the summary' '
	heapprof-analyze $PROGS/leaky leaky.core >plain &&
	heapprof-analyze --leaks $PROGS/leaky leaky.core >leaks &&
	grep "^  allocated:" plain >a1 && grep "^  allocated:" leaks >a2 &&
	expect_same a1 a2 && ! grep -q "allocated: 0 B in 0 calls" leaks &&
	heapprof-analyze -f json --leaks $PROGS/leaky leaky.core >l.json &&
	python3 -c "import json, sys; s = json.load(open(\"l.json\"))[\"summary\"]; sys.exit(not (s[\"alloc_calls\"] > 0 and not s[\"counts_per_stack\"]))"
'

test_case 'an option a format cannot show is refused with one line' '
	for f in collapsed svg pprof; do
		heapprof-analyze -f $f --age -o out $PROGS/leaky leaky.core 2>err; [ $? = 64 ] &&
		grep -q "^heapprof-analyze: --age gives an age summary, which -f $f cannot show" err ||
		return 1
	done &&
	heapprof-analyze -f svg --base=leaky.core $PROGS/leaky leaky.core 2>err; [ $? = 64 ] &&
	grep -q "cannot show: use -f text, collapsed, pprof, json or html" err &&
	heapprof-analyze -f html --by=function $PROGS/leaky leaky.core 2>err; [ $? = 64 ] &&
	grep -qx "heapprof-analyze: --by gives a bottom-up table, which -f html cannot show: use -f text or json" err &&
	heapprof-analyze -f collapsed --memory $PROGS/leaky leaky.core 2>err; [ $? = 64 ]
'

test_case '--top cuts the --by table too, and says what it left out' '
	heapprof-analyze --by=function --top=0 $C counts.core >all &&
	heapprof-analyze --by=function --top=3 $C counts.core >three &&
	[ $(wc -l <all) -gt 6 ] &&
	head -5 all >want && head -5 three >got && expect_same want got &&
	grep -q "^$(($(wc -l <all) - 5)) more functions (--top=0 shows all)\$" three &&
	[ $(wc -l <three) = 6 ]
'

if python3 -c "import jsonschema" 2>/dev/null; then
	test_case 'make install puts the schema where the man page says' '
		make -s -C "$SRC_DIR" install B="$BUILD" PREFIX=/usr DESTDIR="$SCRATCH/stage" >install.log 2>&1 &&
		test -f stage/usr/share/heapprof/report-schema.json &&
		grep -q "share/heapprof/report\\\\-schema.json" "$SRC_DIR/doc/heapprof-analyze.1"
	'
	test_case '-f json is valid against the installed schema with every option' '
		S=stage/usr/share/heapprof/report-schema.json &&
		for opts in "" "--by-thread" "--metric=alloc_objects" "--metric=alloc_space --top=2" \
			"--age" "--older-than=0s" "--memory" "--focus=w_ --hide=main" "--region=none" \
			"--base=counts.core" "--metric=retained_space" "--leaks=all" "--short-names" \
			"--lifetimes" "--peak" "--peak-diff"; do
			heapprof-analyze -q -f json $opts $C counts.core >o.json 2>/dev/null ||
				[ $? = 2 ] || { echo "failed: $opts" >&2; return 1; }
			[ ! -s o.json ] || json_valid o.json $S || { echo "invalid: $opts" >&2; return 1; }
		done &&
		: >empty.supp && heapprof-analyze -f json --leaks=all --suppressions=empty.supp $PROGS/leaky leaky.core >l.json &&
		json_valid l.json $S
	'
else
	skip_case '-f json against the installed schema' 'python3-jsonschema missing (scripts/install-deps --test)'
fi
