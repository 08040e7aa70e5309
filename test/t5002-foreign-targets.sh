#!/bin/sh
# Foreign targets for real: heapprof.so and the test programs cross-built by
# test/cross/cross.mk run under qemu-user; the guest's core (written by qemu) and raw
# images the guest writes itself are analyzed on this host, exact bytes per site. A
# target is skipped, and counted so, only when its cross build or qemu is missing.
. "$(dirname "$0")/lib.sh"

# ARCH QEMU SYSROOT LIBC_UNWINDS BITS PACKAGES. LIBC_UNWINDS: whether _Unwind_Backtrace
# gets through libc's own functions. Debian's mips and armhf glibc carry unwind tables
# only where C++ exceptions or cancellation need them (strdup has no FDE on mips and sits
# in an EXIDX_CANTUNWIND range on armhf), so a block strdup allocates shows strdup alone.
# BITS: the guest's word size (--memory reads glibc's arenas on 64-bit targets only).
TARGETS="s390x qemu-s390x /usr/s390x-linux-gnu yes 64 gcc-s390x-linux-gnu,libc6-dev-s390x-cross
mips qemu-mips /usr/mips-linux-gnu no 32 gcc-mips-linux-gnu,libc6-dev-mips-cross
armhf qemu-arm /usr/arm-linux-gnueabihf no 32 gcc-arm-linux-gnueabihf,libc6-dev-armhf-cross"

. "$TEST_DIR/helpers/sites.sh"

# guest PROG ARGS...: run a cross-built program under qemu-user with heapprof.so, in
# the current directory, where qemu writes the guest's core if it dies of a signal
guest()
{
	$QEMU -L "$SYSROOT" -E LD_PRELOAD="$CROSS/heapprof.so" \
		-E GLIBC_TUNABLES=glibc.malloc.arena_max=64 ${GUEST_ENV:-} "$@"
}

# core_of_abort: run sites until it aborts; prints the name of the guest core
core_of_abort()
{
	(ulimit -c unlimited && GUEST_ENV="-E SITES_ABORT=1" guest "$CROSS/progs/sites" $SITES \
		>sites.out 2>sites.err)
	# qemu 7.2 leaves a host core of itself beside the guest's: not ours to keep
	rm -f core core.[0-9]*
	set -- qemu_sites_*.core
	[ -f "$1" ] || { echo "no guest core (qemu_sites_*.core) written" >&2; cat sites.err >&2; return 1; }
	echo "$1"
}

# leaky's blocks per class in the guest's core: t3006's, but alloc_register's pointer
# never leaves its XORed form off x86_64 (no register root to test), so it is lost
leaky_classes "definitely lost" >leaky.expected

# arenas' blocks whose only pointers sit in free chunks or malloc's links (as t3007's)
arenas_lost >lost.expected

run_target()
{
	arch=$1 QEMU=$2 SYSROOT=$3 LIBC_UNWINDS=$4 BITS=$5 packages=$(echo "$6" | tr , ' ')
	CROSS=$BUILD/cross/$arch
	if ! [ -x "$CROSS/progs/sites" ] || ! [ -f "$CROSS/heapprof.so" ]; then
		skip_case "$arch: end to end under qemu" "no cross build in $CROSS (install $packages, then make check)"
		return
	fi
	if ! command -v "$QEMU" >/dev/null 2>&1 || ! [ -d "$SYSROOT" ]; then
		skip_case "$arch: end to end under qemu" "$QEMU or $SYSROOT missing (install qemu-user $packages)"
		return
	fi
	mkdir "$arch" && cd "$arch" || return
	if (ulimit -c unlimited) 2>/dev/null; then
		core_cases
		arena_cases
		static_case
		parts_case
	else
		skip_case "$arch: the guest's core" "cannot raise ulimit -c (hard limit $(ulimit -Hc))"
	fi
	raw_cases
	cd ..
}

# joined CORE: how many stack records in CORE are stored in parts (HP2_STACK_JOINED),
# in either byte order
joined()
{
	python3 - "$1" <<'EOF'
import struct, sys
data, n = open(sys.argv[1], "rb").read(), 0
for order in (">", "<"):
    magic = struct.pack(order + "Q", 0xA3E153544B563243)
    at = data.find(magic)
    while at >= 0:
        w2 = struct.unpack_from(order + "Q", data, at + 16)[0]
        if at % 8 == 0 and (w2 >> 48) & 0x8 and (w2 >> 56) in (4, 8):
            n += 1
        at = data.find(magic, at + 1)
print(n)
EOF
}

# Stacks of 1..60 levels of recursion from 4 threads at once: those past 16 words are
# stored in parts on the guest (its word size and byte order), read whole here
parts_case()
{
	test_case "$arch: stacks in parts (60 recursion depths, 4 threads): each whole, exact bytes" '
		(ulimit -c unlimited && exec $QEMU -L "$SYSROOT" -E LD_PRELOAD="$CROSS/heapprof.so" \
			"$CROSS/progs/stacktab" race 4 60 >st.out 2>st.err) &
		pid=$!
		{ wait_for grep -q "^ready\$" st.out; kill -ABRT $pid; wait $pid; }
		rm -f core core.[0-9]* && set -- qemu_stacktab_*.core && [ -f "$1" ] &&
		heapprof-analyze -f collapsed --sysroot $SYSROOT $CROSS/progs/stacktab "$1" \
			>st.txt 2>st.err &&
		expect_num "stacks through race_leaf" "$(grep -c ";race_leaf 64\$" st.txt)" -eq 60 &&
		expect_bytes race_leaf 3840 st.txt &&
		expect_num "joined stack records" "$(joined "$1")" -ge 40
	'
}

# the guest's core, written by qemu when sites aborts
core_cases()
{
	test_case "$arch: the guest's core under --sysroot: exact live bytes per call site" '
		core=$(core_of_abort) &&
		heapprof-analyze -f collapsed --sysroot $SYSROOT $CROSS/progs/sites $core >core.txt &&
		check_sites core.txt
	'

	test_case "$arch: libraries found by link_map and --sysroot: libc and ld.so named" '
		heapprof-analyze --top=0 --sysroot $SYSROOT $CROSS/progs/sites $(ls qemu_sites_*.core) \
			>core.text 2>core.err &&
		grep -q "^  symbols:    link_map in core memory\$" core.text &&
		grep -q "lib_alloc  .*libsite.c:[0-9]*  (libsite.so)" core.text &&
		grep -q "site_small  .*sites.c:[0-9]" core.text &&
		grep -Eq ";main;.*_IO_file_doallocate 4096\$|^(\\[truncated\\];)?_IO_file_doallocate 4096\$" core.txt &&
		grep -Eq "[( ]ld(64|-linux-armhf)?\\.so\\.[0-9]+(\\)|\\+0x)" core.text &&
		! grep -q "cannot find library" core.err
	'

	test_case "$arch: the innermost frame is the line of the call (Thumb bit or not)" '
		line=$(grep -n "p = realloc(p, size);" $TEST_DIR/progs/sites.c | cut -d: -f1) &&
		grep -q "site_grow  .*sites.c:$line\$" core.text
	'

	# the roots of a qemu core: its NT_PRSTATUS notes (one per guest thread) and all
	# guest memory outside blocks, the other threads' stacks and TLS included
	test_case "$arch: --leaks on the guest's core: every class, exact bytes per function" '
		(ulimit -c unlimited && guest $CROSS/progs/leaky abort >leaky.out 2>leaky.err)
		rm -f core core.[0-9]* &&
		set -- qemu_leaky_*.core && [ -f "$1" ] &&
		heapprof-analyze --leaks=definite,indirect,possible,reachable -f collapsed \
			--sysroot $SYSROOT $CROSS/progs/leaky $1 >leaks.txt &&
		by_class leaks.txt >got && expect_same ../leaky.expected got &&
		grep -q "^\[definitely lost\];.*main;make_lost;alloc_list_head 48\$" leaks.txt &&
		heapprof-analyze --leaks=all --top=0 --sysroot $SYSROOT $CROSS/progs/leaky $1 \
			>leaks.text 2>/dev/null &&
		grep -q "^  roots:      registers of 4 threads" leaks.text
	'
}

# sites linked statically with the target's libheapprof.a and the flags make
# print-static-ldflags gives for its compiler: on mips the archive's 64-bit atomics
# need libatomic, which those flags must name (or the cross build of make check fails).
# On s390x and mips such a program aborts at start under qemu (open): run where it works.
static_case()
{
	if [ "$arch" != armhf ]; then
		skip_case "$arch: static program: exact bytes per site" \
			"libheapprof.a aborts at start in a static program on this guest"
		return
	fi
	test_case "$arch: static program linked by print-static-ldflags: exact bytes per site" '
		(ulimit -c unlimited && GUEST_ENV="-E SITES_ABORT=1" guest $CROSS/progs/sites-static \
			$SITES >static.out 2>static.err)
		rm -f core core.[0-9]* &&
		set -- qemu_sites-static_*.core && [ -f "$1" ] && grep -q "^ready\$" static.out &&
		heapprof-analyze -f collapsed $CROSS/progs/sites-static $1 >static.txt &&
		check_sites static.txt
	'
}

# glibc's arenas read from the guest's core (alloc_glibc.c): a 64-bit guest's figures
# equal the mallinfo2() it printed just before it aborted; 32-bit glibc is not known,
# and the report says so in one line
arena_cases()
{
	test_case "$arch: --memory on the guest's core: glibc's arenas, or why not" '
		(ulimit -c unlimited && guest $CROSS/progs/arenas abort >arenas.out 2>arenas.err)
		rm -f core core.[0-9]* &&
		set -- qemu_arenas_*.core && [ -f "$1" ] && grep -q "^mallinfo2 " arenas.out &&
		heapprof-analyze --memory --top=1 --sysroot $SYSROOT $CROSS/progs/arenas $1 \
			>mem.txt 2>mem.err &&
		if [ "$BITS" = 64 ]; then
			heapprof-analyze --memory -f json --top=1 --sysroot $SYSROOT \
				$CROSS/progs/arenas $1 >mem.json 2>/dev/null &&
			grep -q "^  allocator:  glibc 2\.[0-9]*, 2 arenas in 2 heaps, 3 mmapped chunks\$" mem.txt &&
			expect_mallinfo mem.json arenas.out 0
		else
			grep -q "^  allocator:  not recognised (glibc on 32-bit targets is not known yet)\$" mem.txt
		fi
	'

	[ "$BITS" = 64 ] || return 0
	test_case "$arch: --leaks: pointers in the guest's free chunks and malloc links are no roots" '
		heapprof-analyze --leaks -f collapsed --sysroot $SYSROOT $CROSS/progs/arenas \
			qemu_arenas_*.core >lost.txt 2>/dev/null &&
		by_class lost.txt >got && expect_same ../lost.expected got
	'
}

# raw images the guest wrote itself
raw_cases()
{
	test_case "$arch: a raw heap image the guest dumped itself, --raw --load-base --module" '
		GUEST_ENV="-E SITES_EXIT=1 -E SITES_DUMP=guest" guest $CROSS/progs/sites-dump $SITES \
			>/dev/null &&
		heapprof-analyze -f collapsed $(cat guest.args) --sysroot $SYSROOT \
			$CROSS/progs/sites-dump >raw.txt &&
		check_sites raw.txt &&
		grep -q "^[^ ]*__libc_start_main;[^ ]*main;do_arg;site_small 2000\$" raw.txt
	'

	test_case "$arch: the PORTING.md example: a bump allocator's RAM image, exact bytes" '
		$QEMU -L $SYSROOT $CROSS/progs/firmware_example ram.bin >ram.out &&
		heapprof-analyze -f collapsed --raw ram.bin@$(sed -n "s/^ram //p" ram.out) \
			$CROSS/progs/firmware_example >ram.txt &&
		expect_bytes sensor_buffer 300 ram.txt &&
		expect_bytes packet_buffer 1000 ram.txt &&
		[ "$(awk "{ s += \$NF } END { print s }" ram.txt)" = 1300 ]
	'
}

while read -r line; do
	run_target $line
done <<EOF
$TARGETS
EOF
