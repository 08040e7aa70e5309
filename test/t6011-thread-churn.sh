#!/bin/sh
# Threads that come and go under heapprof.so: what they leave in the live counts (a
# thread's counts go to the process's sums when it ends, whether it returns, calls
# pthread_exit or is cancelled), so the peak table and the timeline stay right.
. "$(dirname "$0")/lib.sh"
need_tool python3

KIB64=65536
STEP=1048576	# HEAPPROF_PEAK_STEP's default

# json_check FILE 'python expression over j (the report), true when right'
json_check()
{
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
t = j.get("timeline", [])
live = [s["live_bytes"] for s in t]
ok = eval("(" + sys.argv[2] + ")")
if not ok:
	print("not so:", sys.argv[2], "\npeak:", j.get("peak"), "\ntimeline:", t[:3], "...", t[-3:])
sys.exit(0 if ok else 1)' "$@"
}

HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=handoff.snap LD_PRELOAD=$PRELOAD $PROGS/handoff 2000 \
	2>handoff.err || echo "# handoff failed: $(cat handoff.err)"

# 2,000 blocks of 20,000 bytes, each freed by a thread that ends: before the thread's
# counts went to the sums at its end, the sums climbed 20,000 bytes a thread (37 MiB),
# and the peak table was taken again and again at 20,288 bytes
test_case 'handed-off frees: the peak is the spike, exactly, and stays it' '
	heapprof-analyze --peak -f collapsed $PROGS/handoff handoff.snap >peak.txt 2>peak.err &&
	expect_bytes spike 10000000 peak.txt &&
	total=$(sed -n "s/^heapprof-analyze: peak: \([0-9]*\) bytes.*/\1/p" peak.err) &&
	echo "peak: $total bytes" && [ -n "$total" ] &&
	[ "$total" -ge 10000000 ] && [ "$total" -lt $((10000000 + STEP)) ]
'

# one thread is live at the snapshot: the last sample may miss its last 64 KiB, and
# the blocks made since (one of 20,000 bytes at most is live at any time)
test_case 'handed-off frees: the timeline ends where the heap is, its top the spike' '
	heapprof-analyze -f json $PROGS/handoff handoff.snap >handoff.json &&
	json_check handoff.json "len(t) >= 3 and
		abs(t[-2][\"live_bytes\"] - t[-1][\"live_bytes\"]) <= $KIB64 + 20000 and
		10000000 <= max(live) < 10000000 + $STEP and
		max(live[live.index(max(live)) + 1:]) <= 2 * $KIB64 + 20000 + t[-1][\"live_bytes\"]"
'

# 100,000 threads one after another, each allocating and freeing at 21 stacks of its
# own, freeing a block main made and leaving one main frees: what heapprof keeps of a
# thread (a record, a site per stack) goes back at its end and is taken over by the
# next, so its memory stops growing once the first threads have come and gone. Before,
# every thread kept a record and 22 sites (~3 KiB: 300 MiB for these). The program's
# own heap does not grow. HEAPPROF_REPLAY=0: the unwinder's log of walks, which each
# thread maps and touches, would make the run five times longer (t1001 checks that it
# goes with its thread).
N=100000
test_case "$N threads one after another: heapprof's memory stays within 2 MiB" '
	HEAPPROF_REPLAY=0 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=churn.snap LD_PRELOAD=$PRELOAD \
		$PROGS/thread_churn $N 20 1000 >churn.out 2>churn.err &&
	cat churn.out &&
	set -- $(sed -n "s/^VmRSS \([0-9]*\) KiB after 1000 threads, \([0-9]*\) KiB after $N$/\1 \2/p" churn.out) &&
	echo "grew $(($2 - $1)) KiB from 1000 to $N threads" && [ $(($2 - $1)) -le 2048 ]
'

# the counts of the threads that ended add up to the last call: 21 allocations each,
# all freed
test_case "$N threads: their counts add up exactly, and the timeline ends where the heap is" '
	heapprof-analyze -f collapsed --metric=alloc_objects $PROGS/thread_churn churn.snap >calls.txt &&
	calls=$(awk "/;work_sites/ { t += \$NF } END { print t }" calls.txt) &&
	echo "calls at the threads stacks: $calls" && [ "$calls" = $((N * 21)) ] &&
	heapprof-analyze -f collapsed $PROGS/thread_churn churn.snap >live.txt &&
	expect_bytes work_sites 0 live.txt &&
	heapprof-analyze -f json $PROGS/thread_churn churn.snap >churn.json &&
	json_check churn.json "abs(t[-2][\"live_bytes\"] - t[-1][\"live_bytes\"]) <= $KIB64 + 64"
'

# HEAPPROF_EVENTS: each thread's ring stays with its slot and is written anew by the
# thread that takes the slot over (before, every thread kept a ring of its own: 80 MiB
# for these, a page each). Two threads alive at once, so two slots and 4: the dump
# holds main's ring and those of the last 4 or 5 threads that ended (the slot the
# last end freed is not taken over yet), each with the 8 calls of its thread.
test_case 'HEAPPROF_EVENTS=64, 20000 threads: the rings go with the slots' '
	HEAPPROF_EVENTS=64 HEAPPROF_REPLAY=0 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=ev.snap \
		LD_PRELOAD=$PRELOAD $PROGS/thread_churn 20000 3 1000 >ev.out 2>ev.err &&
	cat ev.out &&
	set -- $(sed -n "s/^VmRSS \([0-9]*\) KiB after 1000 threads, \([0-9]*\) KiB after 20000$/\1 \2/p" ev.out) &&
	echo "grew $(($2 - $1)) KiB from 1000 to 20000 threads" && [ $(($2 - $1)) -le 2048 ] &&
	heapprof-analyze --events $PROGS/thread_churn ev.snap >ev.txt &&
	grep "^# \[thread" ev.txt >rings && sed "s/thread [0-9]*/thread N/" rings | sort | uniq -c &&
	[ $(grep -c "^# \[thread [0-9]* thread_churn\]: " rings) = 1 ] &&
	ended=$(grep -c "^# \[thread [0-9]* thread_churn (ended)\]: the last 8 of 8 calls " rings) &&
	[ $ended -ge 4 ] && [ $ended -le 5 ] && [ $(wc -l <rings) = $((ended + 1)) ]
'
