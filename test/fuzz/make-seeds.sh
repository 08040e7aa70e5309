#!/bin/sh
# Write the fuzzers' seed corpora, test/fuzz/seeds/{scan,core,graph}/ (committed; make fuzz
# and test/fuzz/smoke.sh read them): small raw images and synthetic ELF cores holding
# v1 and v2 blocks, records and slab tables for 64- and 32-bit, little- and big-endian targets,
# valid and spoilt, written by build/progs/mkdump (module records by seedgen.py), and
# a real core of progs/plugin_host under heapprof.so cut down to the pages holding
# heapprof's words (needs gcore); gzip, zstd and xz copies of three cores, one cut
# short; fuzz_graph's made-up arenas and graphs (graph_seeds, below). Usage:
# test/fuzz/make-seeds.sh [BUILD_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$here/../../build}
MKDUMP=$B/progs/mkdump
GEN="python3 $here/seedgen.py"
out=$here/seeds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$MKDUMP" ] || { echo "make-seeds: build $MKDUMP first (make check-build)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/scan" "$out/core" "$out/graph" "$out/fleet"

# seed NAME WSIZE BE ADDR MKDUMP-ARGS...: a raw image as both a scan and a core seed
seed()
{
	name=$1 w=$2 be=$3 addr=$4
	shift 4
	flag=
	[ "$be" = 1 ] && flag=-B
	"$MKDUMP" -w "$w" $flag -a "$addr" -n 1024 "$tmp/$name.bin" "$@"
	$GEN scan "$w" "$be" "$addr" "$tmp/$name.bin" "$out/scan/$name"
	$GEN core "$w" "$be" "$addr" "$tmp/$name.bin" "$out/core/$name"
}

for t in "8 0" "8 1" "4 0" "4 1"; do
	set -- $t
	w=$1 be=$2 tag=w$1$([ "$be" = 1 ] && echo be || echo le)
	a=0x10000
	seed "v1-$tag" "$w" "$be" $a 0x10100:1000:0x401000,0x402000 0x10200:24:0x401100 \
		0x10300:5:0x401000:check=bad 0x10380:7::version=9
	seed "v2-$tag" "$w" "$be" $a proc@0x10000 stack@0x10040:1:0x401000,0x402000 \
		site@0x10080:1:1:tid=7 v2@0x10110:100:1 v2@0x10210:2000:1:shift=3 \
		v2@0x10300:64:1:sampled v2@0x10340:8:2 v2@0x10380:9:1:check=bad
	seed "v2-sampled-$tag" "$w" "$be" $a proc@0x10000:period=4096 \
		stack@0x10040:3:0x401000:truncated site@0x10080:5:3 v2@0x10110:5000:5:sampled \
		stack@0x10200:3:0x401004 site@0x10240:6:9:check=bad v2@0x10310:1:6
	pool=$([ "$w" = 8 ] && echo 0x7f0000004000 || echo 0x40004000)
	seed "slab-$tag" "$w" "$be" $a proc@0x10000:period=4096 stack@0x10040:1:0x401000,0x402000 \
		site@0x10080:1:1 slab@0x10100:$pool:64:48/1,0,40/1/s,64/2,=0x8000000000000001 \
		slab@0x10200:$pool:16:16/1,16/1:check=bad slab@0x10280:$pool:0:1/1
	seed "mixed-$tag" "$w" "$be" $a proc@0x10000:version=3 0x10100:10:0x401000 \
		v2@0x10180:10:0 stack@0x10200:2:0x401000,0x401000:check=bad
	"$MKDUMP" -w "$w" $([ "$be" = 1 ] && echo -B) -a $a -n 1024 "$tmp/m.bin" \
		stack@0x10040:1:$([ "$w" = 8 ] && echo 0x7f0000001000 || echo 0x70001000) \
		site@0x10080:1:1 v2@0x10110:300:1
	$GEN module "$w" "$be" $a 0x10200 "$tmp/m.bin" "$tmp/mod.bin"
	$GEN scan "$w" "$be" $a "$tmp/mod.bin" "$out/scan/module-$tag"
	$GEN core "$w" "$be" $a "$tmp/mod.bin" "$out/core/module-$tag"
	$GEN maps "$w" "$be" $a 0x10180 "$tmp/m.bin" "$tmp/maps.bin"
	$GEN scan "$w" "$be" $a "$tmp/maps.bin" "$out/scan/maps-$tag"
	$GEN core "$w" "$be" $a "$tmp/maps.bin" "$out/core/maps-$tag"
done
# compressed cores: fuzz_core reads them as CORE is read, through source.c and spool.c
gzip -9 -n -c "$out/core/v2-w8le" >"$out/core/v2-w8le.gz"
zstd -q -19 -c "$out/core/v2-sampled-w4be" >"$out/core/v2-sampled-w4be.zst"
xz -9 -T1 -c "$out/core/v1-w8be" >"$out/core/v1-w8be.xz"
head -c 150 "$out/core/v2-w8le.gz" >"$out/core/v2-w8le-cut.gz"
# as heapprof report hands another user's snapshot over: fuzz_core reads an input of
# odd size on stdin under --max-size, 1.5 times its size (last byte 1) or half (0)
{ cat "$out/core/v2-w8le"; printf '\001'; } >"$out/core/v2-w8le-stdin"
{ cat "$out/core/v2-w8le"; printf '\000'; } >"$out/core/v2-w8le-over"
$GEN pyname "$out/scan/python-name-w8le"
# a stack with Python pairs and their name records (t2013's layout); first byte 0x2c:
# 64-bit little-endian, fuzz_scan's stack of five native words then pairs into the image
A=0xf17e000000000002 E=0xf17e000100000000
"$MKDUMP" -n 4096 "$tmp/py.bin" proc@0x10000 \
	"stack@0x10100:1:0x401184,0x4011a4,0x4011e4,0x4011a4,0x401064,$A,0x10800,$E,0x10900:python" \
	"pycode@0x10800:Cache.fill:a.py:10" "pycode@0x10900:run:a.py:20" \
	"pycode@0x10a00:bad:a.py:30:check=bad"
{ printf '\054\000\000\001\000\000\000\000\000'; cat "$tmp/py.bin"; } >"$out/scan/python-stack"
"$MKDUMP" -R 7 -n 512 "$tmp/noise.bin"
$GEN scan 8 0 0x10000 "$tmp/noise.bin" "$out/scan/noise"

# fuzz_graph: its first byte even, arenas (glibc 2.MINOR, arenas, heaps, chunk sizes,
# next and prev links: loops, garbage); odd, a graph (random, back-pointer list,
# chain, large random), the bytes after them sizes and edges
graph_seeds()
{
	python3 - "$1" <<'PY'
import random, sys
out = sys.argv[1]
r = random.Random(7)
def seed(name, b):
	open(out + "/" + name, "wb").write(bytes(b))
# arenas: minor, narenas, per arena heaps; then chunk sizes; then links
for name, minor, na, links in [("arenas-plain", 9, 2, 0), ("arenas-self", 9, 1, 1),
		("arenas-pair", 5, 4, 2), ("arenas-garbage", 11, 2, 3), ("arenas-old", 1, 3, 4)]:
	b = [0, minor, na] + [2] * 4
	b += [r.randrange(256) for _ in range(600)]
	b += [links] * 40 + [r.randrange(256) for _ in range(60)]
	seed(name, b)
seed("arenas-patched", [0, 9, 2, 2] + [r.randrange(256) for _ in range(1200)])
# graphs: shape, size, sizes, edges
seed("graph-small", [1, 0, 40] + [r.randrange(256) for _ in range(300)])
seed("graph-backlist", [1, 1, 0xff, 0xff] + [7] * 64 + [0, 0, 0, 0])
seed("graph-chain", [1, 2, 0xff, 0xff] + [16] * 64)
seed("graph-random", [1, 3, 0x88, 0x13] + [r.randrange(256) for _ in range(3000)])
seed("graph-cycles", [1, 0, 62] + [5] * 62 + [0] + sum(([i, 0, (i % 60) + 1, 0] for i in range(1, 61)), []))
PY
}
graph_seeds "$out/graph"

# fuzz_fleet's: cores of the machine its PROGRAM (itself) is, x86-64, each alone (read as
# two dumps) and in pairs and a three cut apart by HPFLEET| (test/fuzz/fuzz_fleet.c)
fleet_seeds()
{
	c=$1/core f=$1/fleet
	for s in v2-w8le v2-sampled-w8le mixed-w8le module-w8le maps-w8le real-plugin-host; do
		[ -f "$c/$s" ] && cp "$c/$s" "$f/$s"
	done
	{ cat "$c/v2-w8le"; printf 'HPFLEET|'; cat "$c/v2-sampled-w8le"; } >"$f/pair-v2-sampled"
	{ cat "$c/v2-w8le"; printf 'HPFLEET|'; cat "$c/module-w8le"; printf '\001'; } >"$f/pair-v2-module"
	{ cat "$c/mixed-w8le"; printf 'HPFLEET|'; cat "$c/v2-w8le"; printf 'HPFLEET|';
	  cat "$c/maps-w8le"; printf '\002'; } >"$f/three"
	if [ -f "$c/real-plugin-host" ]; then
		{ cat "$c/real-plugin-host"; printf 'HPFLEET|'; cat "$c/real-plugin-host";
		  printf '\003'; } >"$f/pair-real"
	fi
}

# a real core, cut down
if command -v gcore >/dev/null 2>&1 && [ -x "$B/progs/plugin_host" ]; then
	cp "$B/progs/libplugin.so" "$tmp/libplugin.so"
	LD_PRELOAD=$B/heapprof.so "$B/progs/plugin_host" "$tmp/libplugin.so" >"$tmp/out" &
	pid=$!
	i=0
	while ! grep -q ready "$tmp/out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	gcore -o "$tmp/core" "$pid" >/dev/null 2>&1 || true
	kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
	[ -f "$tmp/core.$pid" ] && $GEN cut "$tmp/core.$pid" "$out/core/real-plugin-host"
fi
# a real core of a program run without heapprof.so, cut to libc's data and the heap:
# its untagged chunks are the blocks
if command -v gcore >/dev/null 2>&1 && [ -x "$B/progs/sites" ]; then
	"$B/progs/sites" small=10x100 >"$tmp/out" &
	pid=$!
	i=0
	while ! grep -q ready "$tmp/out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	gcore -o "$tmp/plain" "$pid" >/dev/null 2>&1 || true
	kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
	[ -f "$tmp/plain.$pid" ] && $GEN cut-untagged "$tmp/plain.$pid" "$out/core/real-untagged-sites"
fi
fleet_seeds "$out"
du -sh "$out"
