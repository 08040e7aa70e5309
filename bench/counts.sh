#!/bin/sh
# Allocation counts per call site, three ways, on one workload: heapprof counting every
# call, heapprof sampling bytes (HEAPPROF_SAMPLE), and malloc_profile's randomized skip
# count (one stack per about S malloc calls, S its skip_number). Prints a markdown table: CPU time against the
# uninstrumented run of the same round, the malloc calls each estimates in all, and the
# error of its estimate for each call site against heapprof's exact count. (heaptrack's
# total, on a shorter churn it survives, is in docs/PERFORMANCE.md.)
#   sh bench/counts.sh BUILD [ROUNDS]      (BUILD holds heapprof.so, heapprof-analyze)
# malloc_profile (github.com/schneiml/malloc_profile, not packaged in Debian) is built
# from MALLOC_PROFILE_SRC (a checkout) or cloned; without either its rows are skipped.
# Its options are constants in its source: this script builds copies with
# record_time = false (count calls) and skip_number 32768 (its own) and 1024.
set -u

B=$(cd "${1:?usage: sh bench/counts.sh BUILD [ROUNDS]}" && pwd) || exit 1
ROUNDS=${2:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
W=$B/bench-counts
HP=$B/heapprof.so
AN=$B/heapprof-analyze
say() { printf 'counts: %s\n' "$*" >&2; }

rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$W" || exit 1

# The churn of bench/run, its functions exported (-Dstatic= -rdynamic): malloc_profile
# names frames with backtrace_symbols(3), which sees dynamic symbols only.
cc -O2 -g -Dstatic= -rdynamic -o churn "$top/bench/churn.c" -pthread -lm || exit 1
ARGS="-w 50000 -r 8-24 -m 1024 -n ${COUNTS_OPS:-4000000}"
CMD="$W/churn $ARGS"

# ---- malloc_profile ----
mp_sizes=
src=${MALLOC_PROFILE_SRC:-}
if [ -z "$src" ] && git clone -q --depth 1 https://github.com/schneiml/malloc_profile mp-src 2>/dev/null; then
	src=$W/mp-src
fi
if [ -n "$src" ] && [ -f "$src/libmalloc_profile.cpp" ]; then
	for s in 32768 1024; do
		sed -e 's/record_time = true/record_time = false/' \
		    -e "s/skip_number = [0-9*]*;/skip_number = $s;/" "$src/libmalloc_profile.cpp" >mp-$s.cpp &&
			g++ -std=gnu++11 -O2 -fPIC -fpermissive -shared -w -o libmp-$s.so mp-$s.cpp -ldl &&
			mp_sizes="$mp_sizes $s"
	done
	mp_rev=$(git -C "$src" log -1 --format=%h 2>/dev/null || echo unknown)
else
	say "malloc_profile: no MALLOC_PROFILE_SRC and no clone: its rows are skipped"
fi

# ---- runs: one per tool per round, in turn; CPU = user + sys ----
cpu() { # OUTFILE CMD...: CPU seconds of CMD into OUTFILE
	out=$1
	shift
	/usr/bin/time -f '%U %S' -o "$out.time" "$@" >/dev/null 2>"$out.err" || {
		say "$out failed: $(tail -n 1 "$out.err")"
		return 1
	}
	awk '{ printf "%.2f\n", $1 + $2 }' "$out.time" >"$out.cpu"
}
r=1
while [ "$r" -le "$ROUNDS" ]; do
	say "round $r of $ROUNDS"
	mkdir -p "r$r" && cd "r$r" || exit 1
	cpu base $CMD
	# timed without the snapshot; the counts come from a second run that writes one
	cpu exact env LD_PRELOAD="$HP" $CMD
	cpu sampled env LD_PRELOAD="$HP" HEAPPROF_SAMPLE=524288 HEAPPROF_SEED=$r $CMD
	cpu exact-snap env LD_PRELOAD="$HP" HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=exact.snap $CMD
	cpu sampled-snap env LD_PRELOAD="$HP" HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=sampled.snap \
		HEAPPROF_SAMPLE=524288 HEAPPROF_SEED=$r $CMD
	for s in $mp_sizes; do
		# it writes malloc.prof.PID into the working directory at exit
		mkdir -p mp-$s && (cd mp-$s && cpu ../mp-$s env LD_PRELOAD="$W/libmp-$s.so" $CMD)
	done
	cd .. || exit 1
	r=$((r + 1))
done
# ---- counts per allocating function (the innermost frame) ----
# heapprof: collapsed output of --metric=alloc_objects, the last frame is the allocator's caller
hp_sites() { # SNAPSHOT
	"$AN" -f collapsed --metric=alloc_objects "$W/churn" "$1" 2>/dev/null |
		awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); s[f[k]] += n }
			END { for (x in s) print x, s[x] }' | sort
}
# malloc_profile: "frame;...;frame; COUNT"; a sample is taken after a skip uniform in
# 0..2S-1, so each stands for S + 0.5 calls on average
mp_sites() { # DIR S
	cat "$1"/malloc.prof.* 2>/dev/null |
		awk -v S="$2" '{ n = $NF; $NF = ""; sub(/;? +$/, ""); k = split($0, f, ";"); s[f[k]] += n * (S + 0.5) }
			END { for (x in s) print x, s[x] }' | sort
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
r=1
while [ "$r" -le "$ROUNDS" ]; do
	hp_sites "r$r/exact.snap" >"r$r/exact.sites"
	hp_sites "r$r/sampled.snap" >"r$r/sampled.sites"
	for s in $mp_sizes; do mp_sites "r$r/mp-$s" "$s" >"r$r/mp-$s.sites"; done
	r=$((r + 1))
done

# the sites that call malloc itself (site_c: calloc, site_d: realloc; malloc_profile
# wraps malloc alone): error of each estimate against the exact count of its round
sites="site_a site_b site_e"
row() { # LABEL KIND(exact|sampled|mp-S)
	label=$1 kind=$2
	cpus= total= errs=
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		c=$(cat "r$r/$kind.cpu" 2>/dev/null)
		b=$(cat "r$r/base.cpu" 2>/dev/null)
		[ -n "$c" ] && [ -n "$b" ] && cpus="$cpus $(ratio "$c" "$b")"
		t=$(awk -v L="$sites" 'BEGIN { n = split(L, w, " "); for (i = 1; i <= n; i++) want[w[i]] = 1 }
			want[$1] { s += $2 } END { printf "%.0f", s }' "r$r/$kind.sites")
		total="$total $t"
		for site in $sites; do
			e=$(awk -v s="$site" '$1 == s { print $2 }' "r$r/exact.sites")
			g=$(awk -v s="$site" '$1 == s { print $2 }' "r$r/$kind.sites")
			errs="$errs $(awk -v e="${e:-0}" -v g="${g:-0}" 'BEGIN { printf "%+.1f", (e > 0 ? (g - e) * 100 / e : 0) }')"
		done
		r=$((r + 1))
	done
	echo "| $label |$cpus |$total |$errs |"
}
echo
echo "\`churn $ARGS\` (churn.c built with -Dstatic= -rdynamic), $ROUNDS rounds; malloc calls from"
echo "site_a, site_b and site_e (the sites that call malloc itself), in all and per site."
echo
echo "| tool | CPU time / uninstrumented, per round (heapprof: a run without its snapshot at exit) | malloc calls counted or estimated, per round | error per site (a, b, e) against the exact count, per round |"
echo "|---|---|---|---|"
row "heapprof, every call (exact)" exact
row "heapprof, HEAPPROF_SAMPLE=524288 (seed = round)" sampled
for s in $mp_sizes; do
	row "malloc_profile $mp_rev, skip count $s (randomized, uniform 0..$((2 * s - 1)))" mp-$s
done
