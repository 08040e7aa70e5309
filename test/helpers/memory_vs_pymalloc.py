#!/usr/bin/env python3
"""memory_vs_pymalloc.py REPORT.json STATS SCRIPT: --memory's figures for Python's object
allocator against pymalloc's own statistics (STATS: what test/progs/pystats.c printed,
the pymalloc part of sys._debugmallocstats(), taken just before the core). Prints the
figures; exits 1 unless
  - the blocks, their bytes and the pools of memory.slabs are pymalloc's blocks in use,
    bytes in allocated blocks and pools, exactly;
  - every stack of memory.mapped is listed (--top high enough), and the mappings
    made through heapprof.so's arena allocator (w_arena_alloc) of one arena's size are
    pymalloc's arenas allocated now, in number and bytes;
  - at least half the arenas' bytes are under a line of SCRIPT (the Python code that
    filled them)."""
import json
import os
import re
import sys

stats = open(sys.argv[2]).read()
mem = json.load(open(sys.argv[1]))["memory"]
script = os.path.basename(sys.argv[3])


def figure(pattern):
    m = re.search(pattern, stats, re.M)
    if not m:
        sys.exit("no '%s' in %s" % (pattern, sys.argv[2]))
    return int(m.group(1).replace(",", ""))


classes = re.findall(r"^ *\d+ +\d+ +(\d+) +(\d+) +\d+$", stats, re.M)
pools = sum(int(p) for p, _ in classes)
blocks = sum(int(b) for _, b in classes)
arenas = figure(r"^# arenas allocated current *= *([\d,]+)")
arena_size = figure(r"^\d+ arenas \* (\d+) bytes/arena")
block_bytes = figure(r"^# bytes in allocated blocks *= *([\d,]+)")

slabs = mem["slabs"]
arena_maps = arena_bytes = script_bytes = 0
for s in mem["mapped"]:
    if not any(f.get("function") == "w_arena_alloc" for f in s["frames"]):
        continue
    if s["mapped_bytes"] != s["mappings"] * arena_size:
        continue        # the frames' data stack chunks, which take the same road
    arena_maps += s["mappings"]
    arena_bytes += s["mapped_bytes"]
    if any(f.get("python") and os.path.basename(f.get("file") or "") == script
           for f in s["frames"]):
        script_bytes += s["mapped_bytes"]

print("pymalloc: %d blocks, %d bytes in them, %d pools, %d arenas of %d bytes"
      % (blocks, block_bytes, pools, arenas, arena_size))
print("--memory: %d blocks, %d bytes in them, %d pools, %d arena mappings of %d bytes, "
      "%d under %s" % (slabs["blocks"], slabs["class_bytes"], slabs["pools"], arena_maps,
                       arena_bytes, script_bytes, script))
bad = []
if (slabs["blocks"], slabs["class_bytes"], slabs["pools"]) != (blocks, block_bytes, pools):
    bad.append("memory.slabs is not pymalloc's blocks in use")
if mem["map_table"]["stacks"] != len(mem["mapped"]):
    bad.append("%d of %d stacks listed: raise --top"
               % (len(mem["mapped"]), mem["map_table"]["stacks"]))
if (arena_maps, arena_bytes) != (arenas, arenas * arena_size):
    bad.append("the arena allocator's mappings are not pymalloc's arenas")
if script_bytes * 2 < arena_bytes:
    bad.append("less than half the arenas' bytes under %s" % script)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
