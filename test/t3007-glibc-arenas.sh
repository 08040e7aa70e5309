#!/bin/sh
# glibc's arenas read from a core (alloc_glibc.c): --leaks with lost blocks whose only
# pointers sit in free chunks or in malloc's links, as memcheck classes them; a
# damaged arena; an allocator not recognised.
. "$(dirname "$0")/lib.sh"
need_tool gcore

cat >lost.expected <<'EOF'
definitely lost alloc_below_top 8
definitely lost alloc_edge 136
definitely lost alloc_in_bin 56
definitely lost alloc_in_fastbin 72
definitely lost alloc_in_tcache 40
EOF

# class leaf bytes from a collapsed --leaks report, alloc_* leaves only
by_class()
{
	awk '{ n = split($0, a, " "); k = split(substr($0, 1, length($0) - length(a[n]) - 1), fr, ";");
		c = fr[1]; gsub(/^\[|\]$/, "", c); if (fr[k] ~ /^alloc_/) t[c " " fr[k]] += a[n] }
		END { for (x in t) print x, t[x] }' "$1" | sort
}

test_case 'pointers in free chunks and malloc links are no roots: lost as memcheck says' '
	run_preloaded $PROGS/arenas &&
	take_core arenas.core &&
	heapprof-analyze --leaks -f collapsed $PROGS/arenas arenas.core >lost.txt &&
	by_class lost.txt >got && expect_same lost.expected got &&
	heapprof-analyze --leaks $PROGS/arenas arenas.core >lost.text &&
	grep -q "definitely lost: 312 bytes in 20 blocks" lost.text &&
	grep -q "^  allocator:  glibc 2\.[0-9]*; [0-9]* bytes of free chunks" lost.text
'

if command -v valgrind >/dev/null 2>&1 && [ -n "$(valgrind --version 2>/dev/null)" ]; then
test_case 'agrees with valgrind memcheck on the lost blocks' '
	valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none \
		--run-libc-freeres=no --log-file=vg.log $PROGS/arenas memcheck >/dev/null &&
	grep -q "definitely lost: 312 bytes in 20 blocks" vg.log &&
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

test_case 'a damaged arena: the report is still made' '
	run_preloaded $PROGS/arenas damage &&
	take_core damaged.core &&
	heapprof-analyze --leaks $PROGS/arenas damaged.core >dmg-leaks.txt &&
	grep -q "^LEAK SUMMARY:" dmg-leaks.txt
'

test_case 'an allocator not recognised: one line, everything else works' '
	heapprof-analyze --leaks -q --sysroot=/nonexistent $PROGS/arenas arenas.core >norec.txt &&
	grep -q "^  allocator:  not recognised (no version: cannot open .*/nonexistent/.*libc.so.6.*)$" norec.txt &&
	grep -q "^LEAK SUMMARY:" norec.txt
'
