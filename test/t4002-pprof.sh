#!/bin/sh
# The pprof encoder (analyzer/pprof.c) read back by the real pprof: Debian's
# golang-github-google-pprof-dev sources, built offline with Debian's Go. The unit
# program writes a fixed profile: main -> site_a 2 blocks / 2000 bytes; main -> site_b
# (inl_fill inlined) 1 / 4096; main -> site_b -> ns::holder<int>::grow 1 / 16.
. "$(dirname "$0")/lib.sh"

run_tap pprof_test "$BUILD/unit/pprof_test" profile.pb.gz

if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/github.com/google/pprof ]; then
	skip_case 'the real pprof reads the profile' \
		'go or pprof sources missing (scripts/install-deps --test: golang-go golang-github-google-pprof-dev)'
	exit 0
fi

# built once per build directory by have_pprof (test/lib.sh); the Go cache stays there
test_case 'pprof builds offline from the Debian sources' '
	have_pprof || { echo "$PPROF_WHY"; cat "$BUILD/pprof.log"; false; }
'

test_case 'pprof -raw: sample types, values, inline frames, mapping, comment' '
	"$PPROF" -raw profile.pb.gz >raw &&
	grep -q "^Comment: heapprof test profile" raw &&
	grep -q "^inuse_objects/count inuse_space/bytes\[dflt\]" raw &&
	grep -q "^ *2 *2000: 1 2 *\$" raw && grep -q "^ *1 *4096: 3 2 *\$" raw &&
	grep -q "^ *1 *16: 4 3 2 *\$" raw &&
	grep -A1 "^ *3: 0x401200 M=1 inl_fill fill.h:7" raw | grep -q "site_b prog.c:33" &&
	grep -q "0x400000/0x500000/0x0 /usr/bin/prog 0123abcd \[FN\]\[FL\]\[LN\]\[IN\]" raw
'

test_case 'pprof -top: exact totals in bytes and blocks, names as given' '
	"$PPROF" -top -nodefraction=0 -unit=B -sample_index=inuse_space profile.pb.gz >top &&
	grep -q "accounting for 6112B, 100% of 6112B total" top &&
	grep -q "4096B .* 4112B .* inl_fill (inline)\$" top &&
	grep -q "2000B .* site_a\$" top && grep -q " 6112B .* main\$" top &&
	grep -q "16B .* ns::holder<int>::grow(unsigned long)\$" top &&
	"$PPROF" -top -nodefraction=0 -sample_index=inuse_objects profile.pb.gz >objs &&
	grep -q "accounting for 4, 100% of 4 total" objs
'

test_case 'pprof -traces: each stack leaf first, inline frames in place' '
	"$PPROF" -traces -unit=B -sample_index=inuse_space profile.pb.gz >traces &&
	tr -s " " <traces | grep -A2 "^ *4096B inl_fill (inline)" | tr -d " " >t1 &&
	printf "4096Binl_fill(inline)\nsite_b\nmain\n" >e1 && expect_same e1 t1 &&
	tr -s " " <traces | grep -A4 "^ *16B ns::holder" | tr -d " " >t2 &&
	printf "16Bns::holder<int>::grow(unsignedlong)\ninl_fill(inline)\nsite_b\nmain\n-----------+-------------------------------------------------------\n" >e2 &&
	expect_same e2 t2
'
