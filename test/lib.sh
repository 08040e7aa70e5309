# Sourced by every test/tNNNN-*.sh. Gives:
#   test_case NAME 'commands'   run the commands in a subshell; ok/not ok, log on failure
#   skip_case NAME WHY          an "ok ... # SKIP" line (counted as skipped)
#   need_tool TOOL              exit 77 (the whole script is skipped) when TOOL is missing
#   expect_same EXPECTED ACTUAL diff two files, print the diff, fail when they differ
#   expect_grep [-x|-E|-F|-i|--] PATTERN [FILE]
#                               FILE (or standard input) has a line matching PATTERN;
#                               else print the pattern and the file's first lines
#   expect_no_grep [...] PATTERN [FILE]  no line matches; else print those that do
#   expect_eq WHAT EXPECTED ACTUAL  two strings equal; else print both
#   expect_num WHAT N OP M      [ N OP M ] for integers (-eq -ne -lt -le -gt -ge); else
#                               print N, OP and M
#   run_preloaded PROG ARGS...  start PROG under heapprof.so (or LD_PRELOAD=$HP_PRELOAD when
#                               set), wait for its "ready" line
#   run_plain PROG ARGS...      the same without heapprof.so (a core of a program that
#                               ran without it)
#   take_core FILE              gcore the program started last, then end it
#   expect_bytes FUNC N FILE    collapsed report FILE: stacks through FUNC hold N bytes
#   run_tap NAME CMD...         run a test program that prints ok / not ok lines itself,
#                               and pass its lines on, each counting; a crash fails
#   jnum KEY FILE               the first JSON "KEY": N in FILE
#   by_class FILE               a collapsed --leaks report's bytes per class and alloc_*
#                               leaf, summed and sorted: "definitely lost alloc_plain 176"
#   leaky_classes [CLASS]       what by_class must give for test/progs/leaky, with
#                               alloc_register in CLASS (left out without one)
#   arenas_lost                 ... for test/progs/arenas under --leaks
#   expect_mallinfo JSON OUT P  a --memory JSON report's allocator figures against the
#                               "mallinfo2 ..." line in OUT: within P% (0: equal)
#   have_pprof                  the real pprof as $PPROF, built on first use; false with
#                               the reason in $PPROF_WHY (for skip_case)
# Each script runs in its own scratch directory, removed afterwards unless KEEP=1, with
# TMPDIR inside it.
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
# What the script's programs write to $TMPDIR (a spooled core, heapprof report --keep's
# snapshot, chromium's profiles) goes in the scratch directory and goes with it.
mkdir "$SCRATCH/.tmp" && TMPDIR=$SCRATCH/.tmp && export TMPDIR || exit 1
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
		sed 's/^/#   /' "$SCRATCH/case.log" | tail -n 60
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

# show_file FILE: its first 30 lines, marked, and how many more there are
show_file()
{
	awk 'NR <= 30 { print "  | " $0 }
		END { if (NR > 30) print "  | ... " NR - 30 " more lines (KEEP=1 keeps the file)" }' "$1"
}

# expect_grep and expect_no_grep: grep's options first, then PATTERN, then FILE or
# standard input (kept in expect.in to be shown). Their variables start with _em_, so
# as not to touch a case's own.
expect_grep()
{
	expect_match yes "$@"
}

expect_no_grep()
{
	expect_match no "$@"
}

expect_match()
{
	_em_want=$1 _em_opts=
	shift
	while [ $# -gt 1 ]; do
		case $1 in
		--) shift; break ;;
		-[xEFiw]*) _em_opts="$_em_opts $1"; shift ;;
		*) break ;;
		esac
	done
	_em_file=${2:-$SCRATCH/expect.in}
	[ $# -ge 2 ] || cat >"$_em_file"
	# _em_opts unquoted: the options given, one word each
	if [ $_em_want = yes ]; then
		grep -q $_em_opts -e "$1" "$_em_file" && return 0
		echo "expected a line matching${_em_opts:+ (grep$_em_opts)} '$1' in ${2:-standard input}; it holds:"
		show_file "$_em_file"
	else
		grep $_em_opts -e "$1" "$_em_file" >"$SCRATCH/expect.hit" || return 0
		echo "expected no line matching${_em_opts:+ (grep$_em_opts)} '$1' in ${2:-standard input}; found:"
		show_file "$SCRATCH/expect.hit"
	fi >&2
	return 1
}

expect_eq()
{
	[ "$2" = "$3" ] && return 0
	echo "$1: expected '$2', got '$3'" >&2
	return 1
}

expect_num()
{
	case $3 in
	-eq) _en_op='=' ;; -ne) _en_op='!=' ;; -lt) _en_op='<' ;; -le) _en_op='<=' ;;
	-gt) _en_op='>' ;; -ge) _en_op='>=' ;;
	*) echo "expect_num: '$3' is no operator" >&2; return 2 ;;
	esac
	if [ "$2" -eq "$2" ] 2>/dev/null && [ "$4" -eq "$4" ] 2>/dev/null; then
		[ "$2" "$3" "$4" ] && return 0
	fi
	echo "$1: expected $_en_op $4, got '$2'" >&2
	return 1
}

# have_pprof: $PPROF is the real pprof, built once per build directory from Debian's
# sources (golang-go, golang-github-google-pprof-dev) by the first script that asks,
# under a lock, so that no script skips a pprof check for want of a later one's build;
# else a pprof in PATH. False without either, the reason in PPROF_WHY.
PPROF=$BUILD/pprof
PPROF_WHY=
have_pprof()
{
	[ -x "$BUILD/pprof" ] && return 0
	if command -v go >/dev/null && [ -d /usr/share/gocode/src/github.com/google/pprof ]; then
		(
			flock 9 && { [ -x "$BUILD/pprof" ] ||
				GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE=$BUILD/go-cache \
					go build -o "$BUILD/pprof.new" github.com/google/pprof &&
				mv "$BUILD/pprof.new" "$BUILD/pprof"; }
		) 9>"$BUILD/pprof.lock" >"$BUILD/pprof.log" 2>&1 && return 0
		PPROF_WHY="pprof did not build from Debian's sources: $BUILD/pprof.log says why"
	elif command -v pprof >/dev/null; then
		PPROF=$(command -v pprof)
		return 0
	else
		PPROF_WHY="no pprof: go or its sources missing (scripts/install-deps --test: golang-go golang-github-google-pprof-dev)"
	fi
	return 1
}

# wait_for CMD...: until CMD (a command or a function) succeeds, 30 s at most; for a
# case to wait for what it asserts, not for a time
wait_for()
{
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -lt 300 ] || { echo "still not after 30 s: $*" >&2; return 1; }
		sleep 0.1
	done
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

run_plain()
{
	rm -f prog.out
	"$@" >prog.out 2>prog.err &
	PROG_PID=$!
	wait_for grep -q '^ready$' prog.out 2>/dev/null ||
	{ kill -9 "$PROG_PID" 2>/dev/null; cat prog.err >&2; return 1; }
}

# path_without_gdb DIR: DIR made to serve as a PATH with every command of /usr/bin and /bin
# but gdb and gcore (the wrapper's snapshots without a debugger)
path_without_gdb()
{
	mkdir "$1" || return
	for f in /usr/bin/* /bin/*; do
		case ${f##*/} in gdb | gcore) ;; *) ln -sf "$f" "$1/" 2>/dev/null ;; esac
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

# json_valid FILE [SCHEMA]: FILE is an instance of the JSON schema SCHEMA (default
# docs/report-schema.json); true without python3-jsonschema (the tests that need it
# say so with a skip of their own)
json_valid()
{
	python3 -c "import jsonschema" 2>/dev/null || return 0
	python3 -c "
import json, sys
import jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
" "$1" "${2:-$SRC_DIR/docs/report-schema.json}"
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

jnum()
{
	grep -o "\"$1\": [0-9]*" "$2" | head -1 | sed 's/.*: //'
}

by_class()
{
	awk '{ n = split($0, a, " "); k = split(substr($0, 1, length($0) - length(a[n]) - 1), fr, ";");
		c = fr[1]; gsub(/^\[|\]$/, "", c); if (fr[k] ~ /^alloc_/) t[c " " fr[k]] += a[n] }
		END { for (x in t) print x, t[x] }' "$1" | sort
}

# alloc_register's pointer lives in rbx only on x86_64: still reachable there from the
# registers, elsewhere lost (or not asked about)
leaky_classes()
{
	{
		cat <<'EOF'
definitely lost alloc_cycle 24
definitely lost alloc_list_head 48
definitely lost alloc_plain 176
definitely lost alloc_readonly 184
indirectly lost alloc_cycle 48
indirectly lost alloc_list_node 160
possibly lost alloc_interior 200
possibly lost alloc_interior_child 56
still reachable alloc_global 120
still reachable alloc_mmap 152
still reachable alloc_thread_stack 100
still reachable alloc_tls 136
still reachable alloc_untagged 168
EOF
		[ -z "${1:-}" ] || echo "$1 alloc_register 112"
	} | sort
}

# the blocks whose only pointers sit in free chunks or in malloc's links
arenas_lost()
{
	cat <<'EOF'
definitely lost alloc_below_top 8
definitely lost alloc_edge 136
definitely lost alloc_in_bin 56
definitely lost alloc_in_fastbin 72
definitely lost alloc_in_slack 24
definitely lost alloc_in_tcache 40
EOF
}

# hblks, the count of mmapped chunks, is always compared exactly
expect_mallinfo()
{
	for pair in arena_bytes:arena in_use_bytes:uordblks free_bytes:fordblks \
		mmapped_bytes:hblkhd mmapped_chunks:hblks; do
		got=$(jnum "${pair%:*}" "$1")
		want=$(sed -n "s/^mallinfo2.* ${pair#*:}=\([0-9]*\).*/\1/p" "$2")
		pct=$3
		[ "${pair%:*}" = mmapped_chunks ] && pct=0
		[ -n "$got" ] && [ -n "$want" ] &&
		awk -v a="$got" -v b="$want" -v p="$pct" -v w="${pair#*:}" 'BEGIN { d = a - b;
			if (d < 0) d = -d;
			if (d * 100 > b * p) { print w ": " a " from the core, " b " from mallinfo2"; exit 1 } }' ||
			return 1
	done
}
