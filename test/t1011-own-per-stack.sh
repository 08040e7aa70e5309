#!/bin/sh
# What heapprof keeps per distinct stack in the full mode, on a core of a program of
# 131,073 distinct stacks (progs/manystacks 17, every block live): --memory's mapped
# bytes of heapprof's own tables by kind, divided by the stacks. Stacks are stored
# whole (HEAPPROF_STACK_PARTS=0): where parts end depends on the pcs, so on where
# the loader put the program, and the stack ids with them. A site record is 80
# bytes (96 before its links went into one word), a lookup directory holds a 4-byte
# reference per site id and stack id (an 8-byte pointer before), and the peak table's
# private index is 4 bytes a slot (16 before). The bytes stay exact.
. "$(dirname "$0")/lib.sh"
need_tool gcore

BITS=17
STACKS=131072	# the program's own; main's start-up adds a few
LIVE=$((STACKS * 16))	# 2^17 blocks of 16 bytes

# own KIND: the mapped bytes --memory gives heapprof's KIND, 0 when not listed
own()
{
	v=$(sed -n "s/^    $1  *\([0-9,]*\) bytes$/\1/p" memory.txt | tr -d ,)
	echo "${v:-0}"
}

test_case "manystacks $BITS: the core's bytes are exact" '
	HEAPPROF_STACK_PARTS=0 run_preloaded $PROGS/manystacks $BITS && take_core many.core &&
	heapprof-analyze --memory $PROGS/manystacks many.core >memory.txt 2>memory.err &&
	heapprof-analyze -f collapsed $PROGS/manystacks many.core >c.txt 2>c.err &&
	expect_bytes branch $LIVE c.txt &&
	expect_num "stacks through branch" "$(grep -c ";branch " c.txt)" -eq $STACKS
'

# 80 bytes a site, and a chunk of at most 1 MiB not yet used (and 64 bytes a chunk)
test_case 'site records: 80 bytes a stack, and the last chunk' '
	expect_num "site records" "$(own "site records")" -le $((STACKS * 80 + 1048576 + 65536))
'

# the sites' directory, 4 bytes a site id in pages of 16 KiB (the parts' is empty):
# 33 pages, 540,672 bytes (8 bytes an id before: 1,081,344)
test_case 'lookup directories: 4 bytes a site id' '
	expect_num "lookup directories" "$(own "lookup directories")" -le $((STACKS * 4 + 16384))
'

# two records of 24 bytes an entry, room for twice the stacks at most, and the index:
# 4 bytes a slot, 2 to 4 slots a stack: about 63 bytes a stack (83 with 16-byte slots)
test_case 'peak tables: records and a 4-byte index, at most 68 bytes a stack' '
	expect_num "peak tables" "$(own "peak tables")" -le $((STACKS * 68)) &&
	heapprof-analyze --peak -f collapsed $PROGS/manystacks many.core >peak.txt 2>peak.err &&
	total=$(sed -n "s/^heapprof-analyze: peak: \([0-9]*\) bytes.*/\1/p" peak.err) &&
	expect_eq "peak total, the sum of its stacks" "$total" \
		"$(awk "{ t += \$NF } END { print t }" peak.txt)" &&
	expect_no_grep "^\[peak table overflow\|^\[unknown stack\]" peak.txt
'
