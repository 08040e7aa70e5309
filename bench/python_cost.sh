#!/bin/sh
# What heapprof.so costs a Python program run as everyone runs it, with the default
# allocator (pymalloc): CPU time and peak RSS against the same interpreter without
# heapprof, on bench/dict_strings.py, test/helpers/python_real.py (json into a dict
# index, sqlite, regexes) and `python3 -m http.server` under a client's requests. Beside them,
# HEAPPROF_SAMPLE=524288, native stacks alone (HEAPPROF_PYTHON=0) and the old way
# (PYTHONMALLOC=malloc under heapprof.so).
#   sh bench/python_cost.sh BUILD [PYTHON...]     (default /usr/bin/python3)
# PY_COST_REQUESTS (2000): the client's requests, one connection each (a directory
# listing and a 64 KiB file in turn); PY_COST_DOCS (30000): python_real.py's documents;
# PY_COST_STRINGS (400000): dict_strings.py's; PY_COST_ONLY="real http": those
# workloads alone. One run of each: ratios of that run, with the commands that made
# them. Nothing here runs in `make check`.
set -u

B=${1:?usage: sh bench/python_cost.sh BUILD [PYTHON...]}
shift
B=$(cd "$B" && pwd) || exit 1
HP=$B/heapprof.so
[ -f "$HP" ] || { echo "python_cost: no $HP (make first)" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- /usr/bin/python3
REQ=${PY_COST_REQUESTS:-2000}
DOCS=${PY_COST_DOCS:-30000}
STRINGS=${PY_COST_STRINGS:-400000}
W=$(mktemp -d "${TMPDIR:-/tmp}/python_cost.XXXXXX")
trap 'rm -rf "$W"' EXIT
export PYTHONHASHSEED=0 LC_ALL=C
unset PYTHONMALLOC

# env of a configuration
conf_env()
{
	case $1 in
	base) echo "" ;;
	heapprof) echo "LD_PRELOAD=$HP" ;;
	sampled) echo "LD_PRELOAD=$HP HEAPPROF_SAMPLE=524288" ;;
	native) echo "LD_PRELOAD=$HP HEAPPROF_PYTHON=0" ;;
	malloc) echo "LD_PRELOAD=$HP PYTHONMALLOC=malloc" ;;
	esac
}

# measure PY WORKLOAD CONF: "cpu_s peak_rss_kb wall_s" of one run, its command in $W/cmd
measure()
{
	py=$1 wl=$2 e=$(conf_env "$3")
	case $wl in
	dict_strings) set -- "$py" "$top/bench/dict_strings.py" "$STRINGS" ;;
	real) set -- "$py" "$top/test/helpers/python_real.py" "$DOCS" ;;
	http) http_run "$py" "$e"; return ;;
	esac
	echo "env $e $*" >"$W/cmd"
	env $e /usr/bin/time -f '%U %S %M %e' -o "$W/t" "$@" >/dev/null 2>"$W/err" ||
		{ echo "python_cost: $wl failed: $(tail -1 "$W/err")" >&2; echo "0 0 0"; return; }
	awk '{ printf "%.2f %d %.2f\n", $1 + $2, $3, $4 }' "$W/t"
}

# The server under time(1), the client's requests, then SIGTERM: time(1) reports the
# server's CPU and peak RSS.
http_run()
{
	py=$1 e=$2 port=$((20000 + $$ % 20000))
	mkdir -p "$W/www" && head -c 65536 /dev/urandom >"$W/www/file.bin" &&
		for i in $(seq 1 50); do echo "page $i" >"$W/www/p$i.html"; done
	echo "env $e /usr/bin/time $py -m http.server $port --bind 127.0.0.1 (in a directory of 51 files); $REQ requests" >"$W/cmd"
	(cd "$W/www" && exec env $e /usr/bin/time -f '%U %S %M %e' -o "$W/t" \
		"$py" -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>"$W/err") &
	pid=$!
	"$py" - "$port" "$REQ" <<'EOF' || echo "python_cost: the client failed" >&2
import sys, time, urllib.request
port, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(300):
    try:
        urllib.request.urlopen('http://127.0.0.1:%d/' % port).read()
        break
    except OSError:
        time.sleep(0.1)
for i in range(n):
    path = '/' if i % 2 else '/file.bin'
    urllib.request.urlopen('http://127.0.0.1:%d%s' % (port, path)).read()
EOF
	# the subshell became time(1): the server is its child (a background job ignores
	# SIGINT, so the server would too); time(1) says it was killed, then its figures
	kill -TERM $(pgrep -P $pid) 2>/dev/null
	wait $pid
	tail -n 1 "$W/t" | awk '{ printf "%.2f %d %.2f\n", $1 + $2, $3, $4 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (a > 0 ? b / a : 0) }'; }

for py in "$@"; do
	v=$("$py" -c 'import sys; print(sys.version.split()[0])') || continue
	echo "python $v ($py), heapprof $(git -C "$top" describe --always --dirty 2>/dev/null)"
	printf '  %-13s %-9s %8s %8s %10s %8s %8s\n' workload config cpu_s wall_s peak_rss cpu rss
	for wl in ${PY_COST_ONLY:-dict_strings real http}; do
		for c in base heapprof sampled native malloc; do
			set -- $(measure "$py" $wl $c)
			[ $c = base ] && bc=$1 br=$2
			printf '  %-13s %-9s %8s %8s %7d KB %8s %8s\n' $wl $c "$1" "$3" "$2" \
				"$(ratio "$bc" "$1")" "$(ratio "$br" "$2")"
			echo "    $(cat "$W/cmd")" >>"$W/commands"
		done
	done
done
echo "commands:"
cat "$W/commands"
