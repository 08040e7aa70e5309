#!/usr/bin/env python3
# Read one report format and print its stacks as "frame;frame;... VALUE" lines (outermost
# first, as collapsed prints them), summed by stack and sorted, so that every format can
# be compared with -f collapsed. Usage: stacks_of.py FORMAT FILE [METRIC]
#   collapsed  the lines themselves; json  each stack's "path" and "value";
#   traces     `pprof -traces -unit=B` output (leaf first, "(inline)" marks, labels);
#   svg        the flame graph's boxes: each box as its path from the root (all) and its
#              value; with "tree" instead of a file format, collapsed lines as the same boxes
#   html       the page's embedded data, the figure of METRIC (default: the page's own)
import html, json, re, sys
from collections import defaultdict


def collapsed(text):
    for line in text.splitlines():
        path, _, v = line.rpartition(" ")
        yield path.split(";"), int(v)


def from_json(text):
    for s in json.loads(text)["stacks"]:
        yield s["path"], s["value"]


def from_traces(text):
    for block in re.split(r"^-+\+-+$", text, flags=re.M)[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        while lines and not re.match(r"^\s*-?[0-9.]+B?\s", lines[0]):
            lines.pop(0)	# labels (thread:, leak_class:) come first
        if not lines:
            continue
        first = lines[0].split(None, 1)
        frames = [first[1]] + [l.strip() for l in lines[1:]]
        frames = [re.sub(r" \(inline\)$", "", f) for f in frames]
        yield frames[::-1], int(float(first[0].rstrip("B")))


def from_svg(text):
    stack = []
    for m in re.finditer(r'<g class="f"><title>(.*?) \((\d+) [a-z]+, [0-9.]+%\)</title><rect x="[0-9.]+" y="(\d+)"', text):
        name, v, y = html.unescape(m.group(1)), int(m.group(2)), int(m.group(3))
        depth = -y	# deeper boxes are higher up: y falls by one frame per level
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, name))
        if len(stack) > 1:	# the root box is "all"
            yield [n for _, n in stack[1:]], v


def tree(text):
    sums = defaultdict(int)
    for path, v in collapsed(text):
        for i in range(1, len(path) + 1):
            sums[";".join(path[:i])] += v
    for k, v in sums.items():
        yield k.split(";"), v


def from_html(text, metric):
    m = re.search(r'<script id="hp-data" type="application/json">(.*?)</script>', text, re.S)
    d = json.loads(m.group(1).replace("<\\/", "</"))
    fig = d["figures"].index(metric) if metric else d["metrics"][d["metric"]]
    up, fi, t = [-1], [-1], d["tree"]	# node 0 the root; "-N," before a frame: its parent N back
    i = 0
    while i < len(t):
        back = 1
        if t[i] < 0:
            back, i = -t[i], i + 1
        up.append(len(up) - back)
        fi.append(t[i])
        i += 1
    node = 0
    for i, delta in enumerate(d["ends"]):
        node += delta
        path, n = [], node
        while n:
            path.append(d["names"][d["frames"][fi[n]][0]])
            n = up[n]
        yield path[::-1], d["v"][fig][i]


fmt, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8", errors="replace").read()
read = {"collapsed": collapsed, "json": from_json, "traces": from_traces, "svg": from_svg,
        "tree": tree}
rows = from_html(text, sys.argv[3] if len(sys.argv) > 3 else None) if fmt == "html" else read[fmt](text)
out = defaultdict(int)
for frames, v in rows:
    out[";".join(f.replace(";", ":") for f in frames)] += v
for k in sorted(out):
    if out[k]:
        print(k, out[k])
