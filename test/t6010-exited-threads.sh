#!/bin/sh
# Stacks of threads that have ended are no roots: glibc keeps them mapped for its next
# threads, with what the dead frames held. In an at-exit snapshot and in a gcore core,
# three blocks held only by locals of ended threads are definitely lost, as memcheck
# says; a return value left unread at pthread_join (in the thread's descriptor, which
# stays a root) and a live thread's local are still reachable.
. "$(dirname "$0")/lib.sh"

cat >want <<'EOF'
definitely lost alloc_local 303
still reachable alloc_alive 24
still reachable alloc_ret 48
EOF

classes() { heapprof-analyze --leaks=all -f collapsed "$1" "$2" >"$3.txt" && by_class "$3.txt" >"$3"; }

# vg_classes LOG: memcheck's loss records as by_class gives heapprof's: "class
# alloc_function bytes", for the records whose stack has an alloc_* function
vg_classes()
{
	awk '/ bytes in [0-9,]+ blocks are / { b = $2; gsub(",", "", b); c = $0
		sub(/.* blocks are /, "", c); sub(/ in loss record.*/, "", c); rec = 1; next }
	rec && / (at|by) 0x/ && match($0, /alloc_[a-z_]+/) {
		t[c " " substr($0, RSTART, RLENGTH)] += b; rec = 0 }
	/^==[0-9]+== *$/ { rec = 0 }
	END { for (x in t) print x, t[x] }' "$1" | sort
}

test_case 'at-exit snapshot: the ended threads'"'"' stacks are no roots, the live one'"'"'s is' '
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=exit.snap LD_PRELOAD=$PRELOAD $PROGS/threadexit 2>exit.err &&
	classes $PROGS/threadexit exit.snap exit.classes && expect_same want exit.classes &&
	heapprof-analyze --leaks $PROGS/threadexit exit.snap >exit.txt &&
	grep -q "^  exited:     3 stacks of exited threads" exit.txt
'

if command -v gcore >/dev/null; then
	test_case 'gcore core: the same' '
		run_preloaded $PROGS/threadexit wait && take_core gc.core &&
		classes $PROGS/threadexit gc.core gc.classes && expect_same want gc.classes
	'
else
	skip_case 'gcore core: the same' 'gcore is not installed'
fi

# patch SNAP OUT WHAT: OUT is SNAP with its threads note changed: "type" (another type,
# as older writers wrote none), "count" (one thread too many) or "tid" (its first id)
patch()
{
	python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b"HEAPPROF\0\0\0\0")
while i >= 0 and int.from_bytes(b[i - 4:i], "little") != 0x48500002:
    i = b.find(b"HEAPPROF\0\0\0\0", i + 1)
assert i > 0, "no threads note"
d = i + 12
if sys.argv[3] == "type":
    b[i - 4:i] = (0x48500009).to_bytes(4, "little")
else:
    o = d if sys.argv[3] == "count" else d + 8
    b[o:o + 4] = (int.from_bytes(b[o:o + 4], "little") + 1).to_bytes(4, "little")
open(sys.argv[2], "wb").write(b)
' "$@"
}

# without a whole list of threads no stack is taken for an ended thread's
test_case 'a snapshot that does not say it lists every thread keeps every stack a root' '
	for what in type count tid; do
		patch exit.snap $what.snap $what &&
		heapprof-analyze --leaks $PROGS/threadexit $what.snap >$what.txt &&
		! grep "exited:" $what.txt || exit 1
	done
'

if command -v valgrind >/dev/null 2>&1 && [ -n "$(valgrind --version 2>/dev/null)" ]; then
	test_case 'memcheck: the same classes for the same blocks' '
		valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
			$PROGS/threadexit 2>vg.log && vg_classes vg.log >vg.classes && expect_same want vg.classes
	'
else
	skip_case 'memcheck: the same classes for the same blocks' 'valgrind is not installed'
fi
