#!/bin/sh
# Anonymous mappings by stack (the map table, preload/maps.c; --memory, analyzer/maps.c):
# progs/maps maps rings and arenas from named functions, cuts holes in them, trims,
# shrinks and moves them with munmap and mremap, maps over one with MAP_FIXED, maps
# from a thread, through the raw system call and a file, and has glibc map a 2 MiB
# block: each function's bytes are exact, each range is one the process's own smaps
# shows, the raw mapping alone is of unknown origin, and malloc's chunk is not counted
# twice.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# the innermost map_* frame of each stack in --memory's text, its bytes and mappings
by_func()
{
	sed -n 's/^ *\([0-9,]*\) bytes in \([0-9,]*\) mappings: \(.*\)$/\1 \2 \3/p' "$1" | tr -d , |
		awk '{ for (i = 3; i <= NF; i++) if ($i ~ /^map_/) { f = $i; break }
			b[f] += $1; n[f] += $2 } END { for (f in b) print f, b[f], n[f] }' | sort
}

# the printed ranges of each function, summed, each one checked against smaps: inside
# one mapping of the process, an anonymous one
ranges_in_smaps()
{
	python3 - smaps prog.out <<-'PY' | sort
	import re, sys
	maps = []
	for line in open(sys.argv[1]):
	    m = re.match(r"([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+ *(.*)$", line)
	    if m:
	        path = m.group(3).strip()
	        maps.append((int(m.group(1), 16), int(m.group(2), 16),
	                     path == "" or path.startswith("/dev/zero")))
	total, bad = {}, 0
	for line in open(sys.argv[2]):
	    f = line.split()
	    if len(f) != 3 or not f[0].startswith("map_"):
	        continue
	    a, b = int(f[1], 16), int(f[2], 16)
	    if not any(lo <= a and b <= hi and anon for lo, hi, anon in maps):
	        print("%s %s-%s: not inside an anonymous mapping in smaps" % tuple(f), file=sys.stderr)
	        bad = 1
	    if f[0] != "map_raw":
	        total[f[0]] = total.get(f[0], 0) + b - a
	for k, v in total.items():
	    print(k, v)
	sys.exit(bad)
	PY
}

test_case 'each function'"'"'s mapped bytes are exact, after munmap, mremap and MAP_FIXED' '
	run_preloaded $PROGS/maps &&
	cat /proc/$PROG_PID/smaps >smaps &&
	take_core maps.core &&
	heapprof-analyze --memory --top=0 $PROGS/maps maps.core >mem.txt &&
	by_func mem.txt >got &&
	expect_same - got <<-EOF
	map_arena 3145728 2
	map_fixed 65536 1
	map_ring 524288 1
	map_shared 131072 1
	map_shrunk 131072 1
	map_thread 262144 1
	map_trimmed 786432 1
	EOF
'

test_case 'every range the program printed is an anonymous mapping in its smaps, bytes equal' '
	ranges_in_smaps >smaps_by_func &&
	awk "{ print \$1, \$2 }" got >got2 &&
	expect_same smaps_by_func got2
'

test_case 'the raw system call'"'"'s mapping is of unknown origin; malloc'"'"'s chunk is not the program'"'"'s' '
	heapprof-analyze --memory -f json --top=0 $PROGS/maps maps.core >mem.json &&
	json_valid mem.json &&
	mapped=$(sed -n "s/.*\"mappings\": {.*\"mapped\": \([0-9]*\),.*/\1/p" mem.json) &&
	other=$(sed -n "s/.*\"mappings\": {.*\"other\": \([0-9]*\)}.*/\1/p" mem.json) &&
	mmapped=$(sed -n "s/.*\"mappings\": {.*\"mmapped\": \([0-9]*\),.*/\1/p" mem.json) &&
	expect_eq "bytes mapped by the program in the dump" 5046272 "$mapped" &&
	expect_eq "bytes of the mmapped chunk" 2101248 "$mmapped" &&
	[ "$other" -ge 196608 ] && [ "$other" -le $((196608 + 4 * 4096)) ] ||
		{ echo "other anonymous: $other, expected the raw 196608 and at most 4 pages more" >&2; false; }
'

test_case 'program_bytes in JSON; the frames name the function' '
	expect_eq program_bytes 5046272 "$(jnum program_bytes mem.json)" &&
	grep -q "\"function\": \"map_arena\"" mem.json
'

# heapprof's own memory by what it holds, on a real Python program with its default
# allocator (test/helpers/python_real.py): every mapping of heapprof's says what it
# holds, the kinds add up to what --memory calls heapprof's own, the map table is the
# size its N makes it, and the headers are 16 bytes per tagged block found.
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
test_case 'heapprof'"'"'s own, by kind: the parts add up, the map table and the headers exact' '
	mkdir own && cd own &&
	HEAPPROF_MAPS=20000 run_preloaded $PY "$SRC_DIR/test/helpers/python_real.py" 3000 wait &&
	take_core py.core &&
	heapprof-analyze --memory -f json "$(readlink -f $PY)" py.core >py.json &&
	heapprof-analyze --memory "$(readlink -f $PY)" py.core >py.txt 2>/dev/null &&
	python3 "$SRC_DIR/test/helpers/own_memory.py" py.json py.txt 20000
'
