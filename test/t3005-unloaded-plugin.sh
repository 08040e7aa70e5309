#!/bin/sh
# A plugin that allocated, then was dlclosed before the dump: its blocks are live, its
# code is gone from the core, and only heapprof's module record (path, build-id, old
# load bias) names its frames, from the file, from a debug file found by build-id, or
# not at all (a warning, the bytes still counted, the frames as addresses).
. "$(dirname "$0")/lib.sh"
need_tool gcore

cp "$PROGS/libplugin.so" libplugin.so
id=$(readelf -n libplugin.so | sed -n 's/.*Build ID: //p')

test_case 'a dlclosed plugin is named from its file, exact bytes' '
	run_preloaded $PROGS/plugin_host "$SCRATCH/libplugin.so" &&
	take_core plugin.core &&
	heapprof-analyze -f collapsed $PROGS/plugin_host plugin.core >plugin.txt 2>plugin.err &&
	cat plugin.txt plugin.err &&
	expect_bytes plugin_alloc 10000 plugin.txt &&
	expect_bytes plugin_alloc_big 5000 plugin.txt &&
	expect_grep ";main;plugin_run;plugin_alloc 10000\$" plugin.txt &&
	expect_no_grep "not symbolized" plugin.err
'

test_case 'the text report names the module as unloaded' '
	heapprof-analyze $PROGS/plugin_host plugin.core >plugin.text 2>/dev/null &&
	expect_grep "symbols: .*module records: $SCRATCH/libplugin.so (unloaded)" plugin.text &&
	expect_grep "plugin_alloc  .*libplugin.c:[0-9]*  (libplugin.so (unloaded))" plugin.text
'

test_case 'opened by a relative path: named from its file wherever the report is made' '
	run_preloaded $PROGS/plugin_host ./libplugin.so &&
	take_core relative.core &&
	mkdir -p elsewhere &&
	(cd elsewhere && heapprof-analyze -f collapsed $PROGS/plugin_host ../relative.core \
		>../relative.txt 2>../relative.err) &&
	cat relative.txt relative.err &&
	expect_grep ";main;plugin_run;plugin_alloc 10000\$" relative.txt &&
	expect_bytes plugin_alloc_big 5000 relative.txt &&
	expect_no_grep "not symbolized" relative.err
'

test_case 'file moved away: its debug file is found by build-id in --debug-dir' '
	test -n "$id" &&
	mkdir -p dbg/.build-id/${id%${id#??}} &&
	objcopy --only-keep-debug libplugin.so dbg/.build-id/${id%${id#??}}/${id#??}.debug &&
	mv libplugin.so moved.so &&
	heapprof-analyze -f collapsed --debug-dir dbg $PROGS/plugin_host plugin.core \
		>dbg.txt 2>dbg.err &&
	cat dbg.txt dbg.err &&
	expect_bytes plugin_alloc 10000 dbg.txt &&
	expect_bytes plugin_alloc_big 5000 dbg.txt &&
	expect_no_grep "not symbolized" dbg.err
'

test_case 'nothing found: a clear warning, bytes counted, frames as addresses' '
	heapprof-analyze -f collapsed $PROGS/plugin_host plugin.core >none.txt 2>none.err &&
	cat none.txt none.err &&
	expect_grep "frames in unloaded $SCRATCH/libplugin.so (build-id $id) not symbolized: file not found" none.err &&
	expect_no_grep plugin_alloc none.txt &&
	expect_grep ";main;0x[0-9a-f]*;0x[0-9a-f]* 10000\$" none.txt &&
	expect_grep ";main;0x[0-9a-f]*;0x[0-9a-f]* 5000\$" none.txt
'

test_case 'another file at the path, other build-id: not used, and said so' '
	cp $PROGS/libsite.so libplugin.so &&
	heapprof-analyze -f collapsed $PROGS/plugin_host plugin.core >other.txt 2>other.err &&
	cat other.err &&
	expect_grep "not symbolized: file not found (.*now has build-id" other.err &&
	expect_no_grep plugin_alloc other.txt &&
	rm libplugin.so
'

test_case 'a library loaded where the plugin was: the current one wins, with a warning' '
	mv moved.so libplugin.so &&
	run_preloaded $PROGS/plugin_host "$SCRATCH/libplugin.so" $PROGS/libsite.so &&
	take_core reuse.core &&
	heapprof-analyze -f collapsed $PROGS/plugin_host reuse.core >reuse.txt 2>reuse.err &&
	cat reuse.txt reuse.err &&
	if grep -q "had its code at .* where .* is now" reuse.err; then
		expect_no_grep plugin_alloc reuse.txt
	else
		# the loader put libsite.so elsewhere: nothing is ambiguous
		expect_bytes plugin_alloc 10000 reuse.txt
	fi
'
