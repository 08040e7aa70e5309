#!/bin/sh
# The Rust global allocator (rust/heapprof): a program with
# `#[global_allocator] static A: heapprof::Heapprof`, dynamic and crt-static, gives
# exact live bytes per function, with Rust names demangled, from a gcore core and from
# HEAPPROF_AT_EXIT; the crate builds offline with cargo.
. "$(dirname "$0")/lib.sh"
# rustup's tools, where a developer has them; Debian's rustc is in PATH already
PATH=$PATH:${CARGO_HOME:-$HOME/.cargo}/bin
need_tool rustc
# rustc and cargo take make -j2's jobserver from MAKEFLAGS, whose pipe the tests do not get
unset MAKEFLAGS MFLAGS

RS=$TEST_DIR/rust
CRATE=$SRC_DIR/rust/heapprof

# the crate over the C core make built (libheapprof_rust.a), then the program
rustc --edition 2021 -C opt-level=2 -g --crate-type rlib --crate-name heapprof \
	"$CRATE/src/lib.rs" -L "native=$BUILD" -l static=heapprof_rust -o libheapprof.rlib ||
	{ echo "not ok - the crate does not build"; exit 1; }
# a core built with UBSan (make check SANITIZE=...) needs its runtime
san=
case ${SANITIZE:-} in *undefined*) san="-C link-arg=-lubsan" ;; esac
build_known()
{
	rustc --edition 2021 -C opt-level=2 -g "$@" $san --extern heapprof=libheapprof.rlib -L . \
		"$RS/known.rs"
}

# check_known REPORT: the bytes known.rs keeps, per function
check_known()
{
	expect_bytes known::site_vec 3000 "$1" &&
	expect_bytes known::site_boxed 1332 "$1" &&
	expect_bytes known::shapes::site_string 1400 "$1" &&
	expect_bytes known::site_aligned 300 "$1" &&
	# 50 x 100 and the Vec of their 50 (ptr, cap, len) triples
	expect_bytes known::site_thread 6200 "$1" &&
	! grep -q "_ZN\\|heapprof_rust_\\|do_malloc" "$1"
}

kinds="dynamic crt-static"
if [ -n "$san" ]; then
	kinds=dynamic
	skip_case 'crt-static under UBSan' 'its runtime does not start in a static Rust program'
fi
for kind in $kinds; do
	case $kind in
	dynamic) flags= ;;
	crt-static) flags="-C target-feature=+crt-static" ;;
	esac
	test_case "$kind: builds with the global allocator" "
		build_known $flags -o known-$kind &&
		if [ $kind = crt-static ]; then file known-$kind | grep -q 'static'; fi
	"
	if command -v gcore >/dev/null; then
		test_case "$kind: gcore core: exact bytes per function, names demangled" "
			HP_PRELOAD=/nonexistent.so run_preloaded ./known-$kind 2>/dev/null &&
			take_core $kind.core &&
			heapprof-analyze -f collapsed ./known-$kind $kind.core >$kind.txt &&
			check_known $kind.txt
		"
	else
		skip_case "$kind: gcore core" 'gcore is not installed'
	fi
	test_case "$kind: HEAPPROF_AT_EXIT: the same bytes" "
		HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$kind.snap ./known-$kind >/dev/null &&
		heapprof-analyze -f collapsed ./known-$kind $kind.snap >$kind-exit.txt &&
		check_known $kind-exit.txt
	"
done

if command -v cargo >/dev/null; then
	# a copy: cargo writes Cargo.lock next to the manifest
	test_case 'cargo builds the crate offline, its C core with it' '
		cp -r "$CRATE" crate && rm -f crate/Cargo.lock &&
		HEAPPROF_SRC=$SRC_DIR CARGO_TARGET_DIR=$SCRATCH/target cargo build --offline -q \
			--manifest-path crate/Cargo.toml &&
		ls "$SCRATCH"/target/debug/build/heapprof-*/out/libheapprof_rust.a >/dev/null
	'
else
	skip_case 'cargo builds the crate offline' 'cargo is not installed'
fi
