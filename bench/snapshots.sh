#!/bin/sh
# Snapshots against gcore on one process holding ~1 GiB in ~730k blocks (gibheap):
# the pause heapprof_snapshot() costs the caller, the time to write and the size of a
# compact and a full snapshot, and gcore of the same process, in alternating rounds.
#   sh bench/snapshots.sh BUILD [ROUNDS]     (BUILD holds heapprof.so; ROUNDS 5)
# Prints a markdown table. Needs gcore; the files go to $TMPDIR (default /tmp).
set -u
B=$(cd "${1:?usage: sh bench/snapshots.sh BUILD [ROUNDS]}" && pwd) || exit 1
R=${2:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/hp-snapbench.XXXXXX") || exit 1
trap 'kill $pid 2>/dev/null; rm -rf "$W"' EXIT
command -v gcore >/dev/null || { echo "skipped: no gcore"; exit 0; }
${CC:-cc} -O2 -g -I"$top/include" -o "$W/gibheap" "$top/bench/gibheap.c" -lm || exit 1

ms() { echo $((($2 - $1) / 1000000)); }
med() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%s (%s–%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

# the size of each snapshot written so far, then it goes (1 GiB each)
keep_size()
{
	for f in "$W"/$kind.*.snap; do
		[ -f "$f" ] || continue
		stat -c %s "$f" >"$kind.size"
		du -k "$f" | cut -f1 >"$kind.du"
		rm -f "$f"
	done
}

cd "$W" || exit 1
for kind in compact full; do
	HEAPPROF_SNAPSHOT=$kind HEAPPROF_SIGNAL=USR2 HEAPPROF_OUTPUT="$W/$kind.%n.snap" \
		LD_PRELOAD=$B/heapprof.so ./gibheap -s "$R" -h >"$kind.out" 2>"$kind.err" &
	pid=$!
	i=0
	# -s: each call timed in the program, 3 s apart; each snapshot removed once written
	while ! grep -q ready "$kind.out" 2>/dev/null; do
		sleep 0.2
		i=$((i + 1))
		[ $i -lt 1500 ] || { echo "gibheap never got ready"; exit 1; }
		keep_size
	done
	sleep 6
	keep_size
	if [ $kind = compact ]; then
		r=1
		while [ $r -le "$R" ]; do
			sync
			t0=$(date +%s%N)
			gcore -o "$W/g" $pid >/dev/null 2>&1
			t1=$(date +%s%N)
			ms "$t0" "$t1" >>gcore.ms
			stat -c %s "$W/g.$pid" >gcore.size
			rm -f "$W/g.$pid"
			r=$((r + 1))
		done
	fi
	kill $pid
	wait $pid 2>/dev/null
	sed -n 's/^snapshot call.*paused \([0-9.]*\) ms/\1/p' "$kind.out" >"$kind.pause"
	sed -n 's/^fork.*paused \([0-9.]*\) ms/\1/p' "$kind.out" >>fork.pause
	sed -n 's/.* in \([0-9]*\) ms$/\1/p; s/.* in \([0-9]*\) us$/0/p; s/.* in \([0-9]*\) s$/\1000/p' "$kind.err" >"$kind.ms"
done
echo "| $(sed -n 1p compact.out) | median (min–max) of $R |"
echo "|---|---|"
echo "| compact snapshot: the caller's pause (heapprof_snapshot() returns) | $(med <compact.pause) ms |"
echo "| compact snapshot: asked to written and renamed (the child) | $(med <compact.ms) ms |"
echo "| compact snapshot: size (disk blocks) | $(cat compact.size) bytes ($(($(cat compact.du) / 1024)) MiB on disk) |"
echo "| full snapshot: the caller's pause | $(med <full.pause) ms |"
echo "| full snapshot: asked to written | $(med <full.ms) ms |"
echo "| full snapshot: size (disk blocks) | $(cat full.size) bytes ($(($(cat full.du) / 1024)) MiB on disk) |"
echo "| a plain fork() of the same process: the parent's pause | $(med <fork.pause) ms |"
echo "| gcore of the same process (it is stopped throughout) | $(med <gcore.ms) ms |"
echo "| gcore's core size | $(cat gcore.size) bytes |"
