#!/bin/sh
# glibc's arenas read from a core (alloc_glibc.c): --memory's figures against the
# mallinfo2() the program printed before it stopped (a fragmented main arena, a
# thread's arena, mmapped blocks) and against what malloc_trim(0) gave back in a
# forked copy; --leaks with lost blocks whose only pointers sit in
# free chunks or in malloc's links, as memcheck classes them; a damaged arena; an
# allocator not recognised; arena lists, heap chains and fastbins whose links the
# program made loop (test/progs/arena_links.c), each arena, heap and chunk walked once.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# mallinfo2's field from prog.out
mi()
{
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" prog.out
}

test_case '--memory: the allocator figures equal mallinfo2 within 1%' '
	run_preloaded $PROGS/arenas trim &&
	cp prog.out mallinfo.out &&
	take_core arenas.core &&
	heapprof-analyze --memory -f json --top=2 $PROGS/arenas arenas.core >mem.json &&
	grep -q "\"allocator\": {\"known\": true, \"name\": \"glibc 2\.[0-9]*\", \"arenas\": 2" mem.json &&
	expect_mallinfo mem.json mallinfo.out 1 &&
	[ "$(jnum mmapped_user_bytes mem.json)" = 3145728 ] &&
	json_valid mem.json
'

test_case '--memory: what malloc_trim(0) releases of the top, as a copy of the process saw' '
	[ "$(jnum trim_top_bytes mem.json)" = "$(mi arena_delta)" ] &&
	[ "$(jnum trim_pages_bytes mem.json)" -gt 0 ] &&
	[ "$(jnum trim_pages_bytes mem.json)" -lt "$(mi fordblks)" ]
'

test_case '--memory in text: mappings, mallinfo2, chunks by kind' '
	heapprof-analyze --memory --top=1 $PROGS/arenas arenas.core >mem.txt &&
	grep -q "^MEMORY (" mem.txt &&
	grep -q "^  allocator:  glibc 2\.[0-9]*, 2 arenas in 2 heaps, 3 mmapped chunks$" mem.txt &&
	grep -q "^  mallinfo2:  arena $(mi arena), uordblks $(mi uordblks), fordblks $(mi fordblks), hblks 3, hblkhd $(mi hblkhd)$" mem.txt &&
	grep -q "free in fastbins  *64 bytes in 1 chunks$" mem.txt &&
	grep -q "^  malloc_trim(0) would release [0-9,]* bytes: [0-9,]* in whole free pages, [0-9,]* of the main arena.s top$" mem.txt &&
	! grep -q "not walked" mem.txt
'

arenas_lost >lost.expected

test_case 'pointers in free chunks and malloc links are no roots: lost as memcheck says' '
	heapprof-analyze --leaks -f collapsed $PROGS/arenas arenas.core >lost.txt &&
	by_class lost.txt >got && expect_same lost.expected got &&
	heapprof-analyze --leaks $PROGS/arenas arenas.core >lost.text &&
	grep -q "definitely lost: 336 bytes in 21 blocks" lost.text &&
	grep -q "^  allocator:  glibc 2\.[0-9]*; [0-9,]* bytes of free chunks" lost.text
'

if command -v valgrind >/dev/null 2>&1 && [ -n "$(valgrind --version 2>/dev/null)" ]; then
test_case 'agrees with valgrind memcheck on the lost blocks' '
	valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none \
		--run-libc-freeres=no --log-file=vg.log $PROGS/arenas memcheck >/dev/null &&
	grep -q "definitely lost: 336 bytes in 21 blocks" vg.log &&
	awk "/LEAK SUMMARY/ { exit }
		/bytes in .* blocks are / { b = \$2; if (\$3 ~ /^\(/) { b = substr(\$3, 2) }
			c = \$0; sub(/.* blocks are /, \"\", c); sub(/ in loss record.*/, \"\", c); want = 1; next }
		want && / by 0x/ { f = \$4; if (f ~ /^alloc_/) { t[c \" \" f] += b; want = 0 } }
		END { for (x in t) print x, t[x] }" vg.log | grep "lost" | sort >memcheck &&
	expect_same memcheck got
'
else
skip_case 'agrees with valgrind memcheck on the lost blocks' 'valgrind is not installed'
fi

test_case 'a damaged arena: what was not walked is said, the report is still made' '
	run_preloaded $PROGS/arenas damage &&
	take_core damaged.core &&
	heapprof-analyze --memory --top=0 $PROGS/arenas damaged.core >dmg.txt &&
	grep -q "^  not walked: main arena: the chunk at 0x[0-9a-f]* has a bad size field 0x4141414141414141$" dmg.txt &&
	grep -q "^  not walked: [1-9][0-9,]* bytes of the heaps$" dmg.txt &&
	grep -q "alloc_kept" dmg.txt &&
	heapprof-analyze --leaks $PROGS/arenas damaged.core >dmg-leaks.txt &&
	grep -q "^LEAK SUMMARY:" dmg-leaks.txt
'

test_case 'an allocator not recognised: one line, everything else works' '
	heapprof-analyze --memory --leaks -q --sysroot=/nonexistent $PROGS/arenas arenas.core >norec.txt &&
	grep -q "^  allocator:  not recognised (no version: cannot open .*/nonexistent/.*libc.so.6.*)$" norec.txt &&
	grep -q "^LEAK SUMMARY:" norec.txt
'

# alinks MODE: test/progs/arena_links MODE's core in MODE.core, its mallinfo2 in MODE.out
alinks()
{
	run_preloaded $PROGS/arena_links "$1" && cp prog.out "$1.out" && take_core "$1.core"
}

# bounded ARGS...: heapprof-analyze --jobs=2 ARGS in 1 GiB of address space (not under
# the sanitizers, whose shadow takes more): a walk that repeats itself runs out of
# memory, not the machine. The arena-self core needs 2.4 GB when its arena is walked
# 1,023 times, 60 MB once. Two scan threads, whatever the CPUs: each thread's stack
# and malloc arena take address space too.
bounded()
{
	if [ -n "${SANITIZE:-}" ]; then
		heapprof-analyze --jobs=2 "$@"
	else
		(ulimit -v 1048576 && heapprof-analyze --jobs=2 "$@")
	fi
}

# loop_said FILE PATTERN: FILE's --memory and --leaks sections both say PATTERN
loop_said()
{
	n=$(grep -c "^  not walked: $2$" "$1")
	[ "$n" = 2 ] || { echo "expected twice in $1: not walked: $2 (got $n)"; cat "$1"; return 1; }
}

test_case 'an arena whose next link is itself: walked once, the loop said, memory bounded' '
	alinks arena-self &&
	bounded --memory -f json $PROGS/arena_links arena-self.core >self.json &&
	grep -q "\"allocator\": {\"known\": true, \"name\": \"glibc 2\.[0-9]*\", \"arenas\": 2" self.json &&
	expect_mallinfo self.json arena-self.out 0 &&
	bounded --memory --leaks --top=0 $PROGS/arena_links arena-self.core >self.txt &&
	grep -q "^  allocator:  glibc 2\.[0-9]*, 2 arenas in 2 heaps, 0 mmapped chunks$" self.txt &&
	loop_said self.txt "the arena list loops back from \(0x[0-9a-f]*\) to arena 1 at \1: each arena walked once"
'

test_case 'two arenas whose links lead to each other: each walked once' '
	alinks arena-pair &&
	bounded --memory -f json $PROGS/arena_links arena-pair.core >pair.json &&
	expect_mallinfo pair.json arena-pair.out 0 &&
	bounded --memory --leaks --top=0 $PROGS/arena_links arena-pair.core >pair.txt &&
	grep -q "^  allocator:  glibc 2\.[0-9]*, 3 arenas in 3 heaps, 0 mmapped chunks$" pair.txt &&
	loop_said pair.txt "the arena list loops back from 0x[0-9a-f]* to arena 1 at 0x[0-9a-f]*: each arena walked once"
'

test_case 'an arena link into a block of garbage: the arenas before it walked, the link said' '
	alinks arena-garbage &&
	bounded --memory -f json $PROGS/arena_links arena-garbage.core >garbage.json &&
	expect_mallinfo garbage.json arena-garbage.out 0 &&
	bounded --memory --leaks --top=0 $PROGS/arena_links arena-garbage.core >garbage.txt &&
	grep -q "^  allocator:  glibc 2\.[0-9]*, 2 arenas in 2 heaps, 0 mmapped chunks$" garbage.txt &&
	loop_said garbage.txt "arena 2: the link to 0x[0-9a-f]* leads to no arena"
'

test_case 'a heap whose prev link is itself: each heap walked once, the first one too' '
	alinks heap-self &&
	bounded --memory -f json $PROGS/arena_links heap-self.core >heap.json &&
	expect_mallinfo heap.json heap-self.out 0 &&
	bounded --memory --leaks --top=0 $PROGS/arena_links heap-self.core >heap.txt &&
	grep -q "^  allocator:  glibc 2\.[0-9]*, 2 arenas in 3 heaps, 0 mmapped chunks$" heap.txt &&
	loop_said heap.txt "arena 1 at 0x[0-9a-f]*: the heap chain loops back to the heap_info at 0x[0-9a-f]*: each heap walked once"
'

test_case 'a fastbin chunk whose link is itself: counted once, the loop said' '
	alinks fastbin-self &&
	bounded --memory -f json $PROGS/arena_links fastbin-self.core >fast.json &&
	expect_mallinfo fast.json fastbin-self.out 0 &&
	bounded --memory --leaks --top=0 $PROGS/arena_links fastbin-self.core >fast.txt &&
	grep -q "^    free in fastbins  *64 bytes in 1 chunks$" fast.txt &&
	loop_said fast.txt "fastbin 2 of arena 0x[0-9a-f]*: a link back to 0x[0-9a-f]*, a chunk in a list already: each chunk counted once"
'
