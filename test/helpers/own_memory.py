# heapprof's own memory in --memory (t3027): the JSON's "heapprof" parts against each
# other, the map table against its size, the headers against the blocks, and the text.
#   own_memory.py REPORT.json REPORT.txt N     (N: the process's HEAPPROF_MAPS)
import json, sys
n = int(sys.argv[3])
m = json.load(open(sys.argv[1]))["memory"]
own, fails = m["heapprof"], []
parts = {c["component"]: c["bytes"] for c in own["components"]}
def want(what, exp, got):
    if exp != got:
        fails.append("%s: expected %s, got %s" % (what, exp, got))
mapped = sum(b for k, b in parts.items() if k != "headers")
want("the parts, summed", m["map_table"]["heapprof_bytes"], mapped)
want("the parts against the mappings line", m["mappings"]["heapprof"], mapped)
want("heapprof's mapped_bytes", mapped, own["mapped_bytes"])
want("mappings that do not say what they hold", 0, parts["unknown"])
want("the map table (64 + %d x 24 bytes, whole pages)" % n,
     (64 + n * 24 + 4095) // 4096 * 4096, parts["map_table"])
want("headers (16 bytes a tagged block)", 16 * own["header_blocks"], parts["headers"])
want("bytes", mapped + parts["headers"], own["bytes"])
for k in ("stacks", "sites", "python_names", "slabs", "peak", "timeline"):
    if parts[k] <= 0:
        fails.append("%s: expected some bytes, got none" % k)
text = open(sys.argv[2]).read()
line = "heapprof's own: {:,} bytes, {:,} mapped".format(own["bytes"], mapped)
if line not in text:
    fails.append("text: no line %r" % line)
print("\n".join(fails) or "ok: %d bytes mapped, %d of headers" % (mapped, parts["headers"]))
sys.exit(1 if fails else 0)
