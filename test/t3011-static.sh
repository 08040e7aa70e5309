#!/bin/sh
# Programs linked with libheapprof.a instead of preloaded: static glibc, and musl
# static and dynamic (musl-gcc). Exact live bytes per function from a gcore core and
# from a HEAPPROF_SIGNAL snapshot, threads, fork, the control API, HEAPPROF_AT_EXIT,
# and --leaks on a core that has no link map.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/sites.sh"

# run_linked PROG ARGS: start a program that carries heapprof itself (no preload),
# wait for its "ready"
run_linked()
{
	HP_PRELOAD=/nonexistent.so run_preloaded "$@" 2>/dev/null
}

collapsed() { heapprof-analyze -f collapsed "$@"; }

# wait_file FILE: until FILE exists, 10 s at most
wait_file()
{
	i=0
	while [ ! -f "$1" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "no $1 after 10 s" >&2; return 1; }
		sleep 0.1
	done
}

# static_cases NAME PROG DUP: the cases every flavour passes; DUP checks strdup's
# blocks: "site" (tagged, under site_dup: for musl's libc.a, which has no unwind
# tables, found by a stack scan) or "none" (a shared libc: its calls are its own)
static_cases()
{
	name=$1 prog=$PROGS/$2 dup=$3
	if command -v gcore >/dev/null; then
		test_case "$name: gcore core: exact bytes per function, threads included" '
			run_linked $prog $SITES && take_core $name.core &&
			collapsed $prog $name.core >$name.txt &&
			check_sites_dup $name.txt $dup &&
			! grep -q "heapprof\\|do_malloc\\|unwind_capture\\|__wrap_" $name.txt
		'
	else
		skip_case "$name: gcore core" 'gcore is not installed'
	fi
	test_case "$name: HEAPPROF_SIGNAL snapshot: the same exact bytes" '
		HEAPPROF_SIGNAL=USR2 run_linked $prog $SITES &&
		kill -USR2 $PROG_PID && wait_file heapprof.$PROG_PID.1.snap &&
		kill -9 $PROG_PID && wait $PROG_PID 2>/dev/null;
		collapsed $prog heapprof.$PROG_PID.1.snap >$name-sig.txt &&
		check_sites_dup $name-sig.txt $dup
	'
}

# check_sites_dup REPORT DUP: check_sites with strdup's blocks as DUP says
check_sites_dup()
{
	case $2 in
	site) check_sites "$1" ;;
	none) expect_bytes site_dup 0 "$1" && check_common_nodup "$1" &&
		expect_bytes site_big 600000 "$1" && expect_bytes site_thread 80000 "$1" ;;
	esac
}

check_common_nodup()
{
	expect_bytes site_small 2000 "$1" && expect_bytes site_zeroed 1332 "$1" &&
	expect_bytes site_tmp 0 "$1" && expect_bytes site_grow 25000 "$1" &&
	expect_bytes site_aligned 300 "$1" && expect_bytes site_pagealigned 10000 "$1" &&
	expect_bytes site_inl 1400 "$1" && expect_bytes inl_alloc 1400 "$1" &&
	expect_bytes lib_alloc 2331 "$1"
}

# fork, the API and HEAPPROF_AT_EXIT: PROG's name suffix (static, musl-static)
more_cases()
{
	sfx=$1
	test_case "$sfx: fork, allocation in the child while a thread allocates, and exec" '
		$PROGS/forker-$sfx >fork.out &&
		test "$(grep -c "^child ok\$" fork.out)" = 20 && grep -q "^exec ok\$" fork.out
	'
	test_case "$sfx: the control API: heapprof_snapshot, a thread switched off" '
		run_linked $PROGS/snapapi-$sfx api &&
		grep -q "^snapshot 0$" prog.out && wait_file heapprof.$PROG_PID.1.snap &&
		kill -9 $PROG_PID && wait $PROG_PID 2>/dev/null;
		collapsed $PROGS/snapapi-$sfx heapprof.$PROG_PID.1.snap >api-$sfx.txt &&
		expect_bytes site_outside 3000 api-$sfx.txt && expect_bytes site_region 1000 api-$sfx.txt &&
		expect_bytes site_untagged 0 api-$sfx.txt
	'
}

static_cases glibc-static sites-static site
more_cases static

test_case 'glibc static: HEAPPROF_AT_EXIT, what is live when the program ends' '
	SITES_EXIT=1 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=exit.snap $PROGS/sites-static $SITES \
		>/dev/null 2>exit.err &&
	test -f exit.snap && collapsed $PROGS/sites-static exit.snap >exit.txt &&
	check_sites exit.txt
'

test_case 'glibc static: calls made inside libc are tagged (stdio buffer, thread set-up)' '
	grep -q ";_IO_file_doallocate [0-9]" glibc-static.txt &&
	grep -q ";site_dup;[^;]*strdup 150\$" glibc-static.txt
'

# t3006's classes, alloc_register included (the static program is x86_64 only)
leaky_classes "still reachable" >leaky.classes
if command -v gcore >/dev/null; then
	test_case 'glibc static: --leaks on a core without a link map, every class' '
		run_linked $PROGS/leaky-static && take_core leaky.core &&
		heapprof-analyze --leaks=all -f collapsed $PROGS/leaky-static leaky.core >leaks.txt &&
		by_class leaks.txt >got &&
		expect_same leaky.classes got
	'
else
	skip_case 'glibc static: --leaks on a core without a link map' 'gcore is not installed'
fi

# getline_case PROG: lines longer than the buffer, through getline and getdelim
getline_case()
{
	test_case "$1: getline and getdelim grow a buffer of ours in a shared libc" '
		{ printf "%0300d\n%05000d\nshort\n" 0 0; printf "a;%0999d;" 0; } |
			$PROGS/'"$1"' >getline.out &&
		printf "301\n5001\n6\n2\n1000\n" >getline.want &&
		expect_same getline.want getline.out
	'
}
getline_case getline-linked

# an archive built with UBSan (make check SANITIZE=...) needs its runtime
san=
case ${SANITIZE:-} in *undefined*) san=-fsanitize=undefined ;; esac
test_case 'make install: pkg-config --static links a static program with the API' '
	make -s -C "$SRC_DIR" install B="$BUILD" PREFIX="$SCRATCH/inst" >/dev/null 2>&1 &&
	printf "#include <heapprof.h>\nint main(void) { return heapprof_snapshot(\"api.snap\"); }\n" >api.c &&
	${CC:-cc} -static $san -o api api.c \
		$(PKG_CONFIG_PATH=$SCRATCH/inst/lib/pkgconfig pkg-config --static --cflags --libs heapprof) &&
	./api 2>/dev/null && test -s api.snap && heapprof-analyze ./api api.snap >/dev/null
'

if [ -x "$PROGS/sites-musl-static" ]; then
	getline_case getline-musl
	static_cases musl-static sites-musl-static site
	more_cases musl-static
	if command -v gcore >/dev/null; then
		# libc_callers N LEN M: dup_strings calls strdup N times for LEN bytes each,
		# qsort calls cmp_alloc (777 bytes), open_files fopen()s M times
		test_case "musl-static: callers of a libc without unwind tables, found on the stack" '
			run_linked $PROGS/libc_callers-musl-static 7 40 3 &&
			take_core callers.core &&
			collapsed $PROGS/libc_callers-musl-static callers.core >callers.txt &&
			expect_bytes dup_strings 280 callers.txt && expect_bytes strdup 280 callers.txt &&
			expect_bytes sort_things 777 callers.txt && expect_bytes cmp_alloc 777 callers.txt &&
			fopen=$(bytes_for fopen callers.txt) && test "$fopen" -gt 0 &&
			expect_bytes open_files "$fopen" callers.txt &&
			expect_bytes main $((280 + 777 + fopen)) callers.txt &&
			! grep -q "truncated" callers.txt
		'
	else
		skip_case "musl-static: callers of a libc without unwind tables" "gcore is not installed"
	fi
	static_cases musl-dynamic sites-musl none
else
	skip_case 'musl static and dynamic' 'musl-gcc is not installed (scripts/install-deps --test)'
fi
