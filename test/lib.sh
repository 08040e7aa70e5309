# Sourced by every test/tNNNN-*.sh. Gives:
#   test_case NAME 'commands'   run the commands in a subshell; ok/not ok, log on failure
#   skip_case NAME WHY          an "ok ... # SKIP" line (counted as skipped)
#   need_tool TOOL              exit 77 (the whole script is skipped) when TOOL is missing
#   expect_same EXPECTED ACTUAL diff two files, print the diff, fail when they differ
#   run_preloaded PROG ARGS...  start PROG under heapprof.so (or LD_PRELOAD=$HP_PRELOAD when
#                               set), wait for its "ready" line
#   take_core FILE              gcore the program started last, then end it
#   expect_bytes FUNC N FILE    collapsed report FILE: stacks through FUNC hold N bytes
#   run_tap NAME CMD...         run a test program that prints ok / not ok lines itself,
#                               and pass its lines on, each counting; a crash fails
# Each script runs in its own scratch directory, removed afterwards unless KEEP=1.
set -u
: "${BUILD:?}" "${TEST_DIR:?}"
PATH=$BUILD:$PATH
# no network symbol lookups from the tests
unset DEBUGINFOD_URLS
PROGS=$BUILD/progs
PRELOAD=$BUILD/heapprof.so
ANALYZE=$BUILD/heapprof-analyze
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-test.XXXXXX")
cd "$SCRATCH" || exit 1
trap 'cleanup_all' EXIT
case_no=0
failures=0
PROG_PID=

# The script's status: its own (77 from need_tool, say), else 1 if a case failed. An
# EXIT trap's last status is not the shell's, so it has to exit with it.
cleanup_all()
{
	rc=$?
	[ -n "$PROG_PID" ] && kill -9 "$PROG_PID" 2>/dev/null
	cd / && [ "${KEEP:-0}" = 1 ] || rm -rf "$SCRATCH"
	[ $rc -eq 0 ] && [ $failures -ne 0 ] && rc=1
	exit $rc
}

test_case()
{
	case_no=$((case_no + 1))
	if (eval "$2") >"$SCRATCH/case.log" 2>&1; then
		echo "ok $case_no - $1"
	else
		echo "not ok $case_no - $1"
		sed 's/^/#   /' "$SCRATCH/case.log" | tail -n 40
		failures=$((failures + 1))
	fi
}

skip_case()
{
	case_no=$((case_no + 1))
	echo "ok $case_no - $1 # SKIP $2"
}

need_tool()
{
	command -v "$1" >/dev/null 2>&1 || { echo "# skipped: $1 is not installed"; exit 77; }
}

expect_same()
{
	diff -u "$1" "$2" >&2
}

run_preloaded()
{
	rm -f prog.out
	LD_PRELOAD=${HP_PRELOAD:-$PRELOAD} "$@" >prog.out 2>prog.err &
	PROG_PID=$!
	i=0
	while ! grep -q '^ready$' prog.out 2>/dev/null; do
		kill -0 "$PROG_PID" 2>/dev/null || { cat prog.err >&2; return 1; }
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "program never got ready" >&2; return 1; }
		sleep 0.1
	done
}

take_core()
{
	gcore -o "$SCRATCH/gcore" "$PROG_PID" >gcore.log 2>&1 || { cat gcore.log >&2; return 1; }
	mv "$SCRATCH/gcore.$PROG_PID" "$1" &&
	kill -9 "$PROG_PID" 2>/dev/null
	wait "$PROG_PID" 2>/dev/null
	PROG_PID=
	true
}

# Live bytes of the collapsed stacks in FILE that pass through frame FUNC, summed.
bytes_for()
{
	awk -v f="$1" '{ n = split($0, a, " "); s = substr($0, 1, length($0) - length(a[n]) - 1);
		k = split(s, fr, ";"); for (i = 1; i <= k; i++) if (fr[i] == f) { t += a[n]; break } }
		END { print t + 0 }' "$2"
}

# expect_bytes FUNC N FILE: the stacks through FUNC hold exactly N bytes.
expect_bytes()
{
	got=$(bytes_for "$1" "$3")
	[ "$got" = "$2" ] || { echo "$1: expected $2 live bytes, got $got" >&2; return 1; }
}

run_tap()
{
	name=$1
	shift
	"$@" >"$SCRATCH/$name.out" 2>&1
	rc=$?
	grep -E '^(not )?ok ' "$SCRATCH/$name.out" | sed "s/ - / - $name: /"
	if [ $rc != 0 ] && ! grep -q '^not ok ' "$SCRATCH/$name.out"; then
		echo "not ok - $name exited with status $rc"
		tail -n 20 "$SCRATCH/$name.out" | sed 's/^/#   /'
	fi
	[ $rc = 0 ] || failures=$((failures + 1))
}
