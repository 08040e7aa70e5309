#!/usr/bin/env python3
"""Self cost (Ir) per function of one object in a callgrind file, inlined lines
included (callgrind_annotate shows those under the header's file, without the object):
    callgrind_self.py CALLGRIND.OUT OBJECT_SUBSTRING  ->  "IR FUNCTION" lines."""
import collections
import re
import sys

names = {}
ob = fn = None
cost = collections.Counter()
after_call = False
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^(c?)(ob|fn|fl|fi|fe)=(?:\((\d+)\))?\s*(.*)$", line.rstrip("\n"))
    if m:
        called, kind, ident, name = m.groups()
        kind = "fl" if kind in ("fi", "fe") else kind
        table = names.setdefault(kind, {})
        if ident is not None:
            if name:
                table[ident] = name
            name = table.get(ident, "?")
        if not called:
            if kind == "ob":
                ob = name
            elif kind == "fn":
                fn = name
        continue
    if line.startswith("calls="):
        after_call = True	# the next cost line is the callee's, inclusive
        continue
    if line[:1].isdigit() or line[:1] in "+-*":
        if after_call:
            after_call = False
            continue
        fields = line.split()
        if len(fields) >= 2 and ob and sys.argv[2] in ob:
            cost[fn] += int(fields[-1])
for fn, ir in cost.most_common():
    print(ir, fn)
