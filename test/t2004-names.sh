#!/bin/sh
# Names: short_name() (--short-names) and the demangling of C++ and Rust names, in
# the unit program, then on the symbols of a real Rust program built by rustc with
# both of Rust's manglings (legacy _ZN...17h<hash>E and v0 _R...).
. "$(dirname "$0")/lib.sh"

run_tap names_test "$BUILD/unit/names_test"

if ! command -v rustc >/dev/null; then
	skip_case 'Rust symbols of a real program demangle' 'rustc is not installed (Debian rustc)'
	exit 0
fi

cat >hello.rs <<'RS'
pub struct Heap { v: Vec<u64> }
impl Heap {
    #[inline(never)]
    pub fn grow(&mut self, n: usize) { self.v.extend(std::iter::repeat(7).take(n)); }
}
#[inline(never)]
pub fn grow_vec(n: usize) -> Vec<u8> { vec![1; n] }
fn main() {
    let mut h = Heap { v: Vec::new() };
    h.grow(std::env::args().count());
    println!("{}", grow_vec(100).len() + h.v.len());
}
RS

# legacy is rustc's default (naming it needs -Z unstable-options on older releases)
for m in legacy v0; do
	flag=
	[ $m = v0 ] && flag="-C symbol-mangling-version=v0"
	test_case "Rust $m symbols of a real program demangle" '
		rustc -g '"$flag"' -o hello-'$m' hello.rs 2>rustc.err ||
			{ cat rustc.err; false; } &&
		nm hello-'$m' | awk "{ print \$NF }" | grep "grow" | grep "^_[RZ]" >syms &&
		[ "$(wc -l <syms)" -ge 2 ] &&
		"$BUILD/unit/names_test" --demangle $(cat syms) >names &&
		grep -qx "hello::grow_vec" names &&
		grep -qx "<\?hello::Heap>\?::grow" names &&
		! grep -q "^_[RZ]\|17h[0-9a-f]\{16\}" names
	'
done
