#!/bin/sh
# What heapprof keeps resident for its tables: the unwinder's rule cache starts at 64 KiB
# in every mode and grows (to 256 KiB, then 1 MiB) only for a program with more than a
# thousand return addresses; the table of Python's code objects already named starts at
# 256 slots and doubles when half full, without naming one twice.
# Both modes still give exact bytes. heapprof.so does not load libm (half a MiB resident
# in a program that does not link it): its own -log and 1 - exp(-x) agree with libm's.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
need_tool readelf

SITES_PROG=$PROGS/sites

# memory: heapprof's own mappings by kind, from a snapshot at exit
own_kind() # SNAPSHOT KIND: the bytes --memory gives the kind, "none" when not listed
{
	heapprof-analyze --memory "$SITES_PROG" "$1" 2>/dev/null |
		sed -n "s/^    $2  *\([0-9,]*\) bytes$/\1/p" | tr -d , | grep . || echo none
}

for mode in sampled full; do
	case $mode in
	sampled) set -- HEAPPROF_SAMPLE=524288 HEAPPROF_SEED=1 ;;
	full) set -- HEAPPROF_NONE= ;;
	esac
	env "$@" HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$SCRATCH/$mode.snap SITES_EXIT=1 \
		LD_PRELOAD=$PRELOAD "$SITES_PROG" small=3x1000 big=1x4096 tmp=64x65536 >$mode.out 2>$mode.err
	echo $? >$mode.rc
	grep -v "^heapprof: snapshot .* written" $mode.err >$mode.rest
done

test_case 'sampled: the unwind rule cache is 64 KiB' '
	expect_eq "exit status" 0 "$(cat sampled.rc)" && expect_no_grep . sampled.rest &&
	expect_eq "unwind rule cache" 65536 "$(own_kind sampled.snap "unwind rule cache")"
'

test_case 'not sampled: the unwind rule cache is 64 KiB for a few stacks, bytes exact' '
	expect_eq "exit status" 0 "$(cat full.rc)" && expect_no_grep . full.rest &&
	expect_eq "unwind rule cache" 65536 "$(own_kind full.snap "unwind rule cache")" &&
	heapprof-analyze -f collapsed "$SITES_PROG" full.snap >c.txt &&
	expect_bytes site_small 3000 c.txt && expect_bytes site_big 4096 c.txt
'

# HEAPPROF_SAMPLE=1: every byte a sample point, walks on every call: the estimates are
# the exact bytes
test_case 'HEAPPROF_SAMPLE=1: 64 KiB of cache, exact bytes' '
	HEAPPROF_SAMPLE=1 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$SCRATCH/dense.snap SITES_EXIT=1 \
		LD_PRELOAD=$PRELOAD "$SITES_PROG" small=3x1000 big=1x4096 >dense.out 2>dense.err &&
	expect_eq "unwind rule cache" 65536 "$(own_kind dense.snap "unwind rule cache")" &&
	heapprof-analyze -f collapsed "$SITES_PROG" dense.snap >d.txt &&
	expect_bytes site_small 3000 d.txt && expect_bytes site_big 4096 d.txt
'

# 8192 return addresses: the table grows when a quarter of its slots' worth of
# addresses came in, from 4K slots to 16K at the 1024th, to 64K at the 4096th; the
# smaller ones stay mapped, their pages given back. Every block is still on its own
# stack. 1,000 addresses stay in the first table.
test_case 'the unwind rule cache grows for 8192 return addresses, not for 1000' '
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$SCRATCH/pcs1k.snap LD_PRELOAD=$PRELOAD \
		"$PROGS/manypcs" 1000 >pcs1k.out 2>pcs1k.err &&
	expect_eq "unwind rule cache, 1000 addresses" 65536 \
		"$(own_kind pcs1k.snap "unwind rule cache")" &&
	HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=$SCRATCH/pcs.snap LD_PRELOAD=$PRELOAD \
		"$PROGS/manypcs" 8192 >pcs.out 2>pcs.err &&
	expect_eq "unwind rule cache, three tables" $((65536 + 262144 + 1048576)) \
		"$(own_kind pcs.snap "unwind rule cache")" &&
	heapprof-analyze -f collapsed --metric=alloc_objects "$PROGS/manypcs" pcs.snap >pcs.txt &&
	expect_num "stacks through site" "$(grep -c ";site;leaf " pcs.txt)" -eq 8192
'

# 3000 code objects: the table grows from 256 slots to 8192, moving the keys named so
# far each time; each is named once, by its own name, and found again at the second pass
py=$(python_path 3.11)
if [ -z "$py" ]; then
	skip_case "python: 3000 code objects as the table grows, each named once" "no python 3.11"
else
	test_case "python: 3000 code objects as the table grows, each named once" '
		"$py" "$TEST_DIR/helpers/python_many_codes.py" "$PROGS/libpycapture.so" 3000 \
			>codes 2>codes.err && expect_no_grep . codes.err &&
		awk "\$2 != \"code_\" substr(\$2, 6) || \$2 !~ /^code_[0-9]+\$/ { print \"bad name: \" \$0 }" \
			codes >bad && expect_no_grep . bad &&
		grep "^pass1 " codes | cut -d" " -f2,3 | sort >p1 &&
		grep "^pass2 " codes | cut -d" " -f2,3 | sort >p2 &&
		expect_num "functions" "$(wc -l <p1)" -eq 3000 && expect_same p1 p2 &&
		expect_num "distinct records" "$(cut -d" " -f2 p1 | sort -u | wc -l)" -eq 3000
	'
fi


test_case 'heapprof.so does not need libm' '
	readelf -d "$PRELOAD" | sed -n "s/.*(NEEDED).*\[\(.*\)\]/\1/p" >needed &&
	expect_grep "^libc\.so" needed && expect_no_grep "^libm\." needed
'

# 10^6 draws of each: the sample intervals and the weights heapprof makes from them
# are those libm would give, to the last byte
test_case 'sampling math without libm: the same intervals and weights as libm'"'"'s' '
	"$PROGS/sample_math" 1000000 >math &&
	printf "%s\n" "intervals differing 0" "weights differing 0" >want &&
	sed -n "s/.*, \(.*differing [0-9]*\)$/\1/p" math >got && expect_same want got &&
	awk "{ e = \$5 + 0; if (e > 1e-14) print \"error too large: \" \$0 }" math >bad &&
	expect_no_grep . bad
'
