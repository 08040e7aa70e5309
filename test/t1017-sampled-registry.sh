#!/bin/sh
# The registry of live sampled blocks, and the lean snapshots it makes (issue 35 item 2):
# eight threads churn through every entry point of the malloc family with a sampling
# period small enough that thousands of blocks are sampled (the registry grows and
# rehashes, frees leave dropped entries), plus one block of 5 GiB (the header with a
# size word). Then the process idles; a lean interval snapshot and a compact one asked
# by signal at that moment give the same figures, per stack, to the byte.
. "$(dirname "$0")/lib.sh"

CHURN=$PROGS/leanchurn

# lean_at N: the lean snapshots so far number N or more (HEAPPROF_INTERVAL's, named %n)
lean_count() { ls snaps | grep -c "^c\.[0-9]*\.snap$"; }
lean_at() { [ "$(lean_count)" -ge "$1" ]; }

mkdir snaps
run_preloaded env HEAPPROF_SAMPLE=1024 HEAPPROF_INTERVAL=50ms HEAPPROF_KEEP=0 \
	HEAPPROF_SIGNAL=USR2 HEAPPROF_OUTPUT=$SCRATCH/snaps/c.%n.snap "$CHURN" 8 20000 big
RUN_RC=$?
# two lean ones after "ready": the newest holds the idle process
n=$(lean_count)
wait_for lean_at $((n + 2)) && kill -USR2 "$PROG_PID" &&
	wait_for grep -q "^heapprof: snapshot .* written:" prog.err
kill -9 "$PROG_PID" 2>/dev/null
wait "$PROG_PID" 2>/dev/null
full=$(sed -n "s/^heapprof: snapshot '\(.*\)' written: .*/\1/p" prog.err)
lean=snaps/c.$(($(echo "$full" | sed 's/.*c\.\([0-9]*\)\.snap$/\1/') - 1)).snap

test_case 'the program runs; the interval snapshots are lean, the signal one compact' '
	expect_eq "start" 0 "$RUN_RC" && expect_grep -x "big yes" prog.out &&
	expect_num "snapshots" "$(lean_count)" -ge 3 && test -s "$full" && test -s "$lean" &&
	heapprof-analyze "$CHURN" "$lean" >lean.txt 2>lean.err &&
	heapprof-analyze "$CHURN" "$full" >full.txt 2>full.err &&
	expect_grep "^  lean:       a lean snapshot: heapprof.s records and [0-9,]* sampled blocks. headers" lean.txt &&
	expect_no_grep "^  lean:" full.txt && expect_no_grep . lean.err && expect_no_grep . full.err
'

test_case 'lean and compact at one moment: every figure of every stack the same' '
	for m in inuse_space inuse_objects alloc_space alloc_objects; do
		heapprof-analyze -f collapsed --metric=$m "$CHURN" "$lean" >l.$m &&
		heapprof-analyze -f collapsed --metric=$m "$CHURN" "$full" >f.$m &&
		expect_same f.$m l.$m || exit 1
	done &&
	expect_num "stacks" "$(wc -l <f.inuse_space)" -ge 9 &&
	expect_grep "site_malloc" f.inuse_space && expect_grep "site_valloc" f.inuse_space &&
	grep -v "^  \(memory\|lean\|scanned\): " lean.txt >l.txt &&
	grep -v "^  \(memory\|lean\|scanned\): " full.txt >f.txt && expect_same f.txt l.txt
'

# the headers it holds: thousands, past the registry's first table (1,024 entries)
test_case 'the lean one holds thousands of headers and a few MiB, the compact one the heap' '
	heapprof-analyze -f json "$CHURN" "$lean" >lean.json &&
	heapprof-analyze -f json "$CHURN" "$full" >full.json &&
	expect_num "headers" "$(jnum lean_headers lean.json)" -ge 1000 &&
	expect_num "lean bytes read" "$(jnum scanned_bytes lean.json)" -lt 8000000 &&
	expect_num "compact bytes read" "$(jnum scanned_bytes full.json)" -gt 20000000 &&
	expect_grep ";main;site_malloc 5368709120$" l.inuse_space
'

test_case 'HEAPPROF_SNAPSHOT=lean without HEAPPROF_SAMPLE, or without the map table: said, compact' '
	HEAPPROF_SNAPSHOT=lean HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$SCRATCH/a.snap SITES_EXIT=1 \
		LD_PRELOAD=$PRELOAD "$PROGS/sites" small=3x1000 >a.out 2>a.err &&
	expect_grep "^heapprof: HEAPPROF_SNAPSHOT=lean needs HEAPPROF_SAMPLE" a.err &&
	HEAPPROF_SNAPSHOT=lean HEAPPROF_SAMPLE=1 HEAPPROF_MAPS=0 HEAPPROF_AT_EXIT=1 \
		HEAPPROF_OUTPUT=$SCRATCH/b.snap SITES_EXIT=1 \
		LD_PRELOAD=$PRELOAD "$PROGS/sites" small=3x1000 >b.out 2>b.err &&
	expect_grep "^heapprof: HEAPPROF_SNAPSHOT=lean needs the map table" b.err &&
	for f in a b; do
		heapprof-analyze -f collapsed "$PROGS/sites" $f.snap >$f.txt &&
		heapprof-analyze "$PROGS/sites" $f.snap >$f.report &&
		expect_no_grep "^  lean:" $f.report && expect_bytes site_small 3000 $f.txt || exit 1
	done
'

test_case 'HEAPPROF_SNAPSHOT=lean: every snapshot lean, exact bytes at HEAPPROF_SAMPLE=1' '
	HEAPPROF_SNAPSHOT=lean HEAPPROF_SAMPLE=1 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$SCRATCH/c.snap \
		SITES_EXIT=1 LD_PRELOAD=$PRELOAD "$PROGS/sites" small=3x1000 big=1x4096 \
		>c.out 2>c.err &&
	expect_grep "^heapprof: snapshot .*c\.snap. written (lean): " c.err &&
	heapprof-analyze "$PROGS/sites" c.snap >c.report && expect_grep "^  lean:" c.report &&
	heapprof-analyze -f collapsed "$PROGS/sites" c.snap >c.txt &&
	expect_bytes site_small 3000 c.txt && expect_bytes site_big 4096 c.txt
'
