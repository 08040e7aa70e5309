#!/bin/sh
# The layers (docs/STYLE.md's "a file includes what is below it"): the analyzer's writers
# print a report through report.h alone, its sections through the report's list; no
# two modules depend on each other, by #include or by a symbol one object takes from
# another, in the analyzer or in the preload. Modules as test/helpers/module-graph.py
# tells them (a package sharing a private header, like the sym_* or hooks_* files, is one).
. "$(dirname "$0")/lib.sh"
need_tool python3
need_tool nm

A=$SRC_DIR/analyzer
GRAPH="python3 $SRC_DIR/test/helpers/module-graph.py"

test_case 'writers include report.h and their own syntax helpers, no analysis' '
	for f in "$A"/out_*.c; do
		sed -n "s/^#include \"\(.*\)\"/\1/p" "$f" |
			grep -vx "report.h\|json.h\|fmt.h\|flame.h\|pprof.h\|util.h" |
			sed "s|^|${f##*/} includes |"
	done >found &&
	cat found && ! test -s found
'

test_case 'writers name no section: they loop over the report'"'"'s' '
	grep -n "r->\(leaks\|ages\|memory\|lifetimes\|why\|by\)\b" "$A"/out_*.c >found
	cat found && ! test -s found
'

test_case 'no cycle between the analyzer'"'"'s modules, by #include or by symbol' '
	$GRAPH --objects "$BUILD/analyzer" "$A" >out; rc=$?
	cat out && [ $rc = 0 ]
'

test_case 'glibc'"'"'s words stay in its reader: alloc.h'"'"'s are neutral' '
	grep -il "tcache\|fastbin\|mallinfo\|malloc_consolidate" "$A"/*.c "$A"/*.h |
		sed "s|.*/||" >found &&
	echo alloc_glibc.c >want && expect_same want found
'

test_case 'the glibc reader is a row of the allocator readers'"'"' table' '
	grep -l "alloc_glibc" "$A"/*.c "$A"/*.h | sed "s|.*/||" >found &&
	printf "%s\n" alloc.c alloc_glibc.c alloc_int.h >want && expect_same want found &&
	grep -A3 "readers\[\] = {" "$A/alloc.c" | grep -q "&alloc_glibc_reader,"
'

test_case 'the preload reaches Python through interp.h: interp_python.c is a row of interp.c'"'"'s table' '
	grep -l "python_init\|python_capture\|python_remember\|python_interp" \
		"$SRC_DIR"/preload/*.c "$SRC_DIR"/preload/*.h | sed "s|.*/||" | sort >found &&
	printf "%s\n" interp.c interp.h interp_python.c interp_python.h >want && expect_same want found &&
	grep -A2 "interps\[\] = {" "$SRC_DIR/preload/interp.c" | grep -q "&python_interp,"
'

# heapprof.so's objects, and heapprof-attach.so's (attach.c, hooks.c as it is built
# there); the names each exports (the libc's it stands in for: mmap, pthread_sigmask)
# are the C library's interface, no edge to the file that wraps them
test_case 'no cycle between the preload'"'"'s modules, by #include or by symbol' '
	$GRAPH --objects "$BUILD/preload" --exports "$BUILD/heapprof.so" "$SRC_DIR/preload" >out
	rc=$?
	$GRAPH --objects "$BUILD/attach" --exports "$BUILD/heapprof-attach.so" "$SRC_DIR/preload" >>out
	rc_attach=$?
	cat out && [ $rc = 0 ] && [ $rc_attach = 0 ]
'

# the check itself, on made-up trees: two modules including each other; two files of a
# package (sharing p_int.h) that do
mkdir -p cyc pkg
printf '#include "b.h"\n' >cyc/a.c && : >cyc/a.h
printf '#include "a.h"\n' >cyc/b.c && : >cyc/b.h
printf '#include "p_int.h"\n#include "p_x.h"\n' >pkg/p.c && : >pkg/p.h
printf '#include "p_int.h"\n#include "p.h"\n' >pkg/p_x.c && : >pkg/p_x.h && : >pkg/p_int.h

test_case 'the check finds a cycle of includes' '
	! $GRAPH cyc >out && echo "cycle: a, b: a -> b (include); b -> a (include)" >want &&
	expect_same want out
'

test_case 'the check takes files sharing a private header as one module' '
	$GRAPH pkg >out && ! test -s out
'
