#!/bin/sh
# The fuzz smoke (make fuzz-smoke): build the libFuzzer targets under ASan and UBSan,
# run each FUZZ_SECONDS (default 60) from the committed seeds into a scratch corpus,
# and print one test line and the total "N passed, N failed, N skipped" that .ci/run
# adds up: a crash, leak, sanitizer report or timeout in any target fails it.
: "${B:=build}" "${FUZZ_CC:=clang}" "${FUZZ_SECONDS:=60}" "${MAKE:=make}"
: "${FUZZ_SCAN_ARGS:=-max_len=8192}" "${FUZZ_CORE_ARGS:=-max_len=65536 -timeout=10}"
: "${FUZZ_GRAPH_ARGS:=-max_len=4096 -timeout=10}" "${FUZZ_FLEET_ARGS:=-max_len=131072 -timeout=10}"
cd "$(dirname "$0")/../.." || exit 1
if ! command -v "$FUZZ_CC" >/dev/null 2>&1; then
	echo "ok 1 - fuzz smoke # SKIP $FUZZ_CC is not installed"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=
targets="scan core graph fleet"
if ! $MAKE -s B="$B" FUZZ_CC="$FUZZ_CC" "$B/fuzz/fuzz_scan" "$B/fuzz/fuzz_core" "$B/fuzz/fuzz_graph" "$B/fuzz/fuzz_fleet" \
	>"$tmp/build.log" 2>&1; then
	sed 's/^/#   /' "$tmp/build.log" | tail -n 20
	fail="the targets do not build"
fi
for t in $targets; do
	[ -z "$fail" ] || break
	mkdir -p "$tmp/corpus_$t"
	eval args=\$FUZZ_$(echo $t | tr a-z A-Z)_ARGS
	# one process; any report ends the run with a non-zero status and an artifact
	"$B/fuzz/fuzz_$t" -max_total_time="$FUZZ_SECONDS" $args -artifact_prefix="$tmp/" \
		-print_final_stats=1 "$tmp/corpus_$t" "test/fuzz/seeds/$t" >"$tmp/$t.log" 2>&1
	rc=$?
	grep -E "^#[0-9]+.*(INITED|DONE)" "$tmp/$t.log" | sed "s/^/# fuzz_$t: /"
	if [ $rc != 0 ]; then
		grep -E -A30 "ERROR|runtime error|SUMMARY" "$tmp/$t.log" | head -n 40 | sed 's/^/#   /'
		for a in "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-*; do
			[ -f "$a" ] && mkdir -p "$B/fuzz" && cp "$a" "$B/fuzz/" &&
				echo "#   input kept: $B/fuzz/$(basename "$a")"
		done
		fail="fuzz_$t exited with status $rc"
	fi
done
if [ -z "$fail" ]; then
	echo "ok 1 - fuzz smoke: fuzz_scan, fuzz_core, fuzz_graph and fuzz_fleet, ${FUZZ_SECONDS}s each from the seeds"
	echo "1 passed, 0 failed, 0 skipped"
else
	echo "not ok 1 - fuzz smoke: $fail"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
