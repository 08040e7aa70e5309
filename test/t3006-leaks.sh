#!/bin/sh
# Leaks by reachability (--leaks): memcheck's four classes from a gcore of a running
# program, exact bytes per allocating function per class, agreement with valgrind
# memcheck at the same point of the same program, --fail-on-leak, suppressions, and
# hostile heaps (pointer-dense, many blocks, cycles) in bounded time.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# the register case keeps its pointer in rbx only on x86_64
case $(uname -m) in
x86_64) leaky_classes "still reachable" >expected ;;
*)	leaky_classes >expected ;;
esac

test_case 'every class: exact bytes per allocating function' '
	run_preloaded $PROGS/leaky &&
	take_core leaky.core &&
	heapprof-analyze --leaks=all -f collapsed $PROGS/leaky leaky.core >all.txt &&
	by_class all.txt | grep -v "alloc_register" >got &&
	grep -v alloc_register expected >want &&
	expect_same want got &&
	if [ "$(uname -m)" = x86_64 ]; then
		expect_grep "^\[still reachable\];.*register_thread;alloc_register 112\$" all.txt
	fi
'

test_case '--leaks shows lost blocks only, in text and collapsed' '
	heapprof-analyze --leaks -f collapsed $PROGS/leaky leaky.core >lost.txt &&
	! grep -v "^\[definitely lost\];\|^\[indirectly lost\];" lost.txt &&
	by_class lost.txt >got &&
	grep "^definitely\|^indirectly" expected >want && expect_same want got &&
	heapprof-analyze --leaks --top=0 $PROGS/leaky leaky.core >lost.text &&
	expect_grep "^LEAK SUMMARY:" lost.text &&
	expect_grep "definitely lost: 432 bytes in 5 blocks" lost.text &&
	expect_grep "indirectly lost: 208 bytes in 7 blocks" lost.text &&
	expect_grep "possibly lost: .* (not shown)" lost.text &&
	expect_grep "are definitely lost" lost.text && expect_grep "are indirectly lost" lost.text &&
	expect_no_grep "are possibly lost\|are still reachable" lost.text &&
	expect_grep "alloc_list_head  .*leaky.c:[0-9]" lost.text
'

test_case '--leaks=possible,reachable' '
	heapprof-analyze --leaks=possible,reachable -f collapsed $PROGS/leaky leaky.core >pr.txt &&
	! grep -v "^\[possibly lost\];\|^\[still reachable\];" pr.txt &&
	expect_grep "alloc_interior_child 56\$" pr.txt &&
	heapprof-analyze --leaks=bogus $PROGS/leaky leaky.core 2>err; [ $? = 64 ]
'

test_case '--fail-on-leak: status 3 with definitely lost blocks, 0 without' '
	heapprof-analyze --fail-on-leak -o /dev/null $PROGS/leaky leaky.core; [ $? = 3 ] &&
	printf "leak:alloc_plain\nleak:alloc_list_head\nleak:^alloc_cyc*\$\nleak:alloc_readonly\n" >supp &&
	heapprof-analyze --fail-on-leak --suppressions=supp -o /dev/null $PROGS/leaky leaky.core
'

test_case 'suppressions: LeakSanitizer leak: patterns on function, file, module' '
	printf "# known\nleak:alloc_plain\n\nleak:*list_he*\n" >supp1 &&
	heapprof-analyze --leaks --suppressions=supp1 -f collapsed $PROGS/leaky leaky.core >s1.txt &&
	expect_no_grep "alloc_plain\|alloc_list_head" s1.txt && expect_grep alloc_cycle s1.txt &&
	heapprof-analyze --leaks --suppressions=supp1 $PROGS/leaky leaky.core >s1.text &&
	expect_grep "suppressed: 384 bytes in 8 blocks (2 of 2 patterns matched)" s1.text &&
	echo "leak:leaky.c" >supp2 &&
	heapprof-analyze --leaks=all --suppressions=supp2 -f collapsed $PROGS/leaky leaky.core >s2.txt &&
	expect_no_grep alloc_ s2.txt &&
	echo "leak:leaky\$" >supp3 &&
	heapprof-analyze --leaks --suppressions=supp3 -f collapsed $PROGS/leaky leaky.core >s3.txt &&
	expect_no_grep alloc_ s3.txt &&
	echo "leak:^plain" >supp4 &&
	heapprof-analyze --leaks --suppressions=supp4 -f collapsed $PROGS/leaky leaky.core >s4.txt &&
	expect_grep alloc_plain s4.txt &&
	echo "race:foo" >bad &&
	heapprof-analyze --leaks --suppressions=bad $PROGS/leaky leaky.core 2>err; [ $? = 2 ] &&
	expect_grep "bad:1: not a suppression" err
'

test_case 'suppressions: a suppressed leak hides the blocks only it holds, as LeakSanitizer' '
	# the list head suppressed: its 5 nodes (indirectly lost) go with it
	expect_no_grep alloc_list_node s1.txt &&
	expect_grep "^  indirectly lost: 48 bytes in 2 blocks" s1.text &&
	echo "leak:alloc_interior\$" >supp5 &&
	heapprof-analyze --leaks=all --suppressions=supp5 -f collapsed $PROGS/leaky leaky.core >s5.txt &&
	expect_no_grep alloc_interior s5.txt && expect_grep alloc_plain s5.txt &&
	heapprof-analyze --leaks=all --suppressions=supp5 $PROGS/leaky leaky.core >s5.text &&
	expect_grep "suppressed: 256 bytes in 2 blocks (1 of 1 patterns matched)" s5.text
'

test_case 'suppressions: a module by the path the core records, or its file name' '
	ln -s $PROGS/leaky renamed &&
	echo "leak:^leaky\$" >supp6 &&
	heapprof-analyze --leaks --suppressions=supp6 -f collapsed ./renamed leaky.core >s6.txt &&
	expect_no_grep alloc_ s6.txt &&
	echo "leak:^$PROGS/leaky\$" >supp7 &&
	heapprof-analyze --leaks --suppressions=supp7 -f collapsed ./renamed leaky.core >s7.txt &&
	expect_no_grep alloc_ s7.txt
'

if command -v valgrind >/dev/null 2>&1 && [ -n "$(valgrind --version 2>/dev/null)" ]; then
test_case 'agrees with valgrind memcheck per allocating function' '
	valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none \
		--run-libc-freeres=no --log-file=vg.log $PROGS/leaky memcheck &&
	awk "/LEAK SUMMARY/ { exit }
		/bytes in .* blocks are / { b = \$2; if (\$3 ~ /^\(/) { b = substr(\$3, 2) }
			c = \$0; sub(/.* blocks are /, \"\", c); sub(/ in loss record.*/, \"\", c); want = 1; next }
		want && / by 0x/ { f = \$4; if (f ~ /^alloc_/) { t[c \" \" f] += b; want = 0 } }
		END { for (x in t) print x, t[x] }" vg.log | sort >memcheck &&
	by_class all.txt >ours &&
	expect_same memcheck ours
'
else
skip_case 'agrees with valgrind memcheck per allocating function' 'valgrind is not installed'
fi

test_case 'hostile: 200,000 pointer-dense blocks in cycles, bounded time' '
	run_preloaded $PROGS/leaky dense 200000 &&
	take_core dense.core &&
	timeout 120 heapprof-analyze --leaks=all $PROGS/leaky dense.core >dense.text &&
	awk "/^  (definitely|indirectly|  possibly|still) / && / blocks/ { b = \$(NF - 1); gsub(\",\", \"\", b); n += b }
		END { exit !(n >= 200000) }" dense.text &&
	# the summary writes figures as the rest of the report does: 12,800,000, not 12800000
	expect_grep "^  [a-z ]*: [0-9]\{1,3\}\(,[0-9]\{3\}\)* bytes in [0-9,]* blocks" dense.text &&
	expect_no_grep "[0-9]\{4\} bytes\|[0-9]\{4\} blocks" dense.text &&
	timeout 120 heapprof-analyze --leaks -f collapsed $PROGS/leaky dense.core >dense.txt
'

test_case 'hostile: noise and forged blocks in a raw image' '
	$PROGS/mkdump -E prog.elf &&
	$PROGS/mkdump -R 7 -a 0x100000 -n 4194304 noise.img 0x100100:64 0x100200:1000000000 \
		0x100300:16 0x200000:32 &&
	timeout 60 heapprof-analyze -q --leaks=all --raw noise.img@0x100000 prog.elf >noise.text &&
	expect_grep "^LEAK SUMMARY:" noise.text &&
	$PROGS/mkdump -a 0x100000 -n 65536 zero.img 0x100100:64 0x100200:64 &&
	heapprof-analyze -q --leaks --fail-on-leak -f collapsed --raw zero.img@0x100000 prog.elf >z.txt;
	[ $? = 3 ] && [ $(wc -l <z.txt) -ge 1 ]
'
