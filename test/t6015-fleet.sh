#!/bin/sh
# Many dumps, one report: 20 runs of one program, each snapshotted at exit (half of the
# snapshots gzipped), read together. Each stack's bytes are exactly the sum of the
# single reports', `dumps` is exact, the median and 95th percentile of a stack's live
# bytes per dump are those of a constructed case, the output is byte for byte the same
# in any order of the arguments and any -j, and the merged pprof is pprof's own merge of
# the single profiles, sample for sample. Dumps of two builds are refused, and so are
# the analyses that read one heap.
. "$(dirname "$0")/lib.sh"
need_tool python3

# Run i of 20 allocates i blocks of 1,000 bytes in site_small; runs 1-5 one block of
# 300,000 in site_big; run 20 alone one of 333 in site_zeroed. Per dump, site_small holds
# 1,000 .. 20,000: the median (nearest rank 10 of 20) is 10,000, the 95th percentile
# (rank 19) 19,000; site_big is in 5 dumps, 15 of them 0: median 0, p95 300,000;
# site_zeroed in 1 dump: median and p95 0.
test_case '20 runs, snapshotted at exit' '
	i=1 &&
	while [ $i -le 20 ]; do
		args="small=${i}x1000" &&
		{ [ $i -gt 5 ] || args="$args big=1x300000"; } &&
		{ [ $i -ne 20 ] || args="$args zeroed=1x333"; } &&
		SITES_EXIT=1 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=run$i.snap LD_PRELOAD=$PRELOAD \
			$PROGS/sites $args >/dev/null 2>run.err || { cat run.err; exit 1; }
		[ $((i % 2)) = 1 ] || gzip -1 run$i.snap || exit 1
		i=$((i + 1))
	done &&
	ls run*.snap* | sort -V >dumps && test "$(wc -l <dumps)" = 20
'
DUMPS=$(cat dumps 2>/dev/null)

# A frame no symbol names shows its module's file name. One dump names a library as
# the dynamic linker did (libstdc++.so.6); merged dumps, by the files the dumps list,
# as the file the link points to (libstdc++.so.6.0.30): the same file. names.sed
# rewrites the first into the second, for the libraries of the sites program.
LD_PRELOAD=$PRELOAD ldd $PROGS/sites | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
	while read -r lib; do
		real=$(readlink -f "$lib") && [ "${lib##*/}" != "${real##*/}" ] &&
			printf 's/\\(^\\|[;| ]\\)%s+0x/\\1%s+0x/g\n' "${lib##*/}" "${real##*/}"
	done >names.sed
REVERSED=$(sort -rV dumps 2>/dev/null)

test_case 'each stack'"'"'s bytes and blocks are the sum of the single reports'"'"'' '
	for d in $DUMPS; do heapprof-analyze -f collapsed $PROGS/sites $d || exit 1; done >singles &&
	sed -f names.sed singles |
		awk "{ n = \$NF; \$NF = \"\"; sum[\$0] += n } END { for (s in sum) print s sum[s] }" |
		sort >want &&
	heapprof-analyze -f collapsed $PROGS/sites $DUMPS >merged.txt &&
	sort merged.txt >got && expect_same want got &&
	grep -q "site_small 210000$" got && grep -q "site_big 1500000$" got &&
	grep -q "site_zeroed 333$" got &&
	for d in $DUMPS; do heapprof-analyze -f collapsed --metric=inuse_objects $PROGS/sites $d ||
		exit 1; done >singles.n &&
	sed -f names.sed singles.n |
		awk "{ n = \$NF; \$NF = \"\"; sum[\$0] += n } END { for (s in sum) print s sum[s] }" |
		sort >want.n &&
	heapprof-analyze -f collapsed --metric=inuse_objects $PROGS/sites $DUMPS | sort >got.n &&
	expect_same want.n got.n && grep -q "site_small 210$" got.n
'

# leaf dumps median_bytes p95_bytes bytes, for the stacks of the sites
json_figures()
{
	python3 -c '
import json, sys
r = json.load(sys.stdin)
for s in r["stacks"]:
    leaf = s["frames"][0]["function"] if s["frames"] else None
    if leaf and leaf.startswith("site_"):
        print(leaf, s["dumps"], s["median_bytes"], s["p95_bytes"], s["bytes"])
print("merged", r["dumps"]["merged"])' | sort
}

test_case 'JSON: dumps, median_bytes and p95_bytes of the constructed case' '
	heapprof-analyze -f json $PROGS/sites $DUMPS >merged.json &&
	json_valid merged.json && json_figures <merged.json >got &&
	printf "%s\n" "merged 20" "site_big 5 0 300000 1500000" "site_small 20 10000 19000 210000" \
		"site_zeroed 1 0 0 333" >want && expect_same want got
'

test_case 'text: each stack says its dumps, median and p95' '
	heapprof-analyze $PROGS/sites $DUMPS >merged.text &&
	expect_grep "^  dumps:      20 merged" merged.text &&
	grep -A2 "^#[0-9].*210,000 bytes in 210 blocks" merged.text >small &&
	expect_grep "^  in 20 dumps; live bytes per dump: median 10,000, p95 19,000$" small
'

test_case 'the same bytes in any order of the dumps and with any -j' '
	for f in text json pprof collapsed; do
		heapprof-analyze -f $f -j 1 $PROGS/sites $DUMPS >fwd.$f &&
		heapprof-analyze -f $f -j 4 $PROGS/sites $REVERSED >rev.$f &&
		cmp fwd.$f rev.$f || exit 1
	done
'

# pprof -traces' samples, one a line, sorted: pprof keeps a profile's order of samples
samples()
{
	sed -n "/^Type:/,\$p" "$1" |
		awk "/^-+[+]-+\$/ { print s; s = \"\"; next } { s = s \"|\" \$0 } END { print s }" | sort
}

# pprof's Parse runs profile.CheckValid: a profile it reads passed it
if have_pprof; then
	test_case 'pprof: the merged profile is pprof -proto of the single ones, sample for sample' '
		n=0 &&
		for d in $DUMPS; do
			n=$((n + 1)) && heapprof-analyze -f pprof -o one$n.pb.gz $PROGS/sites $d || exit 1
		done &&
		"$PPROF" -proto one*.pb.gz >theirs.pb.gz 2>proto.err &&
		heapprof-analyze -f pprof -o ours.pb.gz $PROGS/sites $DUMPS &&
		for t in inuse_space inuse_objects alloc_space alloc_objects; do
			"$PPROF" -traces -unit=B -sample_index=$t ours.pb.gz >ours.$t 2>ours.err &&
			"$PPROF" -traces -unit=B -sample_index=$t theirs.pb.gz >theirs.$t 2>theirs.err &&
			samples ours.$t >a && samples theirs.$t | sed -f names.sed >b &&
			expect_same b a && grep -q site_small a || { cat ours.err theirs.err; exit 1; }
		done
	'
else
	skip_case 'pprof: the merged profile against pprof -proto' "$PPROF_WHY"
fi

# site_small's blocks are all freed before each snapshot: its stack has counts and is in
# no dump (figured with no per-dump bytes at all; under the sanitizers this stopped the
# analyzer: qsort of a NULL list)
test_case 'a stack whose blocks were all freed: in 0 dumps, median and p95 0' '
	for i in 1 2; do
		SITES_EXIT=1 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=freed$i.snap LD_PRELOAD=$PRELOAD \
			$PROGS/sites small=${i}x1000 free-small=$i big=1x300000 >/dev/null 2>run.err ||
			{ cat run.err; exit 1; }
	done &&
	heapprof-analyze -f json --metric=alloc_space $PROGS/sites freed1.snap freed2.snap \
		>freed.json 2>err && expect_same /dev/null err && json_valid freed.json &&
	python3 -c "import json, sys
for s in json.load(sys.stdin)[\"stacks\"]:
    leaf = s[\"frames\"][0][\"function\"] if s[\"frames\"] else None
    if leaf in (\"site_small\", \"site_big\"):
        print(leaf, s[\"dumps\"], s[\"median_bytes\"], s[\"p95_bytes\"], s[\"bytes\"], s[\"value\"])
" <freed.json | sort >got &&
	printf "%s\n" "site_big 2 300000 300000 600000 600000" "site_small 0 0 0 0 3000" >want &&
	expect_same want got
'

test_case 'analyses of one heap are refused with more than one CORE' '
	for opt in --leaks --why=site_big --base=run1.snap --memory --peak --timeline \
		--metric=retained_space --by=type; do
		heapprof-analyze $opt $PROGS/sites run1.snap run3.snap >out 2>err; rc=$?
		expect_eq "status of $opt" 64 $rc && test ! -s out &&
		expect_grep "^heapprof-analyze: more than one CORE" err || exit 1
	done &&
	heapprof-analyze --by=function -f json $PROGS/sites $DUMPS >by.json &&
	expect_grep "\"site_small\"" by.json
'

test_case 'a dump that cannot be read: no report, one line naming it' '
	head -c 4096 /dev/urandom >junk &&
	heapprof-analyze $PROGS/sites run1.snap junk run3.snap >out 2>err; rc=$?
	expect_eq status 2 $rc && test ! -s out && test "$(wc -l <err)" = 1 &&
	expect_grep "^heapprof-analyze: .*junk" err
'

if command -v gcore >/dev/null; then
	test_case 'dumps of two builds of PROGRAM are refused, with the build-ids' '
		cp $PROGS/rebuild prog && run_preloaded ./prog && take_core old.core &&
		cp $PROGS/rebuild-extra prog && run_preloaded ./prog && take_core new.core &&
		old=$(readelf -n $PROGS/rebuild | sed -n "s/.*Build ID: //p") &&
		new=$(readelf -n $PROGS/rebuild-extra | sed -n "s/.*Build ID: //p") &&
		heapprof-analyze -j 1 ./prog old.core new.core >out 2>err; rc=$?
		expect_eq status 2 $rc && test ! -s out && test "$(wc -l <err)" = 1 &&
		expect_grep "^heapprof-analyze: .old.core. and .new.core. hold different builds of .*/prog. (build-id $old, $new): merge dumps of one build" err
	'
else
	skip_case 'dumps of two builds of PROGRAM are refused' 'gcore is not installed'
fi
