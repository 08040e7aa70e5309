#!/bin/sh
# Resident memory in --memory: heapprof's snapshots record what the kernel said was
# resident per mapping (/proc/PID/smaps, heapprof_format.h's resident note); other
# cores say it was not recorded, and why. progs/resident maps 8 MiB and touches 3 MiB
# of it between two snapshots: the resident figure of the memory the program mapped
# (the map table's) must rise by 3 MiB, to within 16 pages (what else the program's own
# pages may do meanwhile: its stack, stdio's buffer).
. "$(dirname "$0")/lib.sh"

# the resident bytes of the memory the program mapped, from the JSON report
mapped_resident()
{
	heapprof-analyze --memory -f json --top=0 $PROGS/resident "$1" |
		sed -n "s/.*\"resident\": {\"known\": true.*\"by_kind\": {[^}]*\"mapped\": \([0-9]*\),.*/\1/p"
}

test_case 'a snapshot records resident memory: touching 3 MiB adds 3 MiB' '
	LD_PRELOAD=$PRELOAD $PROGS/resident snap a.snap b.snap 2>snap.err &&
	a=$(mapped_resident a.snap) && b=$(mapped_resident b.snap) &&
	echo "resident memory the program mapped: $a before, $b after" &&
	page=$(getconf PAGESIZE) && d=$((b - a - 3145728)) &&
	[ ${d#-} -le $((16 * page)) ] &&
	heapprof-analyze --memory --top=0 $PROGS/resident b.snap >b.txt &&
	grep -q "^  resident:   [0-9,]* bytes, 0 swapped, in [0-9]* mappings (smaps when the snapshot was taken)$" b.txt
'

test_case 'the snapshot carries heapprof'"'"'s resident note (readelf reads it as a note)' '
	readelf -nW b.snap >notes.txt &&
	grep -q "HEAPPROF  *0x[0-9a-f]*	*Unknown note type: (0x48500001)" notes.txt
'

need_tool gcore
test_case 'a gcore core says residency was not recorded' '
	run_preloaded $PROGS/resident wait && take_core r.core &&
	heapprof-analyze --memory --top=0 $PROGS/resident r.core >r.txt &&
	grep -q "^  resident:   not recorded (gcore core)$" r.txt &&
	heapprof-analyze --memory -f json --top=0 $PROGS/resident r.core >r.json &&
	grep -q "\"resident\": {\"known\": false, \"reason\": \"gcore core\"}" r.json
'
