#!/bin/sh
# Continuous snapshots (issue 35): HEAPPROF_INTERVAL writes one every DURATION and
# HEAPPROF_KEEP keeps the newest N, each complete, with exact bytes; heapprof watch
# turns each into a pprof profile labelled program, build_id, pid, host (thread);
# --symbols=none gives build-ids and file offsets only, and pprof's own checks pass.
. "$(dirname "$0")/lib.sh"

WRAP=$SRC_DIR/scripts/heapprof
export HEAPPROF_SO=$PRELOAD HEAPPROF_ANALYZE=$ANALYZE
SITES_PROG=$PROGS/sites

# The run every case reads: site_small holds 3000 bytes for the first 600 ms, then
# 2000 to the end (1.8 s); site_big 4096 throughout. A snapshot every 200 ms, the
# newest 3 kept: the ones left were all taken after the free.
mkdir snaps
SITES_EXIT=1 HEAPPROF_INTERVAL=200ms HEAPPROF_KEEP=3 \
	HEAPPROF_OUTPUT=$SCRATCH/snaps/heapprof.%p.%n.snap LD_PRELOAD=$PRELOAD \
	"$SITES_PROG" small=3x1000 big=1x4096 sleep=600 free-small=1 sleep=1200 \
	>run.out 2>run.err &
RUN_PID=$!
wait $RUN_PID
RUN_RC=$?
ls snaps >kept

test_case 'the program runs as without heapprof, and says nothing of its snapshots' '
	expect_eq "exit status" 0 "$RUN_RC" && expect_grep -x ready run.out &&
	expect_no_grep . run.err
'

# numbers 1..N were taken in turn (%n); the newest three, N-2..N, must be what is left
test_case 'HEAPPROF_KEEP=3: exactly the newest 3 snapshots are left, no .part' '
	expect_num "files left" "$(wc -l <kept)" -eq 3 &&
	expect_no_grep "\.part$" kept &&
	sed -n "s/^heapprof\.$RUN_PID\.\([0-9]*\)\.snap$/\1/p" kept | sort -n >nums &&
	expect_num "snapshots named" "$(wc -l <nums)" -eq 3 &&
	n=$(tail -n 1 nums) &&
	expect_num "snapshots taken (a rotation happened)" "$n" -ge 5 &&
	printf "%s\n" $((n - 2)) $((n - 1)) $n >want && expect_same want nums
'

test_case 'each snapshot left is complete: exact live bytes after the free, no warning' '
	for f in snaps/*.snap; do
		heapprof-analyze -f collapsed "$SITES_PROG" "$f" >c.txt 2>c.err &&
		expect_no_grep . c.err &&
		expect_bytes site_small 2000 c.txt && expect_bytes site_big 4096 c.txt || exit 1
	done
'

# pprof's own package, from Debian's sources as pprof itself (have_pprof), checks
# and describes each profile: profile.Parse and profile.CheckValid
PCHECK=$BUILD/pprof_check
have_check()
{
	[ -x "$PCHECK" ] && return 0
	have_pprof || return 1
	(
		flock 9 && { [ -x "$PCHECK" ] ||
			GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE=$BUILD/go-cache \
				go build -o "$PCHECK.new" "$TEST_DIR/helpers/pprof_check.go" &&
			mv "$PCHECK.new" "$PCHECK"; }
	) 9>"$BUILD/pprof.lock" >"$BUILD/pprof_check.log" 2>&1 && return 0
	PPROF_WHY="pprof_check did not build: $BUILD/pprof_check.log says why"
	return 1
}

build_id=$(readelf -n "$SITES_PROG" | sed -n "s/^ *Build ID: *//p")

if ! have_check; then
	skip_case 'watch: a labelled, valid pprof profile per snapshot' "$PPROF_WHY"
	skip_case '--symbols=none: valid, no function names, build-ids and offsets' "$PPROF_WHY"
else
	test_case 'watch: a labelled, valid pprof profile per snapshot, exact bytes' '
		"$WRAP" watch --once "$SITES_PROG" snaps profiles >made 2>watch.err &&
		expect_no_grep . watch.err &&
		expect_num "profiles" "$(wc -l <made)" -eq 3 &&
		for f in snaps/*.snap; do
			b=${f##*/} && p=profiles/${b%.snap}.pb.gz &&
			expect_grep -xF "$p" made && "$PCHECK" "$p" >desc &&
			expect_grep -x "functions [1-9][0-9]*" desc &&
			printf "%s\n" "label build_id=$build_id" "label host=$(uname -n)" \
				"label pid=$RUN_PID" "label program=$SITES_PROG" >want &&
			grep "^label" desc >got && expect_same want got &&
			expect_grep -x "leaf site_small 2000" desc &&
			expect_grep -x "leaf site_big 4096" desc || exit 1
		done &&
		expect_no_grep "\.part$" made && ! ls profiles/*.part 2>/dev/null
	'

	# beside the program, as a collector would run it: each snapshot as it lands, and
	# OUT keeps what DIR keeps
	same_names() {
		ls live | sed "s/\.snap$//" >a.names && ls lprof | sed "s/\.pb\.gz$//" >b.names &&
			cmp -s a.names b.names
	}
	test_case 'watch beside the program: a profile as each lands, thread label, OUT mirrors KEEP' '
		mkdir live lprof &&
		{ "$WRAP" watch --every=0.1 --by-thread "$SITES_PROG" live lprof >lmade 2>lwatch.err &
		  W=$!; } &&
		SITES_EXIT=1 HEAPPROF_INTERVAL=200ms HEAPPROF_KEEP=3 \
			HEAPPROF_OUTPUT=$SCRATCH/live/heapprof.%p.%n.snap LD_PRELOAD=$PRELOAD \
			"$SITES_PROG" small=3x1000 big=1x4096 sleep=1500 >/dev/null 2>&1 &&
		wait_for same_names; rc=$?
		kill $W; wait $W
		expect_eq "OUT holds the profiles of what DIR holds" 0 $rc &&
		expect_no_grep . lwatch.err &&
		expect_num "profiles made (more than kept)" "$(wc -l <lmade)" -ge 4 &&
		expect_num "profiles left" "$(ls lprof | wc -l)" -eq 3 &&
		p=lprof/$(ls lprof | head -n 1) && "$PCHECK" "$p" >desc &&
		pid=$(ls live | head -n 1 | cut -d. -f2) &&
		expect_grep -x "label thread=$pid sites" desc &&
		expect_grep -x "label pid=$pid" desc
	'

	test_case '--symbols=none: valid, no function names, every mapping with build-id and offset' '
		f=$(ls snaps/*.snap | tail -n 1) &&
		heapprof-analyze -f pprof --symbols=none --label=pid=%p -o none.pb.gz \
			"$SITES_PROG" "$f" 2>none.err &&
		expect_no_grep . none.err &&
		"$PCHECK" none.pb.gz >desc &&
		expect_grep -x "functions 0" desc && expect_no_grep "^leaf" desc &&
		expect_grep -x "label pid=$RUN_PID" desc &&
		# the program: each of its mappings, with the offset it maps, and its build-id
		grep " $SITES_PROG\$" desc >prog_maps &&
		expect_num "mappings of the program" "$(wc -l <prog_maps)" -ge 2 &&
		grep -v "^mapping 0x[0-9a-f]* 0x[0-9a-f]* $build_id " prog_maps >bad_maps;
		expect_no_grep . bad_maps &&
		expect_grep "^mapping 0x[0-9a-f]* 0x[1-9a-f][0-9a-f]* $build_id " prog_maps &&
		expect_no_grep "^mapping [^ ]* [^ ]*  " desc &&
		"$PPROF" -symbolize=none -raw none.pb.gz >raw 2>&1 &&
		# the comment and the mappings name the program file, which may say "main"
		grep -v "Comment: \| $SITES_PROG " raw >raw_names;
		expect_no_grep "site_\|main" raw_names
	'

	# what a platform does with it: pprof symbolizes it on its side, from the mappings'
	# files, offsets and build-ids alone (its local symbolizer, with binutils)
	if command -v addr2line >/dev/null && command -v nm >/dev/null; then
		test_case '--symbols=none: pprof names the functions itself, exact bytes' '
			"$PPROF" -symbolize=local -top -unit=B -sample_index=inuse_space \
				none.pb.gz >top 2>top.err &&
			expect_grep -E "^ *2000B .* site_small$" top &&
			expect_grep -E "^ *4096B .* site_big$" top
		'
	else
		skip_case '--symbols=none: pprof names the functions itself' 'no binutils (addr2line, nm)'
	fi
fi

test_case '--symbols and --label: pprof only, KEY checked, exit 64' '
	f=$(ls snaps/*.snap | tail -n 1)
	heapprof-analyze --symbols=none "$SITES_PROG" "$f" >/dev/null 2>err; rc=$?
	expect_eq "status, --symbols with text" 64 $rc &&
	expect_grep "symbols and --label are for -f pprof" err &&
	heapprof-analyze -f pprof --label="1x=y" "$SITES_PROG" "$f" >/dev/null 2>err; rc=$?
	expect_eq "status, a bad KEY" 64 $rc && expect_grep "label needs KEY=VALUE" err &&
	heapprof-analyze -f pprof --symbols=none --python=merged "$SITES_PROG" "$f" \
		>/dev/null 2>err; rc=$?
	expect_eq "status, --python with none" 64 $rc
'

test_case 'HEAPPROF_INTERVAL: a bad value is said once and takes none; KEEP=0 keeps all' '
	mkdir bad all &&
	SITES_EXIT=1 HEAPPROF_INTERVAL=often HEAPPROF_OUTPUT=$SCRATCH/bad/s.%n.snap \
		LD_PRELOAD=$PRELOAD "$SITES_PROG" small=1x10 sleep=300 >/dev/null 2>bad.err &&
	expect_grep "HEAPPROF_INTERVAL=often is not a duration" bad.err &&
	expect_num "warnings" "$(wc -l <bad.err)" -eq 1 && test -z "$(ls bad)" &&
	SITES_EXIT=1 HEAPPROF_INTERVAL=100ms HEAPPROF_KEEP=0 HEAPPROF_OUTPUT=$SCRATCH/all/s.%n.snap \
		LD_PRELOAD=$PRELOAD "$SITES_PROG" small=1x10 sleep=700 >/dev/null &&
	ls all >all.list && expect_grep -x s.1.snap all.list &&
	expect_num "kept" "$(wc -l <all.list)" -ge 3
'

# heapprof's thread runs HEAPPROF_OOM's watch and the interval side by side: under
# RLIMIT_AS (128 MiB) a program leaking 40 MB/s gets both kinds of snapshot
MIB=1048576
(ulimit -v $((128 * MIB / 1024)) && HEAPPROF_OOM=95 HEAPPROF_INTERVAL=300ms HEAPPROF_KEEP=0 \
	HEAPPROF_OUTPUT=both.%n.snap LD_PRELOAD=$PRELOAD exec "$PROGS/oomleak" -r 40) \
	>both.out 2>both.err
test_case 'HEAPPROF_OOM and HEAPPROF_INTERVAL together: both kinds of snapshot' '
	expect_grep -x "out of memory after [0-9]* blocks" both.out &&
	ls both.*.oom.snap >oom.list && expect_num ".oom snapshots" "$(wc -l <oom.list)" -ge 1 &&
	ls both.*.snap | grep -v "\.oom\.snap$" >iv.list &&
	expect_num "interval snapshots" "$(wc -l <iv.list)" -ge 3 &&
	f=$(head -n 1 iv.list) &&
	heapprof-analyze -f collapsed "$PROGS/oomleak" "$f" >c.txt &&
	expect_grep "leak_block [0-9]*$" c.txt
'

# A writer forked while another thread of the program is inside heapprof's mmap or
# munmap (the map table's lock held) must not take that lock itself: git maps and
# unmaps its pack windows all along, and a writer that did spun for ever, its .part
# left, exit waiting HEAPPROF_WAIT_MS for it. Every writer must end.
end_writers()
{
	for e in /proc/[0-9]*/environ; do
		grep -qsF "HEAPPROF_OUTPUT=$SCRATCH/git/" "$e" || continue
		p=${e#/proc/}; p=${p%/environ}
		kill -9 "$p" 2>/dev/null
		echo "$p"
	done
}
if git -C "$SRC_DIR" rev-parse --git-dir >/dev/null 2>&1; then
	mkdir git
	HEAPPROF_INTERVAL=10ms HEAPPROF_KEEP=2 HEAPPROF_WAIT_MS=3000 HEAPPROF_SAMPLE=65536 \
		HEAPPROF_OUTPUT=$SCRATCH/git/g.%n.snap LD_PRELOAD=$PRELOAD \
		git -C "$SRC_DIR" log -p -n 600 >git.out 2>git.err
	echo $? >git.rc
	sleep 0.5
	end_writers >stuck
	test_case 'git under 10 ms intervals: every writer ends, no .part, exit never waits' '
		expect_eq "git status" 0 "$(cat git.rc)" &&
		expect_no_grep . git.err && expect_no_grep . stuck &&
		ls git >g.list && expect_no_grep "\.part$" g.list &&
		expect_num "snapshots kept" "$(wc -l <g.list)" -eq 2
	'
else
	skip_case 'git under 10 ms intervals: every writer ends' "$SRC_DIR is no git checkout"
fi
