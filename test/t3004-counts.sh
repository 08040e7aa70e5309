#!/bin/sh
# Allocation counts per stack and thread (site counters, block format v2), times, event
# rings and regions, end to end: progs/counts allocates known calls and bytes per
# function in the main thread and two named threads (table in test/progs/counts.c).
. "$(dirname "$0")/lib.sh"
need_tool gcore

C=$PROGS/counts
# worker-a and worker-b have ended (joined) when the dump is taken: their names say so
WA='worker-a [(]ended[)]' WB='worker-b [(]ended[)]'

# figure THREAD FUNC FILE: summed COUNT of the collapsed --by-thread lines of the thread
# named THREAD ("[thread TID THREAD]") that pass through frame FUNC
figure()
{
	awk -v t="$1" -v f="$2" '{ n = split($0, a, " "); s = substr($0, 1, length($0) - length(a[n]) - 1);
		k = split(s, fr, ";"); if (fr[1] !~ ("^\\[thread [0-9]+ " t "\\]$")) next;
		for (i = 2; i <= k; i++) if (fr[i] == f) { c += a[n]; break } }
		END { print c + 0 }' "$3"
}

# expect THREAD FUNC N FILE
expect()
{
	got=$(figure "$1" "$2" "$4")
	[ "$got" = "$3" ] || { echo "$1 $2: expected $3, got $got" >&2; return 1; }
}

# the per-function, per-thread table of progs/counts.c, as METRIC counts it
check_table()
{
	heapprof-analyze -f collapsed --by-thread --metric=alloc_objects $C "$1" >objects.txt &&
	expect counts f_malloc 10 objects.txt && expect counts f_calloc 5 objects.txt &&
	expect counts f_realloc 9 objects.txt && expect counts f_aligned 6 objects.txt &&
	expect counts f_cxx 7 objects.txt && expect "$WA" w_a 20 objects.txt &&
	expect "$WB" w_b 7 objects.txt && expect "$WB" w_a 0 objects.txt &&
	expect counts w_a 0 objects.txt &&
	heapprof-analyze -f collapsed --by-thread --metric=alloc_space $C "$1" >space.txt &&
	expect counts f_malloc 1000 space.txt && expect counts f_calloc 500 space.txt &&
	expect counts f_realloc 180 space.txt && expect counts f_aligned 1112 space.txt &&
	expect counts f_cxx 1344 space.txt && expect "$WA" w_a 1280 space.txt &&
	expect "$WB" w_b 7000 space.txt &&
	heapprof-analyze -f collapsed --by-thread --metric=inuse_objects $C "$1" >inuse.txt &&
	expect counts f_malloc 6 inuse.txt && expect "$WA" w_a 10 inuse.txt &&
	expect "$WB" w_b 7 inuse.txt && expect counts f_realloc 3 inuse.txt &&
	tids=$(sed -n "s/^tids //p" prog.out) && echo "$tids" &&
	for t in worker-a worker-b; do
		tid=$(echo "$tids" | tr " " "\n" | sed -n "s/^$t=//p") &&
		grep -q "^\[thread $tid $t (ended)\];" objects.txt || return 1
	done
}

# the text record (blank-line separated) of the stack through FUNC of thread THREAD
text_stack()
{
	awk -v RS= -v t="$1" -v f="$2" '$0 ~ ("thread: +[0-9]+ " t "\n") && $0 ~ ("  " f "  ")' "$3"
}

test_case 'a running process: calls and bytes per function and per thread are exact' '
	run_preloaded $C counts && take_core run.core &&
	check_table run.core
'

test_case 'frees land on the freeing thread: worker-b freed 10 of worker-a blocks' '
	heapprof-analyze --by-thread --metric=alloc_space --top=0 $C run.core >text.txt &&
	text_stack "$WB" w_a text.txt | expect_grep "freed 640 bytes in 10 frees" &&
	text_stack "$WA" w_a text.txt | expect_grep "allocated 1,280 bytes in 20 calls; freed 0 bytes in 0 frees" &&
	text_stack counts f_malloc text.txt | expect_grep "live 600 bytes in 6 blocks; allocated 1,000 bytes in 10 calls; freed 400 bytes in 4 frees" &&
	expect_grep "data: .*counts (exact)" text.txt
'

test_case '--by-thread collapsed: no line of count 0 (a thread that only freed there)' '
	for m in alloc_objects alloc_space inuse_objects inuse_space; do
		heapprof-analyze -f collapsed --by-thread --metric=$m $C run.core >m.txt &&
		[ -s m.txt ] && ! grep " 0\$" m.txt || exit 1
	done
'

test_case 'without --by-thread the threads fold into one stack each' '
	heapprof-analyze -f collapsed --metric=alloc_objects $C run.core >flat.txt &&
	expect_no_grep "^\[thread" flat.txt && expect_bytes w_a 20 flat.txt && expect_bytes f_cxx 7 flat.txt
'

# collapsed lines summed per frames (a stack may show in several lines: its entry
# points), without a leading leak class: "frames COUNT", sorted
by_frames()
{
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); sub(/^\[(definitely|indirectly|possibly) lost\];/, "");
		sub(/^\[still reachable\];/, ""); s[$0] += n } END { for (k in s) print k, s[k] }' |
		sort
}

# --older-than and --leaks make the stacks again from the blocks, with the records the
# scan joined: a site's thread is a slot in the dump, mapped to its tid once
test_case '--by-thread with --older-than or --leaks=all: each stack keeps its thread' '
	heapprof-analyze -f collapsed --by-thread $C run.core | by_frames >threads.txt &&
	heapprof-analyze -f collapsed --by-thread --older-than=0s $C run.core | by_frames >older.txt &&
	expect_same threads.txt older.txt &&
	heapprof-analyze -f collapsed --by-thread --leaks=all $C run.core | by_frames >leaks.txt &&
	expect_same threads.txt leaks.txt
'

test_case 'collapsed output is "frames COUNT" lines for every metric' '
	for m in inuse_space inuse_objects alloc_space alloc_objects; do
		heapprof-analyze -f collapsed --metric=$m $C run.core >m.txt &&
		[ -s m.txt ] && ! grep -v "^[^ ].* [0-9]\+\$" m.txt || { echo "bad $m"; return 1; }
	done &&
	heapprof-analyze -f collapsed $C run.core >default.txt &&
	heapprof-analyze -f collapsed --metric=inuse_space $C run.core | cmp - default.txt
'

# the total holds libstdc++'s 72,704-byte emergency pool too: w_b's 7,000 bytes are 8% of
# the ~86,000 allocated, f_calloc's 500 under 1%; w_a's 10 live blocks are 21% of 47
test_case '--min-percent applies to the metric: alloc_space keeps w_b (8%), not f_calloc' '
	heapprof-analyze -f collapsed --metric=alloc_space --min-percent=5 $C run.core >min.txt &&
	expect_grep ";w_b 7000\$" min.txt && expect_no_grep ";f_calloc " min.txt &&
	heapprof-analyze -f collapsed --metric=inuse_objects --min-percent=5 $C run.core >mino.txt &&
	expect_grep ";w_a 10\$" mino.txt
'

test_case 'alloc_time without HEAPPROF_TIME=1, a bad metric, an unknown region: one line each' '
	heapprof-analyze --metric=alloc_time $C run.core >out 2>err; rc=$?
	[ $rc = 2 ] && [ "$(wc -l <err)" = 1 ] &&
	expect_grep "alloc_time was not recorded (run with HEAPPROF_TIME=1)" err &&
	heapprof-analyze --metric=bytes $C run.core 2>err; [ $? = 64 ] &&
	heapprof-analyze --region=nope $C run.core >out 2>err; rc=$?
	[ $rc = 2 ] && [ "$(wc -l <err)" = 1 ] && expect_grep "no region .nope." err
'

# The crash case. core_pattern is not ours to set, so the program takes SIGABRT from
# abort() into a handler that says "ready" and waits; gcore takes the core there and
# the process is killed with -9: nothing depends on exit or on atexit handlers.
test_case 'a crashed process (abort, core taken in its SIGABRT handler): the same counts' '
	run_preloaded $C crash && take_core crash.core &&
	check_table crash.core
'

# seeded_run N: a sampled run with HEAPPROF_SEED=777, its live bytes into seedN.txt
seeded_run()
{
	HEAPPROF_SAMPLE=65536 HEAPPROF_SEED=777 run_preloaded $C sampled &&
	take_core seed$1.core &&
	heapprof-analyze -f collapsed $C seed$1.core >seed$1.txt
}

test_case 'HEAPPROF_SEED: three runs with the same seed sample the same blocks' '
	seeded_run 1 && seeded_run 2 && seeded_run 3 &&
	[ "$(bytes_for s_big seed1.txt)" -gt 0 ] &&
	expect_same seed1.txt seed2.txt && expect_same seed1.txt seed3.txt
'

# Sampling. A call of s bytes is sampled with p = 1 - exp(-s/P) and counts 1/p, so n
# calls estimate n with sd sqrt(n (1-p) / p), and bytes with s times that. P = 65536:
#   s_big   20,000 x 3,000: p = 0.0447, sd 653 calls (3.3%), 1.96e6 bytes
#   s_small 100,000 x 100:  p = 0.00152, sd 8,092 calls (8.1%), 0.81e6 bytes
# The test allows 4 sd. s_small's blocks are all freed: the same sampled blocks count
# their frees, so its frees equal its calls exactly.
within() { [ "$1" -gt $(($2 - 4 * $3)) ] && [ "$1" -lt $(($2 + 4 * $3)) ] ||
	{ echo "$1 not within 4 x $3 of $2" >&2; return 1; }; }

test_case 'HEAPPROF_SAMPLE=65536: call and byte estimates within 4 sd, said to be estimates' '
	HEAPPROF_SAMPLE=65536 HEAPPROF_SEED=12345 run_preloaded $C sampled &&
	take_core sampled.core &&
	heapprof-analyze -f collapsed --metric=alloc_objects $C sampled.core >so.txt &&
	heapprof-analyze -f collapsed --metric=alloc_space $C sampled.core >ss.txt &&
	big=$(bytes_for s_big so.txt) && small=$(bytes_for s_small so.txt) &&
	bigb=$(bytes_for s_big ss.txt) && smallb=$(bytes_for s_small ss.txt) &&
	echo "calls $big (20000) $small (100000), bytes $bigb (60000000) $smallb (10000000)" &&
	within $big 20000 653 && within $small 100000 8092 &&
	within $bigb 60000000 1960000 && within $smallb 10000000 810000 &&
	heapprof-analyze --metric=alloc_objects --top=0 $C sampled.core >st.txt &&
	expect_grep "counts (estimates: sampled one per 65,536 bytes)" st.txt &&
	expect_grep "allocated:  about" st.txt &&
	text_small=$(awk -v RS= "/  s_small  /" st.txt) &&
	echo "$text_small" | expect_grep "allocated [0-9,]* bytes in \([0-9,]*\) calls; freed [0-9,]* bytes in \1 frees"
'

test_case 'sampled text report: the sizes count estimated blocks, as the heading does' '
	heapprof-analyze $C sampled.core >sl.txt &&
	head=$(awk -v RS= "/  s_big  /" sl.txt | head -n 1) && echo "$head" &&
	blocks=$(echo "$head" | sed -n "s/.* in \([0-9,]*\) blocks .*/\1/p" | tr -d ,) &&
	echo "$head" | expect_grep "  sizes (about): 3,000 x$blocks\$"
'

# Time. Each nanosleep lasts at least its request, so the lower bounds are exact; the
# upper ones allow 50 ms of lateness per call (a loaded machine's wakeups): 4 calls each,
# t_slow after 200 ms: 800..1000 ms; t_fast after 50 ms: 200..400 ms.
test_case 'HEAPPROF_TIME=1: the time before each call lands on its stack' '
	HEAPPROF_TIME=1 run_preloaded $C time && take_core time.core &&
	heapprof-analyze -f collapsed --metric=alloc_time $C time.core >time.txt &&
	slow=$(bytes_for t_slow time.txt) && fast=$(bytes_for t_fast time.txt) &&
	echo "t_slow $slow ns, t_fast $fast ns" &&
	[ "$slow" -ge 800000000 ] && [ "$slow" -le 1000000000 ] &&
	[ "$fast" -ge 200000000 ] && [ "$fast" -le 400000000 ] &&
	heapprof-analyze --metric=alloc_time $C time.core | expect_grep "data: .*times"
'

test_case 'HEAPPROF_EVENTS=8: the last 8 calls in order, arguments and results' '
	HEAPPROF_EVENTS=8 run_preloaded $C events && take_core events.core &&
	heapprof-analyze --events $C events.core >ev.txt &&
	grep -v "^ready\$" prog.out | tail -n 8 >want.txt &&
	tid=$(awk "/^\[thread / { sub(/^\[thread /, \"\"); print \$1; exit }" ev.txt) &&
	grep "^\[thread $tid counts\] " ev.txt >main.txt &&
	sed "s/^\[thread [^]]*\] +[0-9]*\.[0-9]* s #[0-9]* //; s/ e_calls\$//" main.txt >got.txt &&
	expect_same want.txt got.txt &&
	awk "{ sub(/^.*#/, \"\"); print \$1 }" main.txt >seq &&
	awk "NR > 1 && \$1 != p + 1 { exit 1 } { p = \$1 }" seq &&
	[ "$(grep -c " e_calls\$" main.txt)" = 8 ] &&
	expect_grep "^# \[thread $tid counts\]: the last 8 of [0-9]* calls (ring of 8)" ev.txt &&
	heapprof-analyze --events --stacks $C events.core | expect_grep "^        0x[0-9a-f]*  e_calls  "
'

# evthread has ended (joined) when the core is taken: its name says so
test_case 'HEAPPROF_EVENTS: a free shows its own caller and stack; heapprof'"'"'s calls stay out' '
	HEAPPROF_EVENTS=16 run_preloaded $C events-thread && take_core evt.core &&
	tid=$(sed -n "s/^tid //p" prog.out) &&
	heapprof-analyze --events $C evt.core >ev.txt &&
	grep "^\[thread $tid evthread (ended)\] " ev.txt >t.txt &&
	expect_grep "^\[thread $tid evthread (ended)\] +[0-9.]* s #1 malloc(55) = 0x[0-9a-f]* et_alloc\$" t.txt &&
	expect_grep "^\[thread $tid evthread (ended)\] +[0-9.]* s #2 free(0x[0-9a-f]*) et_free\$" t.txt &&
	heapprof-analyze --events --stacks $C evt.core >evs.txt &&
	awk -v t="[thread $tid evthread (ended)]" "index(\$0, t) == 1 && / free\(/ { on = 1; next }
		/^\[/ { on = 0 } on" evs.txt >free_stack.txt &&
	expect_grep "^        0x[0-9a-f]*  et_free  " free_stack.txt &&
	expect_no_grep "et_alloc" free_stack.txt
'

test_case 'HEAPPROF_EVENTS: an overflowing reallocarray is recorded with SIZE_MAX, not wrapped' '
	grep -q "^\[thread $(sed -n "s/^tid //p" prog.out) evthread (ended)\] +[0-9.]* s #3 reallocarray(0x0, 18446744073709551615) = NULL\$" ev.txt
'

test_case '--events on a core without rings: one line and exit 2' '
	heapprof-analyze --events $C run.core 2>err; [ $? = 2 ] &&
	expect_grep "no event rings .*HEAPPROF_EVENTS" err
'

test_case '--events with a format that cannot list calls: refused, not text in its name' '
	for f in json html svg pprof collapsed; do
		heapprof-analyze --events -f $f $C events.core >out 2>err; rc=$?
		[ $rc = 64 ] && ! test -s out &&
		grep -qx "heapprof-analyze: --events lists the calls as text: -f text, or no -f, with it" err ||
		{ echo "-f $f: status $rc, $(wc -c <out) bytes out:"; head -c 300 out; cat err; exit 1; }
	done &&
	heapprof-analyze --events $C events.core >e.txt &&
	heapprof-analyze --events -f text $C events.core >t.txt && expect_same e.txt t.txt
'

# regions through heapprof.h's API (heapprof_api_v1); the known ones are listed in the
# order the program named them
test_case '--region=NAME keeps the blocks and counts of that region only' '
	run_preloaded $C regions && take_core regions.core &&
	heapprof-analyze -f collapsed --region=parse $C regions.core >parse.txt &&
	expect_bytes r_parse 555 parse.txt && [ "$(wc -l <parse.txt)" = 1 ] &&
	heapprof-analyze -f collapsed --region=eval --metric=alloc_objects $C regions.core >eval.txt &&
	expect_bytes r_eval 3 eval.txt && [ "$(wc -l <eval.txt)" = 1 ] &&
	heapprof-analyze --region=nope $C regions.core 2>err; [ $? = 2 ] &&
	[ "$(wc -l <err)" = 1 ] && expect_grep "known regions: parse, eval" err
'
