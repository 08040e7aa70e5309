#!/bin/sh
# Blocks in anonymous memory the program made unreadable (mprotect PROT_NONE) are
# in heapprof's snapshots, as in the kernel's cores, and so in every report: a 1 MiB
# block fenced off, and the block only it points to.
. "$(dirname "$0")/lib.sh"

for mode in compact full; do
test_case "$mode snapshot: a PROT_NONE block and what it holds are reported" '
	HEAPPROF_AT_EXIT=1 HEAPPROF_SNAPSHOT='$mode' HEAPPROF_OUTPUT=pn.snap LD_PRELOAD=$PRELOAD \
		$PROGS/protnone 2>pn.err && test -f pn.snap &&
	heapprof-analyze --leaks=all -f collapsed $PROGS/protnone pn.snap >all.txt &&
	# the program'"'"'s own stacks (a sanitizer'"'"'s runtime has its own)
	grep ";main;" all.txt >pn.txt &&
	cat >want <<EOF2 &&
[still reachable];_start;__libc_start_main_impl;__libc_start_call_main;main;alloc_fenced 1048576
[still reachable];_start;__libc_start_main_impl;__libc_start_call_main;main;alloc_inside 48
EOF2
	expect_same want pn.txt &&
	# kept as the kernel keeps it: a segment without PF_R, its resident pages
	readelf -lW pn.snap | awk "/LOAD/ && \$7 !~ /R/ { n++ } END { exit n != 1 }" &&
	rm -f pn.snap
'
done
