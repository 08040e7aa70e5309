#!/bin/sh
# Stacks of threads that have ended are no roots: glibc keeps them mapped for its next
# threads, with what the dead frames held. In a gcore core, three blocks held only by
# locals of ended threads are definitely lost, as memcheck says; a return value left
# unread at pthread_join (in the thread's descriptor, which stays a root) and a live
# thread's local are still reachable.
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

if command -v gcore >/dev/null; then
	test_case 'gcore core: the ended threads'"'"' stacks are no roots, the live one'"'"'s is' '
		run_preloaded $PROGS/threadexit wait && take_core gc.core &&
		classes $PROGS/threadexit gc.core gc.classes && expect_same want gc.classes
	'
else
	skip_case 'gcore core' 'gcore is not installed'
fi

if command -v valgrind >/dev/null 2>&1 && [ -n "$(valgrind --version 2>/dev/null)" ]; then
	test_case 'memcheck: the same classes for the same blocks' '
		valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
			$PROGS/threadexit 2>vg.log && vg_classes vg.log >vg.classes && expect_same want vg.classes
	'
else
	skip_case 'memcheck: the same classes for the same blocks' 'valgrind is not installed'
fi
