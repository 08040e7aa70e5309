#!/bin/sh
# How heapprof.so counts for the peak table and the timeline (preload/live.h), kept
# cheap: a thread's counts go to the process's sums when its live bytes move 64 KiB or
# a sample is due, sampled blocks through their estimates; and the NO_TIMELINE=1 build
# that bench/timeline_cost.sh measures against holds neither record.
. "$(dirname "$0")/lib.sh"
need_tool python3

MIB=1048576
STEP=$MIB

# json_check FILE 'python expression over j (the report), true when right'
json_check()
{
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
t = j.get("timeline", [])
live = [s["live_bytes"] for s in t]
calls = [s["alloc_calls"] for s in t]
ok = eval("(" + sys.argv[2] + ")")
if not ok:
	print("not so:", sys.argv[2], "\npeak:", j.get("peak"), "\ntimeline:", t)
sys.exit(0 if ok else 1)' "$@"
}

# Live bytes flat (a block freed for each one made, 1 ms apart): only the due time
# sends the counts to the sums, and every sample must see the calls made before it.
# Each sample is taken at an allocation, so the calls rise from one to the next; the
# last entry is the state at the snapshot, which may be the newest sample again (no
# call since, in the same ms), so it only must not fall.
test_case 'live bytes flat: each sample has the calls made before it' '
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=ring.snap LD_PRELOAD=$PRELOAD \
		$PROGS/peaks ring 400 2>ring.err && test -f ring.snap &&
	heapprof-analyze -f json $PROGS/peaks ring.snap >ring.json &&
	json_check ring.json "len(t) >= 20 and
		all(a < b for a, b in zip(calls[1:-1], calls[2:-1])) and
		calls[-2] <= calls[-1] and
		calls[-3] > 0.8 * calls[-1] * t[-3][\"time_s\"] / t[-1][\"time_s\"]"
'

# 1 MiB blocks are all sampled at a 64 KiB period (p = 1 - e^-16): the estimates are
# the sizes, to a rounding, through the sampled path of the same counts
test_case 'HEAPPROF_SAMPLE: the peak table and the timeline from the estimates' '
	HEAPPROF_SAMPLE=65536 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=s.snap LD_PRELOAD=$PRELOAD \
		$PROGS/peaks rise 2>s.err && test -f s.snap &&
	heapprof-analyze --peak -f collapsed $PROGS/peaks s.snap >peak.txt 2>/dev/null &&
	got=$(bytes_for rise peak.txt) && echo "rise at the peak: $got" &&
	[ $got -le $((80 * MIB + 80)) ] && [ $got -gt $((80 * MIB - STEP)) ] &&
	heapprof-analyze -f json $PROGS/peaks s.snap >s.json &&
	json_check s.json "80 * $MIB - $STEP < max(live) <= 81 * $MIB and
		abs(t[live.index(max(live))][\"alloc_calls\"] - 80) <= 1 and
		abs(t[-1][\"live_bytes\"] - 15 * $MIB) < $STEP"
'

test_case 'a NO_TIMELINE=1 build: neither record, the report the same' '
	make -s -C "$SRC_DIR" preload B="$SCRATCH/nt" NO_TIMELINE=1 >make.log 2>&1 &&
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=nt.snap LD_PRELOAD=$SCRATCH/nt/heapprof.so \
		$PROGS/peaks rise 2>nt.err && test -f nt.snap &&
	heapprof-analyze -f collapsed $PROGS/peaks nt.snap >now.txt &&
	expect_bytes hold_a $((10 * MIB)) now.txt && expect_bytes hold_b $((5 * MIB)) now.txt &&
	expect_bytes rise 0 now.txt &&
	{ heapprof-analyze --peak $PROGS/peaks nt.snap >out 2>err; [ $? -eq 2 ]; } &&
	grep -q "holds no peak table" err &&
	heapprof-analyze -f json $PROGS/peaks nt.snap >nt.json &&
	json_check nt.json "\"timeline\" not in j and \"peak\" not in j"
'
