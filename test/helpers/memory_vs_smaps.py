#!/usr/bin/env python3
"""memory_vs_smaps.py SMAPS REPORT.json: --memory's figures against the process's own
/proc/PID/smaps, read just before the core was taken. Prints the figures; exits 1 when
  - "other anonymous" is more than 2% of the dump's anonymous bytes (every kind but
    modules' data and other mapped files), or
  - the dump's anonymous bytes are more than the anonymous mappings of smaps (no path,
    [heap], [stack], /dev/zero), or those more than the dump's anonymous bytes and its
    modules' data together (a module's bss is an anonymous mapping in smaps, modules'
    data in the report)."""
import json
import re
import sys

anon = 0
for line in open(sys.argv[1]):
    m = re.match(r"([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+ *(.*)$", line)
    if m:
        path = m.group(3).strip()
        if path in ("", "[heap]", "[stack]") or path.startswith("/dev/zero"):
            anon += int(m.group(2), 16) - int(m.group(1), 16)
kinds = json.load(open(sys.argv[2]))["memory"]["mappings"]
dump = sum(v for k, v in kinds.items() if k not in ("modules", "files"))
other = kinds["other"]
print("smaps anonymous %d, dump anonymous %d, modules' data %d, other %d (%.3f%%)"
      % (anon, dump, kinds["modules"], other, 100.0 * other / dump))
bad = False
if other * 50 > dump:
    print("other anonymous is more than 2% of the anonymous bytes", file=sys.stderr)
    bad = True
if dump > anon or anon > dump + kinds["modules"]:
    print("smaps' anonymous bytes are not between the dump's anonymous bytes and those "
          "plus modules' data", file=sys.stderr)
    bad = True
sys.exit(1 if bad else 0)
