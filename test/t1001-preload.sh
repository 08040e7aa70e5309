#!/bin/sh
# heapprof.so under real programs: correctness of the malloc family, every unwinder,
# the options, fork and exec, and programs whose output must not change.
. "$(dirname "$0")/lib.sh"

run() { LD_PRELOAD=$PRELOAD "$@"; }

test_case 'stress: 4 threads, every call, every block tagged and valid' '
	STRESS_HEADERS=1 run $PROGS/stress 4 200000 >out 2>err &&
	grep -q "4 threads x 200000 operations ok" out && ! test -s err
'

for mode in cfi fp libgcc; do
	test_case "stress with HEAPPROF_UNWIND=$mode" "
		HEAPPROF_UNWIND=$mode STRESS_HEADERS=1 run \$PROGS/stress 2 50000 >out 2>err &&
		grep -q 'operations ok' out && ! test -s err
	"
done

# Each thread's replay log (unwind.c) is ~280 KiB of address space: 2000 threads that
# kept theirs would add ~550 MiB. The program grows ~72 MiB without heapprof (glibc's
# arena for the threads and a cached stack), the same for 4000 threads as for 2000.
for mode in cfi fp; do
	test_case "2000 threads one after the other, HEAPPROF_UNWIND=$mode: their memory goes with them" "
		HEAPPROF_UNWIND=$mode run \$PROGS/thread_churn 2000 >out 2>err && ! test -s err &&
		before=\$(sed -n 's/.*VmSize \\([0-9]*\\) KiB before.*/\\1/p' out) &&
		after=\$(sed -n 's/.*KiB before, \\([0-9]*\\) KiB after/\\1/p' out) &&
		test -n \"\$before\" && test -n \"\$after\" &&
		test \$((after - before)) -lt 262144 || { cat out err; exit 1; }
	"
done

# A tag's word left in a register by the malloc family was saved on the stack by the
# program's next variadic call, where a scan took it for a damaged header (x86-64 and
# aarch64 clear the registers; elsewhere nothing is promised).
case $(uname -m) in
x86_64 | aarch64)
	test_case 'the malloc family leaves no tag word in a register for the program' '
		run $PROGS/regleak >out 2>err && tail -n 2 out >got &&
		printf "0 words\nok\n" >want && expect_same want got || { cat out err; false; }
	' ;;
*)
	skip_case 'the malloc family leaves no tag word in a register for the program' \
		"registers are cleared on x86-64 and aarch64 only" ;;
esac

test_case 'HEAPPROF_FRAMES=1 and =1024 work' '
	HEAPPROF_FRAMES=1 STRESS_HEADERS=1 run $PROGS/stress 2 20000 >/dev/null 2>err1 &&
	HEAPPROF_FRAMES=1024 STRESS_HEADERS=1 run $PROGS/stress 2 20000 >/dev/null 2>err64 &&
	! test -s err1 && ! test -s err64
'

test_case 'a bad HEAPPROF_FRAMES gives one warning and the default' '
	for v in 0 1025 abc -3 99999999999999999999999; do
		HEAPPROF_FRAMES=$v run sh -c "echo out" >out 2>err &&
		test "$(cat out)" = out &&
		test "$(wc -l <err)" = 1 &&
		grep -q "^heapprof: HEAPPROF_FRAMES=$v is not a number in 1..1024; using 128\$" err ||
		{ echo "value $v:"; cat err; exit 1; }
	done
'

test_case 'a bad HEAPPROF_UNWIND gives one warning' '
	HEAPPROF_UNWIND=bogus run sh -c "echo out" >out 2>err &&
	test "$(cat out)" = out && test "$(wc -l <err)" = 1 &&
	grep -q "^heapprof: .*bogus" err
'

test_case 'HEAPPROF_UNWIND=libunwind (dropped): one warning, the default, stress ok' '
	HEAPPROF_UNWIND=libunwind STRESS_HEADERS=1 run $PROGS/stress 2 20000 >out 2>err &&
	grep -q "operations ok" out && test "$(wc -l <err)" = 1 &&
	grep -q "^heapprof: HEAPPROF_UNWIND=libunwind: dropped .*README.*using the default\$" err
'

# ls lists its own descriptors: the same list with and without the preload
for mode in "" cfi fp libgcc libunwind; do
	test_case "no descriptor left open${mode:+ with HEAPPROF_UNWIND=$mode}" "
		ls /proc/self/fd >want &&
		HEAPPROF_UNWIND=$mode run ls /proc/self/fd >got 2>/dev/null &&
		expect_same want got
	"
done

test_case 'a non-PIE program holding malloc'"'"'s address: no false warning, blocks recorded' '
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=ptr.snap run $PROGS/mallocptr >out 2>err &&
	grep -q "^ok\$" out && ! grep -q "malloc is not heapprof" err &&
	heapprof-analyze -f collapsed $PROGS/mallocptr ptr.snap >ptr.txt &&
	expect_bytes alloc_through_pointer 100 ptr.txt
'

test_case 'nothing on stdout or stderr of a quiet program' '
	run /bin/true >out 2>err && ! test -s out && ! test -s err
'

test_case 'realloc stays in place when it can, and leaves no tag behind' '
	run $PROGS/realloc_check >out && grep -q "realloc ok" out
'

test_case 'fork, allocation in the child while a thread allocates, and exec' '
	run $PROGS/forker >out &&
	test "$(grep -c "^child ok\$" out)" = 20 && grep -q "^exec ok\$" out
'

# Issue 13: an unwinder that takes the loader's lock hangs a child forked meanwhile
for mode in cfi fp libgcc; do
	test_case "fork while threads dlopen, dlclose and allocate (HEAPPROF_UNWIND=$mode)" "
		HEAPPROF_UNWIND=$mode timeout 20 env LD_PRELOAD=\$PRELOAD \\
			\$PROGS/dlfork \$PROGS/libsite.so 20 >out 2>err &&
		grep -q '^20 forks ok\$' out && ! test -s err
	"
done

test_case 'C++: every form of new and delete' '
	SITES_EXIT=1 run $PROGS/cxx 3 >out && grep -q ready out
'

test_case 'python3 runs a script with unchanged output' '
	cat >script.py <<PY &&
d = {str(i): "v" * (i % 50) for i in range(100000)}
print(len(d), sum(len(v) for v in d.values()))
PY
	python3 script.py >want && run python3 script.py >got && expect_same want got
'

test_case 'gcc compiles a file (children inherit the preload)' '
	printf "#include <stdio.h>\nint main(void) { puts(\"built\"); return 0; }\n" >hello.c &&
	run gcc -O2 -o hello hello.c && test "$(./hello)" = built
'

test_case 'sort of a generated file' '
	awk "BEGIN { for (i = 0; i < 200000; i++) print (i * 7919) % 100003, i }" >in.txt &&
	sort in.txt >want && run sort in.txt >got && cmp want got
'

jemalloc=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1)
if [ -n "$jemalloc" ]; then
	test_case 'LD_PRELOAD="heapprof.so libjemalloc.so.2" uses jemalloc behind heapprof' '
		LD_PRELOAD="$PRELOAD $jemalloc" STRESS_HEADERS=1 $PROGS/stress 2 50000 >out &&
		grep -q "operations ok" out
	'
	# jemalloc keeps its thread state in initial-exec TLS: loaded by dlopen it needs
	# glibc to keep more static TLS in reserve, and without it heapprof says how.
	test_case 'HEAPPROF_ALLOCATOR loads a named allocator' '
		GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 HEAPPROF_ALLOCATOR=$jemalloc \
			STRESS_HEADERS=1 run $PROGS/stress 2 50000 >out 2>err &&
		grep -q "operations ok" out && ! test -s err &&
		HEAPPROF_ALLOCATOR=$jemalloc run sh -c "echo out" >out 2>err &&
		test "$(cat out)" = out && grep -q "optional_static_tls" err
	'
else
	skip_case 'heapprof.so in front of jemalloc' 'libjemalloc2 is not installed'
	skip_case 'HEAPPROF_ALLOCATOR loads a named allocator' 'libjemalloc2 is not installed'
fi

test_case 'HEAPPROF_ALLOCATOR naming a missing file warns once and goes on' '
	HEAPPROF_ALLOCATOR=/nonexistent.so run sh -c "echo out" >out 2>err &&
	test "$(cat out)" = out && test "$(wc -l <err)" = 1 && grep -q "^heapprof: HEAPPROF_ALLOCATOR" err
'

