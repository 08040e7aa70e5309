#!/usr/bin/env python3
"""Check the links of Markdown files: every relative link names a file that exists and,
with #anchor, a heading of that file (GitHub's anchors: lowercase, punctuation but - and
_ dropped, spaces as -, -1, -2... for repeats). Prints one line per broken link.
Usage: doc_links.py FILE.md..."""
import os
import re
import sys

def anchors(path):
    seen, out = {}, set()
    fence = False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
        m = None if fence else re.match(r'#{1,6} +(.*?)\s*$', line)
        if not m:
            continue
        slug = re.sub(r'[^\w\- ]', '', m.group(1).lower()).replace(' ', '-')
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else '%s-%d' % (slug, n))
    return out

bad = 0
for md in sys.argv[1:]:
    text = re.sub(r'```.*?```', '', open(md, encoding='utf-8').read(), flags=re.S)
    text = re.sub(r'`[^`\n]*`', '', text)
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'[a-z]+:', target):
            continue
        path, _, anchor = target.partition('#')
        full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        if not os.path.exists(full):
            print('%s: %s: no such file' % (md, target))
            bad = 1
        elif anchor and full.endswith('.md') and anchor not in anchors(full):
            print('%s: %s: no such heading' % (md, target))
            bad = 1
sys.exit(bad)
