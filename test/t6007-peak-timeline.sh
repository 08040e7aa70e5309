#!/bin/sh
# The peak table and the timeline every dump carries (issue 21): real programs under
# heapprof.so, dumped by HEAPPROF_AT_EXIT, HEAPPROF_AT_CRASH or gcore, exact figures
# where the dump has them and the step's bound where the peak is taken.
. "$(dirname "$0")/lib.sh"
need_tool python3

MIB=1048576
STEP=$MIB	# HEAPPROF_PEAK_STEP's default: below 100 MiB, 1% is less
FULL=$(printf '\342\226\210')	# U+2588, a full block

# snap NAME ARGS...: peaks ARGS under heapprof.so, its at-exit snapshot in NAME.snap
snap()
{
	name=$1
	shift
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$name.snap LD_PRELOAD=$PRELOAD \
		$PROGS/peaks "$@" 2>$name.err && test -f $name.snap
}

# json_check FILE 'python expression over j (the report), true when right'
json_check()
{
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
t = j.get("timeline", [])
live = [s["live_bytes"] for s in t]
ok = eval("(" + sys.argv[2] + ")")
if not ok:
	print("not so:", sys.argv[2], "\npeak:", j.get("peak"), "\ntimeline:", t)
sys.exit(0 if ok else 1)' "$@"
}

# within_step FUNC N FILE: the stacks through FUNC hold N bytes, less than a step fewer
# at most (a peak table is taken within a step of the true peak)
within_step()
{
	got=$(bytes_for "$1" "$3")
	expect_num "$1 in $3" "$got" -le "$2" && expect_num "$1 in $3" "$got" -gt $(($2 - STEP))
}

snap rise rise || echo "# peaks rise failed: $(cat rise.err)"

# The dump's own totals now. Under SANITIZE heapprof.so is built with the sanitizers,
# whose runtime's blocks are live too: the figures below allow for them (OTHER, the
# bytes outside the program's own functions), and the plain build checks OTHER is 0.
heapprof-analyze -f json $PROGS/peaks rise.snap >rise.json 2>/dev/null
sums=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(s["live_bytes"], s["live_blocks"], s["alloc_calls"], s["alloc_bytes"])' rise.json 2>/dev/null)
set -- $sums
NOWB=${1:-0} NOWN=${2:-0} NOWC=${3:-0} NOWA=${4:-0}
OTHER=$((NOWB - 15 * MIB))
LABEL='80\.0'
[ -z "${SANITIZE:-}" ] || LABEL='80\.[0-9]'

test_case 'rise: --peak gives each function its bytes at the peak, within the step' '
	heapprof-analyze --peak -f collapsed $PROGS/peaks rise.snap >peak.txt 2>peak.err &&
	within_step rise $((80 * MIB)) peak.txt &&
	expect_bytes hold_a 0 peak.txt && expect_bytes hold_b 0 peak.txt &&
	expect_grep "^heapprof-analyze: peak: [0-9]* bytes in [0-9]* blocks at [0-9.]* s, step $STEP bytes (now: $NOWB bytes in $NOWN blocks)$" peak.err
'

test_case 'rise: the plain report gives now, exactly' '
	heapprof-analyze -f collapsed $PROGS/peaks rise.snap >now.txt &&
	expect_bytes hold_a $((10 * MIB)) now.txt && expect_bytes hold_b $((5 * MIB)) now.txt &&
	expect_bytes rise 0 now.txt &&
	{ [ -n "${SANITIZE:-}" ] ||
		expect_eq "live bytes, blocks, calls, bytes allocated" "15728640 15 95 99614720" "$NOWB $NOWN $NOWC $NOWA"; }
'

test_case 'rise: the JSON timeline peaks at the peak and ends now' '
	heapprof-analyze --peak -f json $PROGS/peaks rise.snap >peak.json &&
	json_check peak.json "max(live) >= j[\"peak\"][\"live_bytes\"] > 80 * $MIB - $STEP and
		max(live) <= 80 * $MIB + $OTHER and t[0] == dict(time_s=0, live_bytes=0, live_blocks=0,
		alloc_calls=0, alloc_bytes=0) and
		t[-1][\"live_bytes\"] == j[\"peak\"][\"now_bytes\"] >= 15 * $MIB and
		t[-1][\"live_blocks\"] == j[\"peak\"][\"now_blocks\"] and
		t[-1][\"alloc_calls\"] == j[\"summary\"][\"alloc_calls\"] and
		t[-1][\"alloc_bytes\"] == j[\"summary\"][\"alloc_bytes\"] and
		all(a[\"time_s\"] <= b[\"time_s\"] for a, b in zip(t, t[1:]))"
'

test_case 'rise: text --peak says the peak and now, --timeline charts it' '
	heapprof-analyze --peak --timeline $PROGS/peaks rise.snap >peak.txt &&
	expect_grep "^  peak:       [0-9]* bytes in [0-9]* blocks at [0-9.]* s, step $STEP bytes (now: $NOWB bytes in $NOWN blocks)$" peak.txt &&
	expect_grep "^timeline: [0-9]* samples over" peak.txt &&
	expect_grep "^ *$LABEL MiB |.*$FULL" peak.txt &&
	expect_grep " $NOWB *$NOWN *$NOWC *$NOWA  now$" peak.txt && expect_grep "  peak$" peak.txt
'

# A snapshot 2 s after the last allocation: the timeline ends at the snapshot's time
# (recorded by its writer), not at the newest block's or sample's (0.000 s here before).
# The bounds hold by construction: the program slept 2 s after its last block (so after
# its last sample, and its start), and all of it ran between the script's two readings
# of the clock (WALL ms); 1 ms for the JSON's rounding.
# late_check JSON WALL: the timeline and its "now" end at the snapshot, in those bounds
late_check()
{
	json_check "$1" "2.0 <= t[-1][\"time_s\"] <= ($2 + 1) / 1000 and
		t[-2][\"time_s\"] <= t[-1][\"time_s\"] - 1.999 and
		j.get(\"timeline_now\") == dict(time_s=t[-1][\"time_s\"], source=\"snapshot\") and
		t[-1][\"live_bytes\"] == j[\"summary\"][\"live_bytes\"]"
}

test_case 'at exit, 2 s after the last block: the timeline ends at the snapshot' '
	t0=$(date +%s%N) && PEAKS_END=sleep snap late rise && t1=$(date +%s%N) &&
	wall=$(((t1 - t0) / 1000000)) &&
	heapprof-analyze -f json $PROGS/peaks late.snap >late.json &&
	late_check late.json $wall &&
	now=$(python3 -c "import json, sys
print(\"%.3f\" % json.load(open(sys.argv[1]))[\"timeline\"][-1][\"time_s\"])" late.json) &&
	heapprof-analyze --timeline $PROGS/peaks late.snap >late.txt &&
	expect_grep "^timeline: [0-9]* samples over $now s; highest .*, now .*$" late.txt &&
	expect_grep "^ *0 s to $now s; ^ the highest sample, | the snapshot$" late.txt &&
	expect_grep "^ *$now  *[0-9]*  *[0-9]*  *[0-9]*  *[0-9]*  now$" late.txt &&
	heapprof-analyze --timeline=all $PROGS/peaks late.snap >all.txt &&
	expect_grep "^ *$now  *[0-9]*  *[0-9]*  *[0-9]*  *[0-9]*  now$" all.txt &&
	heapprof-analyze -f html -o late.html $PROGS/peaks late.snap &&
	python3 -c "import re, sys
p = open(sys.argv[1]).read()
t = re.search(r\"\\\"timeline\\\":\\{\\\"t\\\":\\[([^]]*)\\]\", p)
print(\"%.3f\" % float(t.group(1).split(\",\")[-1]) if t else \"none\",
	re.search(r\"\\\"peak\\\":[0-9]*,\\\"taken\\\":true\\}\", p) is not None)" late.html >got &&
	echo "$now True" >want && expect_same want got
'

test_case 'HEAPPROF_SIGNAL 2 s after the last block: the timeline ends at the snapshot' '
	t0=$(date +%s%N) &&
	HEAPPROF_SIGNAL=USR2 HEAPPROF_OUTPUT=sig.snap PEAKS_END=wait \
		run_preloaded $PROGS/peaks rise && sleep 2 &&
	kill -USR2 $PROG_PID && wait_for test -f sig.snap && t1=$(date +%s%N) &&
	kill -9 $PROG_PID && wait $PROG_PID 2>/dev/null; PROG_PID= &&
	heapprof-analyze -f json $PROGS/peaks sig.snap >sig.json &&
	late_check sig.json $(((t1 - t0) / 1000000))
'

# The time note forged to before the process start: not this process's, left out with a
# warning; now is then the newest time the records show, and the report says so.
test_case 'a snapshot time note before the process start is left out, with a warning' '
	python3 - late.snap bad-time.snap <<-EOF &&
	import struct, sys
	d = bytearray(open(sys.argv[1], "rb").read())
	head = struct.pack("<III", 9, 16, 0x48500003) + b"HEAPPROF\0\0\0\0"
	at = d.find(head)
	assert at > 0 and d.find(head, at + 1) < 0, "time notes at %d" % at
	struct.pack_into("<Q", d, at + len(head), 1)
	open(sys.argv[2], "wb").write(d)
	EOF
	heapprof-analyze -f json $PROGS/peaks bad-time.snap >bad-time.json 2>bad-time.err &&
	expect_grep "^heapprof-analyze: warning: snapshot time note left out: it says -[0-9.]* s, before the newest time its records show ([0-9.]* s)$" bad-time.err &&
	snap_s=$(python3 -c "import json, sys
print(json.load(open(sys.argv[1]))[\"timeline\"][-1][\"time_s\"])" late.json) &&
	json_check bad-time.json "t[-1][\"time_s\"] <= $snap_s - 1.999 and
		j[\"timeline_now\"] == dict(time_s=t[-1][\"time_s\"], source=\"newest record\")"
'

test_case '--peak-diff: what grew to the peak and went away since' '
	heapprof-analyze --peak-diff -f collapsed $PROGS/peaks rise.snap >diff.txt &&
	expect_bytes hold_a -$((10 * MIB)) diff.txt && expect_bytes hold_b -$((5 * MIB)) diff.txt &&
	within_step rise $((80 * MIB)) diff.txt &&
	# one dump against itself: its sides are the peak and now, not new and old
	heapprof-analyze --peak-diff $PROGS/peaks rise.snap >diff.text &&
	sed -n "1p; /^  peak: /p; /^  now: /p; /^  new: /p; /^  old: /p" diff.text |
		sed "s/: [0-9,]* bytes in [0-9,]* blocks/: N bytes in N blocks/" >got &&
	cat >want <<-EOF &&
	heapprof-analyze difference report (PEAK - NOW)
	  peak:       rise.snap: N bytes in N blocks
	  now:        rise.snap: N bytes in N blocks
	EOF
	expect_same want got
'

test_case 'a ring filled many times: from the start to the snapshot, the spike kept' '
	snap ring ring 1000 && HEAPPROF_TIMELINE=16 snap ring16 ring 1000 &&
	heapprof-analyze -f json $PROGS/peaks ring16.snap >ring.json &&
	heapprof-analyze -f collapsed $PROGS/peaks ring16.snap >ring.txt &&
	now=$(bytes_for churn ring.txt) &&
	json_check ring.json "len(t) <= 17 and t[0][\"time_s\"] == 0 and t[-1][\"time_s\"] >= 0.9 and
		t[-1][\"live_bytes\"] == j[\"summary\"][\"live_bytes\"] and len(t) >= 8 and
		(\"${SANITIZE:-}\" != \"\" or j[\"summary\"][\"live_bytes\"] == $now) and
		40 * $MIB - $STEP < max(live) <= 41 * $MIB + j[\"summary\"][\"live_bytes\"] - $now and
		0.2 < t[live.index(max(live))][\"time_s\"] < 0.7 and
		all(a[\"time_s\"] <= b[\"time_s\"] for a, b in zip(t, t[1:]))" &&
	heapprof-analyze -f json $PROGS/peaks ring.snap >big.json &&
	json_check big.json "len(t) > 17 and
		40 * $MIB - $STEP < max(live) <= 41 * $MIB + j[\"summary\"][\"live_bytes\"] - $now"
'

test_case '--timeline of a long timeline: a dozen rows, the peak and now; =all lists every one' '
	n=$(python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))[\"timeline\"]))" big.json) &&
	expect_num "samples in ring.snap" "$n" -gt 100 &&
	heapprof-analyze --timeline $PROGS/peaks ring.snap >tl.txt &&
	heapprof-analyze --timeline=all $PROGS/peaks ring.snap >tla.txt &&
	rows() { sed -n "/^    time_s /,/^\$/p" "$1" | sed "1d; /^\$/d" | wc -l; } &&
	expect_num "rows of --timeline" $(rows tl.txt) -le 13 &&
	expect_num "rows of --timeline" $(rows tl.txt) -ge 10 &&
	expect_grep "  peak$" tl.txt && expect_grep "  now$" tl.txt &&
	expect_grep "^$(rows tl.txt) of $n samples (--timeline=all lists every one):$" tl.txt &&
	expect_num "rows of --timeline=all" $(rows tla.txt) -eq $n &&
	expect_no_grep "samples (--timeline=all" tla.txt
'

test_case 'threads crossing the peak together: the peak table adds up' '
	snap threads threads &&
	heapprof-analyze --peak -f collapsed $PROGS/peaks threads.snap >peak.txt 2>peak.err &&
	expect_no_grep skipped peak.err &&
	total=$(sed -n "s/^heapprof-analyze: peak: \([0-9]*\) bytes.*/\1/p" peak.err) &&
	sum=$(awk "{ t += \$NF } END { print t }" peak.txt) &&
	expect_eq "the peak (peak.err) against the sum of its entries (peak.txt)" "$total" "$sum" &&
	within_step worker $((32 * MIB)) peak.txt &&
	heapprof-analyze -f collapsed $PROGS/peaks threads.snap >now.txt &&
	expect_bytes worker $((16 * MIB)) now.txt
'

# 100 blocks of 100,000 bytes: the last peak table is taken at 9,900,000 bytes, and
# the next would be at 10,948,576; the heap now holds more than the table. (Under
# SANITIZE the runtime's own blocks move the steps: the table is then only within a
# step below now.)
test_case 'a peak table below now: --peak gives now, and the step beside it' '
	snap climb climb &&
	heapprof-analyze --peak -f collapsed $PROGS/peaks climb.snap >peak.txt 2>peak.err &&
	expect_bytes climb 10000000 peak.txt &&
	heapprof-analyze -f json $PROGS/peaks climb.snap >now.json &&
	now=$(jnum live_bytes now.json) &&
	echo "expected: peak: $now bytes in [0-9]* blocks now, step $STEP bytes (the peak table: ...)" &&
	echo "got: $(cat peak.err)" &&
	grep -q "^heapprof-analyze: peak: $now bytes in [0-9]* blocks now, step $STEP bytes (the peak table: [0-9]* bytes at [0-9.]* s)$" peak.err &&
	heapprof-analyze --peak -f json $PROGS/peaks climb.snap >peak.json &&
	json_check peak.json "j[\"peak\"][\"live_bytes\"] == j[\"peak\"][\"now_bytes\"] == $now and
		j[\"peak\"][\"source\"] == \"now\" and j[\"peak\"][\"step\"] == $STEP and
		$now - $STEP < j[\"peak\"][\"table_bytes\"] < $now and
		(\"${SANITIZE:-}\" != \"\" or j[\"peak\"][\"table_bytes\"] == 9900000 == $now - 100000)"
'

test_case 'HEAPPROF_AT_CRASH snapshots carry both' '
	{ PEAKS_END=abort HEAPPROF_AT_CRASH=1 HEAPPROF_OUTPUT=crash.snap LD_PRELOAD=$PRELOAD \
		$PROGS/peaks rise 2>crash.err; true; } && test -f crash.snap &&
	heapprof-analyze --peak -f collapsed $PROGS/peaks crash.snap >peak.txt 2>/dev/null &&
	within_step rise $((80 * MIB)) peak.txt &&
	heapprof-analyze -f json $PROGS/peaks crash.snap >crash.json &&
	json_check crash.json "t[-1][\"live_bytes\"] == j[\"summary\"][\"live_bytes\"] and max(live) > 79 * $MIB"
'

if command -v gcore >/dev/null 2>&1; then
test_case 'gcore cores carry both' '
	PEAKS_END=wait run_preloaded $PROGS/peaks rise && take_core rise.core &&
	heapprof-analyze --peak -f collapsed $PROGS/peaks rise.core >peak.txt 2>/dev/null &&
	within_step rise $((80 * MIB)) peak.txt &&
	heapprof-analyze -f json $PROGS/peaks rise.core >core.json &&
	json_check core.json "t[-1][\"live_bytes\"] == j[\"summary\"][\"live_bytes\"] and max(live) > 79 * $MIB and
		j.get(\"timeline_now\") == dict(time_s=t[-1][\"time_s\"], source=\"newest record\")" &&
	heapprof-analyze --timeline $PROGS/peaks rise.core >core.txt &&
	expect_grep "^ *0 s to [0-9.]* s; ^ the highest sample, | now, the newest time the dump shows (no snapshot time in it)$" core.txt
'
else
	skip_case 'gcore cores carry both' 'gcore is not installed'
fi

test_case 'switched off: no peak table, no timeline, and each says so' '
	HEAPPROF_PEAK_STEP=0 HEAPPROF_TIMELINE=0 snap off rise &&
	heapprof-analyze -f collapsed $PROGS/peaks off.snap >now.txt &&
	expect_bytes hold_a $((10 * MIB)) now.txt &&
	{ heapprof-analyze --peak $PROGS/peaks off.snap >out 2>err; expect_eq "--peak status" 2 $?; } &&
	expect_grep "holds no peak table" err &&
	heapprof-analyze --timeline $PROGS/peaks off.snap >out 2>err &&
	expect_grep "holds no timeline" err && expect_grep "^timeline: none" out &&
	heapprof-analyze -f json $PROGS/peaks off.snap >off.json &&
	json_check off.json "\"timeline\" not in j and \"peak\" not in j"
'

# The newest peak table, damaged: the one before it is read, with a warning. The
# timeline's first sample (always there, at time 0) is moved after the second, so its
# times go back: it is left out with a warning. (The damage was once to the second
# sample's time; when the whole run fits in one 4 ms sampling interval, the timeline
# holds only sample 0 and the peak, and a later second sample is no damage at all.)
test_case 'a damaged peak table or timeline is skipped with a note' '
	python3 - rise.snap bad.snap <<-EOF &&
	import struct, sys
	d = bytearray(open(sys.argv[1], "rb").read())
	def recs(magic):
	    at, out = 0, []
	    while True:
	        at = d.find(struct.pack("<Q", magic), at)
	        if at < 0:
	            return out
	        if at % 8 == 0:
	            out.append(at)
	        at += 8
	peaks = recs(0xA3E15045414B5632)
	newest = max(peaks, key=lambda a: struct.unpack_from("<Q", d, a + 24)[0])
	b = struct.unpack_from("<q", d, newest + 128 + 8)[0]
	struct.pack_into("<q", d, newest + 128 + 8, b + 4096)
	tl = recs(0xA3E1544C494E5632)
	held = struct.unpack_from("<Q", d, tl[0] + 24)[0]
	second = struct.unpack_from("<Q", d, tl[0] + 64 + 40)[0]
	assert len(tl) == 1 and held >= 2, "timelines at %s, %d samples" % (tl, held)
	struct.pack_into("<Q", d, tl[0] + 64, second + 1)
	open(sys.argv[2], "wb").write(d)
	EOF
	heapprof-analyze --peak -f json $PROGS/peaks bad.snap >bad.json 2>bad.err &&
	expect_grep "peak table at 0x[0-9a-f]* skipped: cut off, or its entries do not add up" bad.err &&
	expect_grep "timeline at 0x[0-9a-f]* skipped: its sample times go back" bad.err &&
	json_check bad.json "\"timeline\" not in j and 78 * $MIB < j[\"peak\"][\"live_bytes\"] < 80 * $MIB"
'

# the newest peak table forged: its largest entry claims 9.2e18 blocks, and its total
# says so too. No stack's sites allocated that many: the entry is left out, the rest
# is the table's, and the note says so (the peak is then now, which holds more).
test_case 'a peak table entry claiming more than its stack ever allocated is left out' '
	python3 -c "import struct
d = bytearray(open(\"rise.snap\", \"rb\").read())
at, peaks = 0, []
while True:
	at = d.find(struct.pack(\"<Q\", 0xA3E15045414B5632), at)
	if at < 0:
		break
	if at % 8 == 0:
		peaks.append(at)
	at += 8
p = max(peaks, key=lambda a: struct.unpack_from(\"<Q\", d, a + 24)[0])
nbytes, nblocks, used = struct.unpack_from(\"<qqQ\", d, p + 40)
e = [struct.unpack_from(\"<Qqq\", d, p + 128 + 24 * i) for i in range(used)]
big = max(range(used), key=lambda i: e[i][1])
forged = 2**63 - 8
struct.pack_into(\"<q\", d, p + 128 + 24 * big + 16, forged)
struct.pack_into(\"<q\", d, p + 48, nblocks - e[big][2] + forged)
open(\"forged.snap\", \"wb\").write(d)
print(nbytes - e[big][1], nblocks - e[big][2])" >want &&
	heapprof-analyze --peak -f json $PROGS/peaks forged.snap >forged.json 2>forged.err &&
	grep -q "^heapprof-analyze: warning: peak table at 0x[0-9a-f]*: 1 of its entries left out: each claims more bytes or blocks than its stack.s sites in the dump ever allocated$" forged.err &&
	python3 -c "import json, sys
p = json.load(open(\"forged.json\"))[\"peak\"]
assert p[\"live_bytes\"] == max(p[\"table_bytes\"], p[\"now_bytes\"]), p
print(p[\"table_bytes\"], p[\"table_blocks\"])" >got &&
	expect_same want got
'
