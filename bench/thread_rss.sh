#!/bin/sh
# Peak resident memory with and without heapprof.so where threads come and go: a C
# program running N short threads one after another (test/progs/thread_churn.c, each
# thread allocating and freeing at 21 stacks of its own), and python3 -m http.server
# (a thread per request) under 2,000 requests from a client that runs without it.
#   sh bench/thread_rss.sh BUILD [PYTHON]     (BUILD holds heapprof.so; PYTHON python3)
# Prints a markdown table of peak RSS (C: GNU time's %M; the server: its VmHWM once the
# requests are answered) and the ratio; files go to $TMPDIR (default /tmp).
set -u
B=$(cd "${1:?usage: sh bench/thread_rss.sh BUILD [PYTHON]}" && pwd) || exit 1
PY=${2:-python3}
top=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/hp-thread-rss.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -g -pthread -o "$W/thread_churn" "$top/test/progs/thread_churn.c" || exit 1
cd "$W" || exit 1

row() { awk -v w="$2" -v o="$3" -v n="$1" \
	'BEGIN { printf "| %s | %.1f | %.1f | %.2f |\n", n, w / 1024, o / 1024, o / w }'; }

echo "| workload | peak RSS without (MiB) | with heapprof.so (MiB) | ratio |"
echo "|---|---|---|---|"
for n in 1000 100000; do
	/usr/bin/time -f %M -o without.kib ./thread_churn $n 20 >/dev/null || exit 1
	LD_PRELOAD=$B/heapprof.so /usr/bin/time -f %M -o with.kib ./thread_churn $n 20 \
		>/dev/null || exit 1
	row "thread_churn $n 20 ($n threads)" "$(cat without.kib)" "$(cat with.kib)"
done

# The server's peak after 2,000 requests for its directory listing (a port of its own).
server_hwm()
{
	port=$(( 20000 + $$ % 20000 ))
	env "$@" "$PY" -m http.server $port --bind 127.0.0.1 --directory "$W" \
		>server.out 2>&1 &
	pid=$!
	"$PY" - $port <<'EOF' || { kill $pid; return 1; }
import sys, time, urllib.request
url = "http://127.0.0.1:%s/" % sys.argv[1]
for _ in range(100):
	try:
		urllib.request.urlopen(url).read()
		break
	except OSError:
		time.sleep(0.1)
for _ in range(2000):
	urllib.request.urlopen(url).read()
EOF
	awk '/^VmHWM:/ { print $2 }' /proc/$pid/status
	kill $pid
	wait $pid 2>/dev/null
	return 0
}
without=$(server_hwm HEAPPROF_NONE=) || exit 1
with=$(server_hwm LD_PRELOAD=$B/heapprof.so) || exit 1
row "$("$PY" -c 'import sys; print("python%d.%d.%d" % sys.version_info[:3])') -m http.server, 2,000 requests" \
	"$without" "$with"
