#!/bin/sh
# --base on dumps whose stacks include [unknown stack] (no frames): the difference
# keeps them with their figures. Under SANITIZE=undefined this once stopped the run
# (a frameless stack's frames copied from NULL).
. "$(dirname "$0")/lib.sh"

CORES=$TEST_DIR/fuzz/seeds/core

test_case '--base with [unknown stack] on both sides, text and collapsed' '
	heapprof-analyze --base=$CORES/v2-sampled-w8le $PROGS/sites $CORES/v2-w8le >diff.txt 2>diff.err &&
	grep -A1 "^#2  -7,085 bytes  -1 blocks$" diff.txt >unknown.txt &&
	grep -q "\[unknown stack: no readable stack record\]" unknown.txt &&
	grep -q "change:     -4,921 bytes, +2 blocks; 2 stacks changed" diff.txt &&
	heapprof-analyze -f collapsed --base=$CORES/v2-w8le $PROGS/sites $CORES/v2-sampled-w8le \
		>diff.collapsed 2>>diff.err &&
	grep -q "^\[unknown stack\] 7085$" diff.collapsed
'
