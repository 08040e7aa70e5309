#!/bin/sh
# heapprof attach: a program started without heapprof, attached while a second thread
# allocates, then tagged from that moment on (exact bytes per function in a snapshot),
# its blocks from before read, sized, grown and freed without harm (glibc aborts a
# block given to the wrong free: the control case shows it would), a library it loads
# later bound to heapprof too; refusals one line each with the target running on.
. "$(dirname "$0")/lib.sh"
need_tool gcore

WRAP=$SRC_DIR/scripts/heapprof
export HEAPPROF_SO=$PRELOAD HEAPPROF_ANALYZE=$ANALYZE HEAPPROF_INJECT=$BUILD/heapprof-inject

# said REGEX: the program printed a line matching REGEX; ends the case at once, saying
# so, when it ended without
said()
{
	grep -q -E "$1" prog.out 2>/dev/null && return
	kill -0 "$PROG_PID" 2>/dev/null && return 1
	echo "the program ended without a line matching $1; it said:"
	cat prog.out prog.err
	exit 1
}

# start_plain PROG ARGS...: PROG without heapprof, once it printed "ready"
start_plain()
{
	rm -f prog.out
	"$@" >prog.out 2>prog.err &
	PROG_PID=$!
	started
	wait_for said '^ready$'
}

# started: note PROG_PID, which a case sets in its subshell, for attach_case to end
started() { echo "$PROG_PID" >>"$SCRATCH/pids"; }

# attach_case NAME COMMANDS: test_case, then every program the case started ends
attach_case()
{
	test_case "$@"
	[ -f "$SCRATCH/pids" ] || return 0
	for p in $(cat "$SCRATCH/pids"); do kill -9 "$p" 2>/dev/null; done
	rm -f "$SCRATCH/pids"
}

# end_prog: end the program started last
end_prog() { kill -9 "$PROG_PID"; wait "$PROG_PID" 2>/dev/null; PROG_PID=; true; }

# attach_go: attach to the program, let it go on, wait for its last line
attach_go()
{
	"$WRAP" attach "$PROG_PID" >attach.out 2>attach.err || { cat attach.out attach.err; return 1; }
	expect_grep -E "^attached to process $PROG_PID: [0-9]+ references redirected; its thread $PROG_PID stopped for [0-9.]+ ms\$" attach.out &&
	kill -s USR1 "$PROG_PID" &&
	wait_for said '^(done|failed)$' &&
	expect_no_grep '^fail' prog.out && expect_grep -x done prog.out
}

attach_case 'after attach, each function has its exact bytes; blocks from before freed without harm' '
	start_plain env MALLOC_PERTURB_=165 $PROGS/attachee &&
	attach_go &&
	"$WRAP" snapshot "$PROG_PID" at.snap 2>snap.err &&
	heapprof-analyze --format=collapsed $PROGS/attachee at.snap >at.txt &&
	expect_bytes site_malloc 2000 at.txt && expect_bytes site_calloc 1024 at.txt &&
	expect_bytes site_realloc 777 at.txt && expect_bytes site_memalign 300 at.txt &&
	expect_bytes site_aligned 256 at.txt && expect_bytes site_strdup 100 at.txt &&
	expect_bytes site_grow 5000 at.txt && expect_bytes churn 0 at.txt &&
	kill -0 "$PROG_PID"
'

attach_case 'a library loaded after attach frees a tagged block and tags its own' '
	start_plain $PROGS/attachee --late=$PROGS/liblate.so &&
	attach_go &&
	"$WRAP" snapshot "$PROG_PID" late.snap 2>snap.err &&
	heapprof-analyze --format=collapsed $PROGS/attachee late.snap >late.txt &&
	expect_bytes late_alloc 640 late.txt && expect_bytes site_malloc 2000 late.txt
'

# glibc aborts on the header it finds below the pointer (free(): invalid pointer, or
# munmap_chunk()'s), or faults on the size it reads there: a signal either way
attach_case 'control: a tagged block given to the libc'"'"'s own free ends the program' '
	start_plain $PROGS/attachee --wrong-free &&
	"$WRAP" attach "$PROG_PID" >attach.out 2>attach.err &&
	kill -s USR1 "$PROG_PID" && { wait "$PROG_PID"; rc=$?; PROG_PID=; true; } &&
	expect_grep -x "freeing a new block with the libc.s free" prog.out &&
	expect_no_grep -x done prog.out &&
	case $rc in 134 | 139) ;; *) echo "expected death by SIGABRT or SIGSEGV, got status $rc"; false ;; esac
'

# refused PATTERN: attach failed with status 2 and one line matching PATTERN; the
# program runs on
refused()
{
	{ "$WRAP" attach "$PROG_PID" >attach.out 2>attach.err; rc=$?; } &&
	expect_eq "attach status" 2 "$rc" && expect_eq "lines said" 1 "$(wc -l <attach.err)" &&
	expect_grep -E "$1" attach.err && kill -0 "$PROG_PID"
}

attach_case 'refused: attached already, heapprof.so loaded, no permission' '
	start_plain $PROGS/attachee && attach_go &&
	refused "^heapprof: not attaching to process $PROG_PID: heapprof is in it already\$" &&
	end_prog &&
	run_preloaded $PROGS/sites small=1x100 && started &&
	refused "^heapprof: not attaching to process $PROG_PID: heapprof is in it already\$" &&
	end_prog &&
	start_plain $PROGS/attachee &&
	{ setpriv --reuid=65534 --regid=65534 --clear-groups env HEAPPROF_SO=$PRELOAD \
		HEAPPROF_INJECT=$BUILD/heapprof-inject "$WRAP" attach $PROG_PID >attach.out 2>attach.err; rc=$?; } &&
	expect_eq "attach status" 2 "$rc" && expect_grep "^heapprof: permission denied" attach.err &&
	kill -s USR1 $PROG_PID && wait_for said '^done$'
'

attach_case 'refused: a static program' '
	start_plain $PROGS/sites-static small=1x100 &&
	refused "^heapprof attach: not attaching to process $PROG_PID: no shared libc in it \\(a static program\\?\\)\$"
'

if [ -x "$PROGS/sites-musl" ]; then
	attach_case 'refused: a musl program' '
		start_plain $PROGS/sites-musl small=1x100 &&
		refused "^heapprof attach: not attaching to process $PROG_PID: it runs musl.s libc \\(glibc only\\)\$"
	'
else
	skip_case 'refused: a musl program' 'no musl-gcc'
fi

if [ -f /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ]; then
	attach_case 'refused: another allocator comes first (jemalloc), unloaded again' '
		start_plain env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 $PROGS/attachee &&
		refused "^heapprof attach: not attaching to process $PROG_PID: its malloc is not the libc.s" &&
		expect_no_grep heapprof-attach /proc/$PROG_PID/maps &&
		kill -s USR1 $PROG_PID && wait_for said '^done$'
	'
else
	skip_case 'refused: another allocator comes first (jemalloc)' 'no libjemalloc.so.2'
fi

# the bench's cycles (bench/attach.sh; 100 there): servers under checking load
if command -v python3 >/dev/null; then
	attach_case 'two attach and snapshot cycles on a C server and python3 -m http.server under load' '
		sh "$SRC_DIR/bench/attach.sh" "$BUILD" 2 >bench.md || { cat bench.md; false; }
	'
else
	skip_case 'attach and snapshot cycles on servers under load' 'no python3'
fi
