#!/bin/sh
# The port of docs/PORTING.md: test/progs/firmware_example.c wraps a toy bump allocator
# with preload/hp_tag.c and writes its RAM image; raw mode must give its live bytes per
# function exactly. The document must show the code that runs, and hp_tag.c must build
# alone as plain C99 with every compiler at hand, needing at most <string.h>'s memcpy
# and memset (and _gp_disp, which the MIPS linker provides).
. "$(dirname "$0")/lib.sh"

test_case 'the example on this host: exact live bytes per function from its RAM image' '
	$PROGS/firmware_example ram.bin >ram.out &&
	addr=$(sed -n "s/^ram //p" ram.out) && [ -n "$addr" ] &&
	[ "$(wc -c <ram.bin)" = 65536 ] &&
	heapprof-analyze -f collapsed --raw ram.bin@$addr $PROGS/firmware_example >ram.txt &&
	expect_bytes sensor_buffer 300 ram.txt &&
	expect_bytes packet_buffer 1000 ram.txt &&
	[ "$(awk "{ s += \$NF } END { print s }" ram.txt)" = 1300 ]
'

test_case 'the frame-record walk reaches main and stops there' '
	[ "$(grep -c "^main;sensor_buffer 100\$" ram.txt)" = 3 ] &&
	grep -q "^main;packet_buffer 1000\$" ram.txt
'

test_case 'text report: file:line from the executable alone, the freed block gone' '
	heapprof-analyze --raw ram.bin@$(sed -n "s/^ram //p" ram.out) $PROGS/firmware_example \
		>ram.text &&
	grep -q "^  live:       1.3 KiB in 4 blocks (1,300 bytes)" ram.text &&
	grep -q "^  symbols:    PROGRAM only\$" ram.text &&
	grep -q "sensor_buffer  .*firmware_example.c:[0-9]" ram.text &&
	grep -q "main  .*firmware_example.c:[0-9]" ram.text
'

test_case 'docs/PORTING.md shows the code the tests run, line for line' '
	awk "/^## A minimal port/ { s = 1 } s && /^\`\`\`c\$/ { p = 1; next } p && /^\`\`\`\$/ { exit } p" \
		$SRC_DIR/docs/PORTING.md >doc.c &&
	[ "$(grep -c . doc.c)" -gt 40 ] &&
	! grep -vxF -f $SRC_DIR/test/progs/firmware_example.c doc.c
'

test_case 'hp_tag.c builds alone as C99 and needs no library, with every compiler here' '
	n=0 &&
	for c in cc s390x-linux-gnu-gcc mips-linux-gnu-gcc arm-linux-gnueabihf-gcc; do
		command -v $c >/dev/null 2>&1 || continue
		for o in -O0 -O2; do
			$c -std=c99 -pedantic -Wall -Wextra -Werror $o -I$SRC_DIR/include -c \
				$SRC_DIR/preload/hp_tag.c -o hp_tag.o &&
			readelf -sW hp_tag.o >syms &&
			! awk "\$7 == \"UND\" && \$8 != \"\" { print \$8 }" syms |
				grep -Evx "memcpy|memset|_gp_disp" || { echo "$c $o"; exit 1; }
		done
		n=$((n + 1))
	done &&
	[ $n -ge 1 ]
'
