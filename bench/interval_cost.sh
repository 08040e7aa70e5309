#!/bin/sh
# What continuous snapshots cost on real programs: the always-on mode,
# HEAPPROF_SAMPLE=524288 with HEAPPROF_INTERVAL (and HEAPPROF_KEEP=3), against the same
# program without heapprof and with sampling alone, in alternating rounds:
#   http    python3 -m http.server (PY, /usr/bin/python3; PYTHONMALLOC=malloc, as heapprof run sets it) answering
#           HTTP_REQS requests (6,000) from a client paced at 100 a second, ~60 s; interval 10s
#   sqlite  sqlite3 :memory: building, indexing, grouping, updating 1.5 million rows; 2s
#   git     git log -p -C -C --stat of this repository; 1s
# CPU is user + sys of the program and of everything it leaves behind: the snapshot
# writers are orphans, counted by running the program under bench/subreap.c (a child
# subreaper); peak RSS is the program's own (ru_maxrss). Then the time of heapprof-analyze
# -f pprof on one of the http server's snapshots, --symbols=full against none.
#   sh bench/interval_cost.sh BUILD [ROUNDS]     (BUILD holds heapprof.so and
#   heapprof-analyze; ROUNDS 3; ONLY="http sqlite git" picks workloads)
# Prints markdown tables; files go to $TMPDIR (default /tmp).
set -u
B=$(cd "${1:?usage: sh bench/interval_cost.sh BUILD [ROUNDS]}" && pwd) || exit 1
ROUNDS=${2:-3}
ONLY=${ONLY:-http sqlite git}
HTTP_REQS=${HTTP_REQS:-6000}
PY=${PY:-/usr/bin/python3}
top=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/hp-interval.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
cc -O2 -o "$W/subreap" "$top/bench/subreap.c" || exit 1
export LC_ALL=C PYTHONMALLOC=malloc
say() { printf 'interval_cost: %s\n' "$*" >&2; }

cat >"$W/work.sql" <<'EOF'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500000)
INSERT INTO t SELECT i, hex(randomblob(16)), abs(random() % 100000) FROM n;
CREATE INDEX tb ON t(b);
CREATE INDEX tc ON t(c);
SELECT a % 1000 AS k, count(*), sum(c), group_concat(substr(b, 1, 2)) FROM t GROUP BY k;
SELECT b, c FROM t ORDER BY b DESC LIMIT 100000;
UPDATE t SET b = b || 'x' WHERE a % 3 = 0;
DELETE FROM t WHERE a % 5 = 0;
SELECT count(*) FROM t;
EOF
mkdir "$W/site" && for i in $(seq 1 50); do echo "file $i" >"$W/site/f$i.txt"; done

# hp_env NAME INTERVAL: the variables of the heapprof runs
hp_env() { echo "LD_PRELOAD=$B/heapprof.so HEAPPROF_SAMPLE=524288 HEAPPROF_INTERVAL=$2" \
	"HEAPPROF_KEEP=3 HEAPPROF_OUTPUT=$W/snaps/$1.%p.%n.snap"; }

# measure OUT ENV... -- CMD...: one run under subreap; OUT gets
# "program_cpu total_cpu maxrss_kb wall_s"
measure()
{
	out=$1
	shift
	envs=
	while [ "$1" != -- ]; do envs="$envs $1"; shift; done
	shift
	t0=$(date +%s%N)
	# (subreap itself runs without heapprof: only the program gets the variables)
	"$W/subreap" env $envs "$@" >/dev/null 2>"$out.err" </dev/null
	t1=$(date +%s%N)
	sed -n "s/^subreap: program_cpu=\([0-9.]*\) total_cpu=\([0-9.]*\) program_maxrss_kb=\([0-9]*\)$/\1 \2 \3/p" \
		"$out.err" | awk -v w=$(((t1 - t0) / 1000000)) '{ print $0, w / 1000 }' >"$out"
	[ -s "$out" ] || { say "$out: $(tail -n 2 "$out.err")"; return 1; }
}

# the server, under subreap, answering the paced client; OUT as measure's
measure_http()
{
	out=$1
	shift
	# (a leading 1: date's nanoseconds may start with 0, which sh reads as octal)
	port=$((20000 + ($$ + 1$(date +%N) / 1000) % 20000))
	t0=$(date +%s%N)
	"$W/subreap" env "$@" "$PY" -m http.server $port --bind 127.0.0.1 --directory "$W/site" \
		>/dev/null 2>"$out.err" </dev/null &
	sub=$!
	python3 - $port "$HTTP_REQS" <<'EOF' || { kill $sub; return 1; }
import sys, time, urllib.request
url = "http://127.0.0.1:%s/" % sys.argv[1]
for _ in range(600):	# up to 30 s: a loaded machine starts python slowly
	try:
		urllib.request.urlopen(url).read()
		break
	except OSError:
		time.sleep(0.05)
n = int(sys.argv[2])
t0 = time.monotonic()
for i in range(n):
	urllib.request.urlopen(url).read()
	left = t0 + (i + 1) / 100.0 - time.monotonic()
	if left > 0:
		time.sleep(left)
EOF
	# (SIGTERM: a job of a script ignores SIGINT)
	kill $(pgrep -P $sub) 2>/dev/null
	wait $sub
	t1=$(date +%s%N)
	sed -n "s/^subreap: program_cpu=\([0-9.]*\) total_cpu=\([0-9.]*\) program_maxrss_kb=\([0-9]*\)$/\1 \2 \3/p" \
		"$out.err" | awk -v w=$(((t1 - t0) / 1000000)) '{ print $0, w / 1000 }' >"$out"
	[ -s "$out" ] || { say "$out: $(tail -n 2 "$out.err")"; return 1; }
}

run_workload() # NAME INTERVAL
{
	case $1 in
	http) case $3 in
		base) measure_http "$4" HEAPPROF_NONE= ;;
		sampled) measure_http "$4" LD_PRELOAD=$B/heapprof.so HEAPPROF_SAMPLE=524288 ;;
		*) measure_http "$4" $(hp_env http "$2") ;;
		esac ;;
	sqlite) set -- "$@" sqlite3 :memory: -init "$W/work.sql" ".quit" ;;
	git) set -- "$@" git -C "$top" log -p -C -C --stat ;;
	esac
	case $1 in
	http) ;;
	*)
		name=$1 iv=$2 mode=$3 out=$4
		shift 4
		if [ "$mode" = base ]; then
			measure "$out" HEAPPROF_NONE= -- "$@"
		elif [ "$mode" = sampled ]; then
			measure "$out" LD_PRELOAD=$B/heapprof.so HEAPPROF_SAMPLE=524288 -- "$@"
		else
			measure "$out" $(hp_env "$name" "$iv") -- "$@"
		fi ;;
	esac
}

mkdir "$W/snaps" "$W/runs"
for r in $(seq 1 "$ROUNDS"); do
	for w in $ONLY; do
		case $w in http) iv=10s ;; sqlite) iv=${SQLITE_IV:-2s} ;; git) iv=1s ;; *) continue ;; esac
		say "round $r: $w"
		run_workload $w $iv base "$W/runs/$w.base.$r" &&
			run_workload $w $iv sampled "$W/runs/$w.sampled.$r" &&
			run_workload $w $iv hp "$W/runs/$w.hp.$r"
	done
done

echo "| workload | interval | snapshots | CPU without (s) | with, program + writers (s) | CPU ratio | sampled alone | writers' share | peak RSS without (MiB) | with (MiB) | RSS ratio | sampled alone |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for w in $ONLY; do
	case $w in http) iv=10s ;; sqlite) iv=${SQLITE_IV:-2s} ;; git) iv=1s ;; *) continue ;; esac
	snaps=$(ls "$W/snaps" | sed -n "s/^$w\.[0-9]*\.\([0-9]*\)\.snap$/\1/p" | sort -n | tail -n 1)
	for r in $(seq 1 "$ROUNDS"); do
		[ -s "$W/runs/$w.base.$r" ] && [ -s "$W/runs/$w.hp.$r" ] &&
			[ -s "$W/runs/$w.sampled.$r" ] || continue
		paste -d' ' "$W/runs/$w.base.$r" "$W/runs/$w.hp.$r" "$W/runs/$w.sampled.$r"
	done | awk -v w=$w -v iv=$iv -v n="${snaps:-0}" '
		{ bc[NR] = $1; ht[NR] = $6; br[NR] = $3; hr[NR] = $7
		  cr[NR] = $6 / $1; rr[NR] = $7 / $3; ws[NR] = ($6 - $5) / $6
		  sc[NR] = $10 / $1; sr[NR] = $11 / $3 }
		function med(a, k,   i, j, t, b) { for (i = 1; i <= k; i++) b[i] = a[i]
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
			return k % 2 ? b[(k + 1) / 2] : (b[k / 2] + b[k / 2 + 1]) / 2 }
		function lo(a, k,   i, m) { m = a[1]; for (i = 2; i <= k; i++) if (a[i] < m) m = a[i]; return m }
		function hi(a, k,   i, m) { m = a[1]; for (i = 2; i <= k; i++) if (a[i] > m) m = a[i]; return m }
		END { if (!NR) { print "| " w " | " iv " | failed | | | | | | | | | |"; exit }
			printf "| %s | %s | %d (last run) | %.2f | %.2f | %.3f (%.3f-%.3f) | %.3f | %.1f%% | %.1f | %.1f | %.3f (%.3f-%.3f) | %.3f |\n",
				w, iv, n, med(bc, NR), med(ht, NR), med(cr, NR), lo(cr, NR), hi(cr, NR),
				med(sc, NR), 100 * med(ws, NR), med(br, NR) / 1024, med(hr, NR) / 1024,
				med(rr, NR), lo(rr, NR), hi(rr, NR), med(sr, NR) }'
done

# --symbols=none against full, on the newest http server snapshot (python3 and its
# libraries: a good deal of debug info to read when it is installed)
snap=$(ls -t "$W"/snaps/http.*.snap 2>/dev/null | head -n 1)
if [ -n "$snap" ]; then
	echo
	echo "| heapprof-analyze -f pprof, $(du -m "$snap" | cut -f1) MB snapshot of python3 -m http.server | wall (s), median of 5 | user + sys (s) |"
	echo "|---|---|---|"
	for mode in full none; do
		for i in 1 2 3 4 5; do
			/usr/bin/time -f '%e %U %S' -o "$W/t.$mode.$i" "$B/heapprof-analyze" -q -f pprof \
				--symbols=$mode -o "$W/p.$mode.pb.gz" "$(readlink -f "$PY")" "$snap" ||
				say "analyzer failed ($mode)"
		done
		cat "$W"/t.$mode.* | awk -v m=$mode '{ w[NR] = $1; c[NR] = $2 + $3 }
			END { for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
				if (w[j] < w[i]) { t = w[i]; w[i] = w[j]; w[j] = t }
				if (c[j] < c[i]) { t = c[i]; c[i] = c[j]; c[j] = t } }
			printf "| --symbols=%s | %.2f | %.2f |\n", m, w[3], c[3] }'
	done
fi
