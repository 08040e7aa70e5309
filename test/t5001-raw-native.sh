#!/bin/sh
# Raw mode on this host: [heap] and the anonymous mappings of a live program (where
# heapprof.so keeps its stack table) read from /proc/PID/mem,
# analyzed with --raw (plus --load-base for a PIE, --module for libsite.so) and no
# core: exact live bytes per function.
. "$(dirname "$0")/lib.sh"

# Big blocks are mmap'd and thread blocks sit in thread arenas, outside [heap]. Enough
# arenas that no thread falls back on the main one, whatever the number of CPUs.
export GLIBC_TUNABLES=glibc.malloc.arena_max=64

. "$TEST_DIR/helpers/sites.sh"

# mapping PID FIELD VALUE: "START END" (hex) of the first line of /proc/PID/maps whose
# FIELD (6: path) equals VALUE and whose file offset is 0
mapping()
{
	awk -v f="$2" -v v="$3" '$f == v && $3 ~ /^0+$/ { split($1, a, "-"); print a[1], a[2]; exit }' \
		"/proc/$1/maps"
}

# dump_mem PID PREFIX: copy [heap] to PREFIX.heap and every anonymous writable mapping
# (heapprof.so's stack table is in some of them) to PREFIX.N; prints the --raw options
dump_mem()
{
	awk '$1 ~ /-/ && ($6 == "[heap]" || ($2 == "rw-p" && NF == 5)) { split($1, a, "-"); print a[1], a[2], $6 }' \
		"/proc/$1/maps" >maps.$2 &&
	grep -q "\[heap\]" maps.$2 || { echo "no [heap] in /proc/$1/maps" >&2; return 1; }
	n=0
	while read -r start end name; do
		if [ "$name" = "[heap]" ]; then f=$2.heap; else f=$2.$n; n=$((n + 1)); fi
		[ $((0x$end - 0x$start)) -le $((256 << 20)) ] || continue
		dd if="/proc/$1/mem" of="$f" bs=4096 skip=$((0x$start / 4096)) \
			count=$(((0x$end - 0x$start) / 4096)) 2>dd.err || { cat dd.err >&2; return 1; }
		[ "$(wc -c <"$f")" -eq $((0x$end - 0x$start)) ] || { echo "short read of $f" >&2; return 1; }
		printf -- "--raw=%s@0x%s " "$f" "$start"
	done <maps.$2
}

# load_base PID FILE: where FILE's first mapping starts
load_base()
{
	set -- $(mapping "$1" 6 "$(readlink -f "$2")")
	[ -n "${1:-}" ] && echo "0x$1"
}

end_program()
{
	kill -9 "$PROG_PID" 2>/dev/null
	wait "$PROG_PID" 2>/dev/null
	PROG_PID=
}

test_case 'non-PIE: [heap] and anonymous mappings from /proc/PID/mem, --raw and --module, exact bytes' '
	run_preloaded $PROGS/sites-nopie $SITES &&
	raw=$(dump_mem $PROG_PID nopie) &&
	lib=$(load_base $PROG_PID $PROGS/libsite.so) &&
	end_program &&
	heapprof-analyze -f collapsed $raw --module $PROGS/libsite.so@$lib \
		$PROGS/sites-nopie >nopie.txt &&
	check_sites nopie.txt &&
	echo "$raw--module=$PROGS/libsite.so@$lib" >nopie.args
'

test_case 'PIE: --load-base from /proc/PID/maps, exact bytes' '
	run_preloaded $PROGS/sites $SITES &&
	raw=$(dump_mem $PROG_PID pie) &&
	base=$(load_base $PROG_PID $PROGS/sites) &&
	lib=$(load_base $PROG_PID $PROGS/libsite.so) &&
	end_program &&
	heapprof-analyze -f collapsed $raw --load-base=$base \
		--module=$PROGS/libsite.so@$lib $PROGS/sites >pie.txt &&
	check_sites pie.txt &&
	echo "$raw--load-base=$base --module=$PROGS/libsite.so@$lib" >pie.args
'

test_case 'raw text report: file:line, inline frames, module names, symbol source' '
	heapprof-analyze --top=0 $(cat pie.args) $PROGS/sites >pie.text &&
	grep -q "^  memory:     .*pie.heap@0x[0-9a-f]*.* (64-bit little-endian)\$" pie.text &&
	grep -q "^  symbols:    PROGRAM and --module\$" pie.text &&
	grep -q "site_small  .*sites.c:[0-9]" pie.text &&
	grep -q "inl_alloc (inlined)  .*sites.c:[0-9]" pie.text &&
	grep -q "lib_alloc  .*libsite.c:[0-9]*  (libsite.so)" pie.text
'

test_case 'stacks reach main: frames through libc are addresses, not guesses' '
	grep -q "^[^ ]*;main;do_arg;site_grow 25000\$" pie.txt &&
	grep -q "^[^ ]*;main;do_arg;site_lib;lib_alloc 2331\$" pie.txt
'

test_case 'a PIE without --load-base: a warning, the same bytes, no names' '
	heapprof-analyze -f collapsed $(sed "s/ --load-base=.*//" pie.args) \
		$PROGS/sites >bare.txt 2>bare.err &&
	grep -q "position-independent: without --load-base" bare.err &&
	! grep -q site_ bare.txt &&
	[ "$(awk "{ s += \$NF } END { print s }" bare.txt)" = \
	  "$(awk "{ s += \$NF } END { print s }" pie.txt)" ]
'

test_case 'without --module, lib_alloc stays an address under a named site_lib' '
	heapprof-analyze -f collapsed $(sed "s/ --module=[^ ]*//" nopie.args) $PROGS/sites-nopie \
		>nomod.txt 2>nomod.err &&
	expect_bytes lib_alloc 0 nomod.txt &&
	expect_bytes site_lib 2331 nomod.txt &&
	expect_bytes site_small 2000 nomod.txt
'

test_case 'the program dumps its own heap (sites-dump, as the qemu guests do)' '
	SITES_EXIT=1 SITES_DUMP=self LD_PRELOAD=$PRELOAD $PROGS/sites-dump $SITES >/dev/null &&
	grep -q -e "--raw=self.heap@0x[0-9a-f]* .*--load-base=0x[0-9a-f]* .*--module=.*/libsite.so@0x" \
		self.args &&
	heapprof-analyze -f collapsed $(cat self.args) $PROGS/sites-dump >self.txt &&
	check_sites self.txt
'
