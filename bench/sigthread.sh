#!/bin/sh
# What heapprof's signal thread and its thread list cost (HEAPPROF_SIGNAL): start-up
# of a program that does nothing (/bin/true), its resident memory (/bin/sleep), the
# churn workload in one thread (glibc's malloc takes its locks once a process has a
# second thread), and the pause heapprof_snapshot() costs its caller per thread of
# the process, each without and with HEAPPROF_SIGNAL, in alternating rounds.
#   sh bench/sigthread.sh BUILD [ROUNDS]     (BUILD holds heapprof.so; ROUNDS 5)
# Prints a markdown table; the snapshots go to $TMPDIR (default /tmp).
set -u
B=$(cd "${1:?usage: sh bench/sigthread.sh BUILD [ROUNDS]}" && pwd) || exit 1
R=${2:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/hp-sigthread.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -g -pthread -o "$W/churn" "$top/bench/churn.c" || exit 1
${CC:-cc} -O2 -g -pthread -I"$top/include" -o "$W/manythreads" "$top/bench/manythreads.c" || exit 1
cd "$W" || exit 1

med() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%s (%s–%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
now() { date +%s%N; }

# start-up: 200 runs of /bin/true per round, ms per run
r=1
while [ $r -le "$R" ]; do
	for sig in off on; do
		if [ $sig = on ]; then s=USR2; else s=; fi
		t0=$(now)
		i=0
		while [ $i -lt 200 ]; do
			HEAPPROF_SIGNAL=$s LD_PRELOAD=$B/heapprof.so /bin/true
			i=$((i + 1))
		done
		echo "$(( ($(now) - t0) / 200000 ))" | awk '{ printf "%.3f\n", $1 / 1000 }' >>start.$sig
		# resident memory and threads of a sleeping program
		HEAPPROF_SIGNAL=$s LD_PRELOAD=$B/heapprof.so /bin/sleep 1 &
		p=$!
		sleep 0.5
		awk '/^VmRSS:/ { print $2 }' /proc/$p/status >>rss.$sig
		awk '/^Threads:/ { print $2 }' /proc/$p/status >threads.$sig
		wait $p
		# churn, one thread: ms
		t0=$(now)
		HEAPPROF_SIGNAL=$s LD_PRELOAD=$B/heapprof.so ./churn -n 2000000 -w 10000 2>/dev/null
		echo $(( ($(now) - t0) / 1000000 )) >>churn.$sig
	done
	r=$((r + 1))
done
for n in 1 100 1000; do
	HEAPPROF_OUTPUT="$W/m.%n.snap" LD_PRELOAD=$B/heapprof.so ./manythreads $n "$R" 2>/dev/null |
		sed -n 's/^pause //p' >pause.$n
	rm -f "$W"/m.*.snap
done

echo "| measure | without HEAPPROF_SIGNAL | with HEAPPROF_SIGNAL=USR2 |"
echo "|---|---|---|"
echo "| start-up of /bin/true, ms (median of $R rounds of 200) | $(med <start.off) | $(med <start.on) |"
echo "| threads of /bin/sleep | $(cat threads.off) | $(cat threads.on) |"
echo "| VmRSS of /bin/sleep, kB | $(med <rss.off) | $(med <rss.on) |"
echo "| churn -n 2000000 -w 10000, one thread, ms | $(med <churn.off) | $(med <churn.on) |"
echo
echo "| threads blocked in read() | pause of heapprof_snapshot(), ms (median of $R) |"
echo "|---|---|"
for n in 1 100 1000; do echo "| $n | $(med <pause.$n) |"; done
