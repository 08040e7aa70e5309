#!/bin/sh
# HEAPPROF_OOM: a program that leaks (progs/oomleak, 4 KiB blocks from leak_block) until
# its limit ends it leaves a complete snapshot, named .oom, taken before the end: in a
# memory cgroup of its own (when one can be made: root and a cgroup fs we may write),
# where the kernel's OOM killer ends it; under RLIMIT_AS, where malloc's NULL does,
# and the last snapshot, taken at that NULL, holds exactly what the program held.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/memcg.sh"
trap 'memcg_kill; memcg_drop; cleanup_all' EXIT

MIB=1048576
BLOCK=4096

# leak_bytes SNAP: the live bytes through leak_block in SNAP, with nothing on stderr
leak_bytes()
{
	heapprof-analyze -f collapsed $PROGS/oomleak "$1" >"$1.txt" 2>"$1.err" || {
		echo "heapprof-analyze failed on $1:" >&2
		show_file "$1.err" >&2
		return 1
	}
	[ ! -s "$1.err" ] || { echo "heapprof-analyze warned on $1:" >&2; show_file "$1.err" >&2; return 1; }
	bytes_for leak_block "$1.txt"
}

# held SNAP: the program's count of blocks held (oomleak's 'held') in SNAP, read by gdb
held()
{
	gdb -batch -ex 'print held' $PROGS/oomleak "$1" 2>/dev/null | sed -n 's/^\$1 = \([0-9]*\)$/\1/p'
}

# exact SNAP: the live bytes through leak_block in SNAP are exactly the blocks the program
# held then, or one more: the block being allocated when the snapshot was taken (inside
# malloc, once its header is written) is live but not yet counted
exact()
{
	_got=$(leak_bytes "$1") && _n=$(held "$1") && expect_num "$1: blocks held" "$_n" -gt 0 &&
	{ [ "$_got" = $((_n * BLOCK)) ] || [ "$_got" = $(((_n + 1) * BLOCK)) ] ||
		{ echo "$1: $_got live bytes through leak_block; the program held $_n blocks of $BLOCK" >&2; return 1; }; }
}

# between LO N HI: LO <= N <= HI, said when not
between()
{
	[ "$1" -le "$2" ] && [ "$2" -le "$3" ] || { echo "$2 is not in [$1, $3]" >&2; return 1; }
}

# only PREFIX SNAP...: the files here starting with PREFIX and ending in .snap, .oom or
# .part are exactly SNAP...
only()
{
	_p=$1
	shift
	for f; do echo "$f"; done | sort >want.files
	ls | grep -E "^$_p.*\.(snap|oom|part)$" | sort >got.files
	expect_same want.files got.files
}

# In a cgroup of 96 MiB: one snapshot at 95% of it, before the kill; the live bytes
# in it are the leak's, past 85% of the limit (the rest is the program's own, and
# heapprof's) and under the limit.
CG_LIMIT=$((96 * MIB))
if memcg_make $CG_LIMIT 2>memcg.why; then
	memcg_run env HEAPPROF_OOM=95 HEAPPROF_OUTPUT=leak.%n.snap LD_PRELOAD=$PRELOAD \
		$PROGS/oomleak -r 200 >cg.out 2>cg.err
	echo $? >cg.rc
	memcg_kills >cg.kills
	memcg_drop
	test_case "a memory cgroup ($MEMCG_KIND): the OOM kill leaves one complete .oom snapshot" '
		echo "137 1" >want && echo "$(cat cg.rc) $(cat cg.kills)" >got && expect_same want got &&
		only leak leak.1.oom.snap &&
		expect_grep "^heapprof: memory cgroup .* at 9[5-9]% of its limit ([0-9]* of $CG_LIMIT bytes): a snapshot$" cg.err &&
		expect_grep "^heapprof: snapshot .leak.1.oom.snap. written: " cg.err
	'
	test_case 'a memory cgroup: the snapshot holds the leak up to the line, exactly' '
		exact leak.1.oom.snap &&
		between $((CG_LIMIT / 100 * 85)) "$(leak_bytes leak.1.oom.snap)" $CG_LIMIT
	'
	# Up past the line (90 MB held, with malloc's and heapprof's share some 92 of 100),
	# all freed, then, once heapprof has seen the use fall, up again: a snapshot each
	# time.
	if memcg_make $((100 * 1000000)); then
		memcg_run env HEAPPROF_OOM=85 HEAPPROF_OUTPUT=again.%n.snap LD_PRELOAD=$PRELOAD \
			$PROGS/oomleak -r 0 -m 90 -f >again.out 2>again.err &
	fi
	test_case 'a memory cgroup: one snapshot per crossing, the next after the use fell' '
		wait_for grep -q "^freed$" again.out &&
		wait_for grep -q "^heapprof: memory use back below 80% of its limits: the next crossing of 85% takes a snapshot$" again.err &&
		kill -USR1 $(memcg_pids) &&
		wait_for grep -q "^ready$" again.out &&
		only again again.1.oom.snap again.2.oom.snap &&
		for n in 1 2; do
			exact again.$n.oom.snap &&
			between 75000000 "$(leak_bytes again.$n.oom.snap)" 90000000 || return 1
		done
	'
	memcg_kill
	wait 2>/dev/null
	memcg_drop
else
	skip_case 'a memory cgroup: the OOM kill leaves one complete .oom snapshot' "$(cat memcg.why)"
fi

# Under RLIMIT_AS of 128 MiB: the first snapshot at 95% of it, the last at the NULL,
# with every block the program held then; the NULL reaches the program (status 3),
# with errno ENOMEM.
# HEAPPROF_OUTPUT without .snap: ".oom" goes at the end.
AS=$((128 * MIB))
(ulimit -v $((AS / 1024)) && HEAPPROF_OOM=95 HEAPPROF_OUTPUT=as.%n LD_PRELOAD=$PRELOAD \
	exec $PROGS/oomleak -r 0) >as.out 2>as.err
echo $? >as.rc
test_case 'RLIMIT_AS: a snapshot at 95% of it, and the last at the NULL, exactly' '
	echo 3 >want && expect_same want as.rc && only as as.1.oom as.2.oom &&
	expect_grep "^heapprof: the address space at 9[5-9]% of RLIMIT_AS ([0-9]* of $AS bytes): a snapshot$" as.err &&
	expect_grep "^heapprof: an allocation of $BLOCK bytes failed: the address space at 1[0-9][0-9]% of RLIMIT_AS ([0-9]* of $AS bytes): a snapshot$" as.err &&
	expect_grep -x "out of memory after [0-9]* blocks" as.out &&
	n=$(sed -n "s/^out of memory after \([0-9]*\) blocks$/\1/p" as.out) &&
	echo $((n * BLOCK)) >want && leak_bytes as.2.oom >got && expect_same want got &&
	exact as.1.oom && first=$(leak_bytes as.1.oom) &&
	between $((AS / 100 * 75)) "$first" $((n * BLOCK))
'

# Below the line nothing is written, and the program runs as it would without us.
(ulimit -v $((AS / 1024)) && HEAPPROF_OOM=95 HEAPPROF_OUTPUT=low.%n.snap LD_PRELOAD=$PRELOAD \
	exec $PROGS/oomleak -r 0 -m 50) >low.out 2>low.err &
pid=$!
test_case 'below the line: no snapshot, nothing said' '
	wait_for grep -q "^ready$" low.out &&
	printf "held 12207 blocks\nready\n" >want && expect_same want low.out &&
	only low && expect_same /dev/null low.err
'
kill -9 $pid 2>/dev/null
wait 2>/dev/null

# No limit at all: one line says there is nothing to watch, and the program runs on.
HEAPPROF_OOM=95 LD_PRELOAD=$PRELOAD $PROGS/oomleak -r 0 -m 1 >none.out 2>none.err &
pid=$!
test_case 'no limit: one line says so' '
	wait_for grep -q "^ready$" none.out &&
	echo "heapprof: HEAPPROF_OOM: no memory limit to watch (no memory cgroup limit, no RLIMIT_AS)" >want &&
	expect_same want none.err
'
kill -9 $pid 2>/dev/null
wait 2>/dev/null
