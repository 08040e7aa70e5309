# The standard workload of test/progs/sites.c and the exact totals it must give.
# Sourced after lib.sh by every script that runs it (native, raw, foreign targets).

SITES="small=3x1000 free-small=1 big=2x300000 zeroed=4x333 tmp=10x500 free-tmp=10
	grow=5x5000 aligned=3x100 pagealigned=2x5000 dup=3x50 inl=2x700 lib=3x777
	thread=800x100"

# check_dup REPORT BYTES: strdup's blocks under site_dup. With LIBC_UNWINDS=no (mips,
# armhf: Debian's glibc there has unwind tables only where C++ needs them) the stack
# cannot get out of strdup, which then stands alone, marked [truncated] where the
# unwinder can tell (ARM's never reaches strdup's frame; mips' takes it for the last).
check_dup()
{
	if [ "${LIBC_UNWINDS:-yes}" = yes ]; then
		expect_bytes site_dup "$2" "$1"
	else
		expect_bytes site_dup 0 "$1" && grep -Eq "^(\[truncated\];)?__strdup $2\$" "$1"
	fi
}

# the sites whose blocks all live in the main heap
check_common()
{
	expect_bytes site_small 2000 "$1" &&
	expect_bytes site_zeroed 1332 "$1" &&
	expect_bytes site_tmp 0 "$1" &&
	expect_bytes site_grow 25000 "$1" &&
	expect_bytes site_aligned 300 "$1" &&
	expect_bytes site_pagealigned 10000 "$1" &&
	check_dup "$1" 150 &&
	expect_bytes site_inl 1400 "$1" &&
	expect_bytes inl_alloc 1400 "$1" &&
	expect_bytes lib_alloc 2331 "$1"
}

# check_sites REPORT: the whole process (a core)
check_sites()
{
	check_common "$1" &&
	expect_bytes site_big 600000 "$1" &&
	expect_bytes site_thread 80000 "$1" &&
	expect_bytes thread_main 80000 "$1"
}
