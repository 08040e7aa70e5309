#!/bin/sh
# --age and --older-than on a real snapshot: blocks made, then 3 s of nothing, then the
# snapshot. Their age counts from when the snapshot was taken (its time note), so it is
# 3 s or more; a gcore of the same process, which holds no such time, counts from the
# newest block and says so.
. "$(dirname "$0")/lib.sh"

IDLE=3
export HEAPPROF_SIGNAL=USR2
run_preloaded $PROGS/sites small=3x1000 zeroed=4x333 && sleep $IDLE && kill -USR2 $PROG_PID &&
	wait_for test -f heapprof.$PROG_PID.1.snap && mv heapprof.$PROG_PID.1.snap idle.snap

test_case "a snapshot $IDLE s after the last allocation: every block at least $IDLE s old" '
	test -f idle.snap || { cat prog.err; false; } &&
	heapprof-analyze -f collapsed --older-than=${IDLE}s $PROGS/sites idle.snap >old.txt &&
	expect_bytes site_small 3000 old.txt && expect_bytes site_zeroed 1332 old.txt &&
	heapprof-analyze -f json --age $PROGS/sites idle.snap >age.json &&
	python3 - age.json $IDLE <<-"EOF"
	import json, sys
	a, idle = json.load(open(sys.argv[1]))["ages"], int(sys.argv[2])
	young = sum(b["bytes"] for b in a["buckets"] if b["age"] == "under 1 s")
	old = sum(b["bytes"] for b in a["buckets"] if b["age"] == "1-10 s")
	fails = []
	if a["now"] != "snapshot":
	    fails.append("ages.now: expected snapshot, got %s" % a["now"])
	if a["now_ms"] - a["newest_ms"] < idle * 1000:
	    fails.append("now_ms %d - newest_ms %d: expected %d ms or more" %
	                 (a["now_ms"], a["newest_ms"], idle * 1000))
	if young or old < 4332:
	    fails.append("under 1 s: %d bytes (expected 0), 1-10 s: %d (expected 4332 or more)" %
	                 (young, old))
	print("\n".join(fails) or "ok")
	sys.exit(1 if fails else 0)
	EOF
'

test_case 'the text says ages count from when the snapshot was taken' '
	heapprof-analyze --age $PROGS/sites idle.snap >age.txt &&
	expect_grep -x "  ages:       of the live blocks as found (not weighted), measured from when the snapshot was taken" age.txt
'

test_case '--lifetimes: the live blocks are as old as --age says' '
	heapprof-analyze -f json --lifetimes $PROGS/sites idle.snap >life.json &&
	python3 - life.json $IDLE <<-"EOF"
	import json, sys
	d, idle = json.load(open(sys.argv[1])), int(sys.argv[2])
	ages = [s["lifetime"]["age_min_ms"] for s in d["stacks"]
	        if s["path"] and s["path"][-1] in ("site_small", "site_zeroed")]
	ok = len(ages) == 2 and min(ages) >= idle * 1000
	print("ok" if ok else "ages of site_small and site_zeroed: %s, expected two of %d ms or more" %
	      (ages, idle * 1000))
	sys.exit(0 if ok else 1)
	EOF
'

if command -v gcore >/dev/null; then
	test_case 'a gcore of the same process: ages from the newest block, and it says so' '
		take_core idle.core &&
		heapprof-analyze -f json --age $PROGS/sites idle.core >core.json &&
		expect_eq "ages.now" "newest block" "$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"ages\"][\"now\"])" core.json)" &&
		expect_eq "ages.now_ms" "$(jnum newest_ms core.json)" "$(jnum now_ms core.json)" &&
		heapprof-analyze --age $PROGS/sites idle.core >core.txt &&
		expect_grep "measured from the newest one.s allocation (the dump says not when it was taken)$" core.txt
	'
else
	skip_case 'a gcore of the same process: ages from the newest block, and it says so' 'no gcore'
fi
