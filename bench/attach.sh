#!/bin/sh
# heapprof attach on servers under load: a C server (bench/attach_server.c) and
# python3 -m http.server, each CYCLES times started without heapprof, loaded by 4
# clients that check every answer (bench/attach_load.py), attached, snapshotted
# (heapprof snapshot: gcore) and analyzed, then ended. Counts crashes (a server gone
# before its end), wrong answers, failed requests and snapshots in which heapprof is
# not seen at work (counting allocations since the attach, or all of them freed); gives the stop of the attached thread (heapprof-inject's
# figure) and the clients' worst latency among the requests that ended in the 0.5 s
# before the attach and in the 0.5 s from its start (before the snapshot, whose own
# stop, gcore's, is left out).
#   sh bench/attach.sh BUILD [CYCLES [TARGETS]]   (BUILD as make leaves it; CYCLES 100;
#                                                 TARGETS "c http", or one of them)
# Prints a markdown table; exits 1 if anything above went wrong.
set -u
B=$(cd "${1:?usage: sh bench/attach.sh BUILD [CYCLES [TARGETS]]}" && pwd) || exit 1
N=${2:-100}
top=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/hp-attach.XXXXXX") || exit 1
srv_pid= load_pid=
trap '[ -z "$srv_pid" ] || kill -9 $srv_pid 2>/dev/null; [ -z "$load_pid" ] || kill $load_pid 2>/dev/null; rm -rf "$W"' EXIT
export HEAPPROF_SO=$B/heapprof.so HEAPPROF_INJECT=$B/heapprof-inject HEAPPROF_ANALYZE=$B/heapprof-analyze
${CC:-cc} -O2 -g -pthread -o "$W/attach_server" "$top/bench/attach_server.c" || exit 1
mkdir "$W/www" && echo "heapprof attach bench" >"$W/www/index.html"
cd "$W" || exit 1

now_ms() { echo $(($(date +%s%N) / 1000000)); }
med() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%s (%s–%s)", v[int((NR + 1) / 2)], v[1], v[NR]; else printf "-" }'; }

# start_server c|http: the server, without heapprof; srv_pid, port
start_server()
{
	rm -f srv.out
	if [ "$1" = c ]; then
		./attach_server >srv.out 2>srv.err &
		srv_pid=$!
		i=0; until [ -s srv.out ] || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
		port=$(head -1 srv.out)
	else
		python3 -u -m http.server --bind 127.0.0.1 --directory www 0 >srv.out 2>srv.err &
		srv_pid=$!
		i=0; until grep -q port srv.out 2>/dev/null || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
		port=$(sed -n 's/.* port \([0-9]*\).*/\1/p' srv.out | head -1)
	fi
	[ -n "$port" ]
}

# load KIND: clients in the background until the file stop exists, their lines in load.txt
load()
{
	rm -f stop load.txt
	python3 "$top/bench/attach_load.py" "$1" "$port" stop 4 >load.txt &
	load_pid=$!
	i=0; until [ -s load.txt ] || [ $i -ge 200 ]; do sleep 0.05; i=$((i + 1)); done
}
unload() { touch stop; wait $load_pid; load_pid=; }

# worst FROM TO: the longest request in load.txt that ended in [FROM, TO) (ms)
worst()
{
	awk -v a="$1" -v b="$2" '$2 >= a && $2 < b && $2 - $1 > m { m = $2 - $1 }
		END { printf "%.1f\n", m }' load.txt
}

# cycle KIND: one start, attach, snapshot, end; appends to KIND.* files
cycle()
{
	start_server "$1" || { echo 1 >>"$1.crash"; return; }
	load "$1"
	sleep 0.5
	t0=$(now_ms)
	"$top/scripts/heapprof" attach "$srv_pid" >attach.out 2>attach.err || cat attach.err >&2
	sleep 0.5
	t1=$(now_ms)
	sed -n 's/.*stopped for \([0-9.]*\) ms.*/\1/p' attach.out >>"$1.stop"
	# gcore's core is refused when the process mapped more by the time gdb stopped it
	# than its maps allowed a moment before (heapprof(1)): under load, try again
	for try in 1 2 3; do
		rm -f cyc.snap
		"$top/scripts/heapprof" snapshot "$srv_pid" cyc.snap 2>snap.err && break
		grep -q 'cut short' snap.err && echo 1 >>"$1.retried" || { cat snap.err >&2; break; }
	done
	sleep 0.2
	unload
	# the allocations since the attach, counted whether they live or not; when the
	# python server has freed every one of them by the time of the snapshot, the
	# analyzer makes no report but says heapprof was there and all was freed
	calls=$("$B/heapprof-analyze" -f json "/proc/$srv_pid/exe" cyc.snap 2>an.err |
		sed -n 's/.*"alloc_calls": *\([0-9]*\).*/\1/p' | head -1)
	if [ "${calls:-0}" -gt 0 ]; then
		echo 1 >>"$1.tagged"
	elif grep -q 'heapprof.so was loaded .* but no block was live' an.err; then
		echo 1 >>"$1.tagged"
		echo 1 >>"$1.allfreed"
	fi
	if kill -0 "$srv_pid" 2>/dev/null; then kill -9 "$srv_pid"; else echo 1 >>"$1.crash"; fi
	wait "$srv_pid" 2>/dev/null
	srv_pid=
	worst $((t0 - 500)) "$t0" >>"$1.before"
	worst "$t0" "$t1" >>"$1.during"
	wc -l <load.txt >>"$1.requests"
	grep -c ' wrong$' load.txt >>"$1.wrong"
	grep -c ' error$' load.txt >>"$1.errors"
	rm -f cyc.snap cyc.snap.gz
}

sum() { awk '{ s += $1 } END { print s + 0 }' "$1" 2>/dev/null || echo 0; }
count() { [ -f "$1" ] && wc -l <"$1" || echo 0; }

echo "| target | cycles | crashes | wrong answers | failed requests | requests | snapshots showing heapprof at work | thread stopped, ms: median (min–max) | worst latency before attach, ms | worst latency from attach on, ms |"
echo "|---|---|---|---|---|---|---|---|---|---|"
bad=0
for kind in ${3:-c http}; do
	n=0
	while [ $n -lt "$N" ]; do cycle $kind; n=$((n + 1)); done
	crash=$(count $kind.crash) tagged=$(count $kind.tagged)
	wrong=$(sum $kind.wrong) errors=$(sum $kind.errors)
	[ "$crash" = 0 ] && [ "$wrong" = 0 ] && [ "$errors" = 0 ] && [ "$tagged" = "$N" ] || bad=1
	name="C server (bench/attach_server.c)"
	[ $kind = c ] || name="python3 -m http.server"
	echo "| $name | $N | $crash | $wrong | $errors | $(sum $kind.requests) | $tagged ($(count $kind.allfreed) with all freed; $(count $kind.retried) retried) | $(med <$kind.stop) | $(med <$kind.before) | $(med <$kind.during) |"
done
exit $bad
