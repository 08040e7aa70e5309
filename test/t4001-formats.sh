#!/bin/sh
# Report formats and the options that shape them, on one real core.
. "$(dirname "$0")/lib.sh"
need_tool gcore

test_case 'a core to report on' '
	run_preloaded $PROGS/sites small=5x1000 big=1x300000 zeroed=7x10 grow=2x3000 \
		dup=4x20 inl=3x64 thread=16x4096 &&
	take_core f.core
'

test_case 'collapsed: one "frames bytes" line per stack, totals match the text summary' '
	heapprof-analyze -f collapsed $PROGS/sites f.core >c.txt &&
	! grep -qv "^[^ ;][^;]*\\(;[^;]\\+\\)* [0-9]\\+\$" c.txt &&
	total=$(awk "{ t += \$NF } END { print t }" c.txt) &&
	heapprof-analyze --top=0 $PROGS/sites f.core >t.txt &&
	grep -q "live: .*($(printf "%s" "$total" | sed ":a;s/\\B[0-9]\\{3\\}\\>/,&/;ta") bytes)" t.txt &&
	test "$(grep -c "^#[0-9]" t.txt)" = "$(wc -l <c.txt)"
'

test_case 'stacks are sorted by live bytes, largest first' '
	awk "{ print \$NF }" c.txt >bytes && sort -rn bytes | cmp - bytes
'

test_case '--top=N keeps the N largest and says what it left out' '
	heapprof-analyze --top=2 $PROGS/sites f.core >top.txt &&
	test "$(grep -c "^#[0-9]" top.txt)" = 2 &&
	grep -q "more stacks hold .* bytes in .* blocks" top.txt &&
	heapprof-analyze -f collapsed --top=1 $PROGS/sites f.core >top1.txt &&
	test "$(wc -l <top1.txt)" = 1 && head -n 1 c.txt | cmp - top1.txt
'

test_case '--min-percent=P drops the small stacks' '
	heapprof-analyze -f collapsed --min-percent=50 $PROGS/sites f.core >big.txt &&
	test "$(wc -l <big.txt)" = 1 && grep -q ";site_big 300000\$" big.txt
'

test_case '-o FILE writes what stdout would get' '
	heapprof-analyze -f collapsed -o out.txt $PROGS/sites f.core && cmp out.txt c.txt
'

test_case 'the same core always gives the same bytes' '
	heapprof-analyze --top=0 $PROGS/sites f.core >t2.txt && cmp t.txt t2.txt &&
	heapprof-analyze -f collapsed -j1 $PROGS/sites f.core | cmp - c.txt
'

test_case 'an unwritable -o is one line and exit 2' '
	heapprof-analyze -o /nonexistent/dir/x $PROGS/sites f.core 2>err; rc=$?
	test $rc = 2 && test "$(wc -l <err)" = 1 && grep -q "^heapprof-analyze: cannot write" err
'
