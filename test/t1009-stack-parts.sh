#!/bin/sh
# Stacks in parts (HEAPPROF_STACK_PARTS, docs/FORMAT.md): a stack of more than 16 words is
# stored as parts that stacks sharing their outer frames share. The same program with
# parts and with whole records (HEAPPROF_STACK_PARTS=0) gives the same report, stack for
# stack and byte for byte, while its stack records (which progs/stacktab sums in its own
# memory, checked as a reader checks them) take far fewer bytes; no record is in its
# table twice though 8 threads insert the same stacks at once.
. "$(dirname "$0")/lib.sh"
need_tool gcore

ST=$PROGS/stacktab

# run_both NAME ARGS...: the program under both settings, a core and a collapsed report
# of each (NAME.0.txt, NAME.1.txt) and its record bytes (NAME.0.bytes, NAME.1.bytes)
run_both()
{
	name=$1
	shift
	for v in 0 1; do
		HEAPPROF_STACK_PARTS=$v run_preloaded $ST "$@" && take_core "$name.$v.core" &&
		! grep twice prog.err &&
		sed -n "s/^stack records: \([0-9]*\) bytes$/\1/p" prog.out >"$name.$v.bytes" &&
		heapprof-analyze -f collapsed $ST "$name.$v.core" >"$name.$v.txt" 2>"$name.$v.err" ||
			return 1
	done
}

test_case '100 recursion depths from 8 threads at once: the same report in under half the bytes' '
	run_both race race 8 100 &&
	expect_same race.0.txt race.1.txt &&
	expect_num "stacks through race_leaf" "$(grep -c ";race_leaf 128\$" race.1.txt)" -eq 100 &&
	expect_bytes race_leaf 12800 race.1.txt &&
	expect_no_grep "unknown stack" race.1.err &&
	whole=$(cat race.0.bytes) parts=$(cat race.1.bytes) &&
	echo "stack records: $whole bytes whole, $parts in parts" &&
	expect_num "bytes whole" "$whole" -gt 40000 &&
	expect_num "2 x bytes in parts" $((2 * parts)) -le "$whole"
'

test_case 'a 300-frame stack from main and from a thread: the same report, whole, exact bytes' '
	HEAPPROF_FRAMES=1024 run_both deep deep 300 &&
	expect_same deep.0.txt deep.1.txt &&
	expect_bytes deep_leaf 12000 deep.1.txt &&
	expect_num "deep_down frames" "$(grep " 4000\$" deep.1.txt | tr ";" "\n" | grep -c "^deep_down\$")" -eq 301
'

# The longest part of the table overwritten: parts are shared, so a damaged part costs
# every stack through it, and those alone; the total stays
test_case 'a damaged part: the stacks through it are [unknown stack], the total the same' '
	python3 - race.1.core bad.core <<-EOF &&
	import struct, sys
	data = bytearray(open(sys.argv[1], "rb").read())
	magic, best, most = struct.pack("<Q", 0xA3E153544B563243), -1, 0
	at = data.find(magic)
	while at >= 0:
	    w2 = struct.unpack_from("<Q", data, at + 16)[0]
	    if at % 8 == 0 and (w2 >> 48) & 0xFF == 0x4 and (w2 >> 32) & 0xFFFF > most:
	        best, most = at, (w2 >> 32) & 0xFFFF
	    at = data.find(magic, at + 1)
	if best < 0:
	    sys.exit("no part in the core")
	data[best + 40] ^= 0xFF      # the first word of the longest part
	open(sys.argv[2], "wb").write(data)
	EOF
	heapprof-analyze -f collapsed $ST bad.core >bad.txt 2>bad.err &&
	expect_eq "total" "$(awk "{ s += \$NF } END { print s }" race.1.txt)" \
		"$(awk "{ s += \$NF } END { print s }" bad.txt)" &&
	expect_grep "^\[unknown stack\] [1-9]" bad.txt &&
	expect_grep "name parts that are missing" bad.err
'
