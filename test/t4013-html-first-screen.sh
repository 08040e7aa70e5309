#!/bin/sh
# The page's first screen (issue 32): it opens on the flame graph, the summary below,
# and a graph deeper than the screen opens on its heaviest part. On a real Python core
# whose deepest stacks, an 80-call chain holding 200 KB, are far from its heaviest,
# a method holding 15 MB. And --memory's rows say in words what the JSON's keys are.
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool chromium
need_tool node
if ! node --experimental-websocket -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null; then
	echo "# skipped: node $(node --version) has no WebSocket (20.10 or later needed)"
	exit 77
fi
PY=/usr/bin/python3
[ -x $PY ] || { echo "# skipped: no $PY"; exit 77; }

page() { f=$1; shift; node --experimental-websocket "$TEST_DIR/helpers/browser.js" "$f" "$TEST_DIR/helpers/html_page.js" "$@"; }

cat >deep.py <<'EOF2'
import signal

class Cache:
    def __init__(self):
        self.items = []

    def fill(self, n):
        for i in range(n):
            self.items.append(bytearray(10000))
            self.items.append(bytearray(5000))

def chain(depth, keep):
    if depth:
        return chain(depth - 1, keep)
    keep.append(bytearray(200000))

def run():
    c = Cache()
    c.fill(1000)
    return c

small = []
chain(80, small)
keep = run()
print("ready", flush=True)
signal.pause()
EOF2

test_case 'a core of a Python script: a 15 MB cache, 200 KB 80 calls deep' '
	PYTHONMALLOC=malloc run_preloaded $PY "$SCRATCH/deep.py" && take_core deep.core &&
	heapprof-analyze -q -f html -o deep.html $PY deep.core &&
	heapprof-analyze -q -f collapsed $PY deep.core >deep.txt &&
	depth=$(awk "/chain/ { n = gsub(/;chain/, \"\"); if (n > m) m = n } END { print m + 0 }" deep.txt) &&
	[ "$depth" -ge 80 ] || { echo "chain is $depth frames deep, expected 80 or more"; false; }
'

test_case 'it opens on the flame graph, its heaviest frames in view' '
	page deep.html first -- names Cache.fill chain >/dev/null
'

test_case 'the icicle too, and after zooming out from a deep frame' '
	page deep.html zoom Cache.fill -- first >/dev/null &&
	page deep.html select "#view" icicle -- first >/dev/null
'

test_case '--memory: the page opens on the graph too, the summary below' '
	heapprof-analyze -q -f html --memory -o mem.html $PY deep.core &&
	page mem.html first >/dev/null
'

test_case '--memory: the rows say in words what the JSON keys are' '
	page mem.html text "#memory" "whole free pages malloc_trim(0) would give back" \
		-- text "#memory" "free in tcache" -- text "#memory" "heap arenas" \
		-- text "#memory" "chunks by kind" -- untext "#memory" "trim pages bytes" \
		-- text "#memory" "free chunks pinned below in-use ones" -- untext "#memory" "pinned runs" \
		-- untext "#memory" "fenceposts chunks" -- untext "#memory" "arena bytes" >/dev/null
'
