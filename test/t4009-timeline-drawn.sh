#!/bin/sh
# The timeline a dump holds (issue 21), drawn: the SVG's chart above the flame graph and
# the HTML page's chart, each with the peak the JSON timeline gives. A real program
# rises to 8 MB in big blocks, frees them, pauses and keeps 3,000 bytes; a dump without a
# timeline skips every case (the chart's geometry is chart_test's, in t4003).
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool python3

test_case 'a core of a program that rose and fell' '
	run_preloaded $PROGS/sites big=8x1000000 sleep=50 free-big=8 sleep=50 small=3x1000 &&
	take_core tl.core &&
	heapprof-analyze -f json $PROGS/sites tl.core >tl.json
'

# peak.txt: the largest live bytes of the JSON timeline, with thousands separators
have=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = d.get("timeline")
if isinstance(t, list) and t:
	print("{:,}".format(max(s["live_bytes"] for s in t)))
' tl.json 2>/dev/null)
if [ -z "$have" ]; then
	for c in 'the SVG draws the timeline with its peak' \
		'the HTML page draws the timeline, hover gives the peak'; do
		skip_case "$c" 'dumps hold no timeline yet'
	done
	exit 0
fi
echo "$have" >peak.txt

test_case 'the SVG draws the timeline with its peak' '
	heapprof-analyze -f svg -o tl.svg $PROGS/sites tl.core &&
	grep -q "<g id=\"timeline\"" tl.svg &&
	grep -q "<title>peak: $(cat peak.txt) bytes in [0-9,]* blocks at " tl.svg &&
	grep -q "<title>now: " tl.svg &&
	{ ! command -v xmllint >/dev/null || xmllint --noout tl.svg; }
'

if ! command -v chromium >/dev/null || ! command -v node >/dev/null ||
	! node --experimental-websocket -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' \
		2>/dev/null; then
	skip_case 'the HTML page draws the timeline, hover gives the peak' \
		'needs chromium and node 20.10 or later'
	exit 0
fi
# a gcore core holds no snapshot time: the now mark says where its time comes from
test_case 'the HTML page draws the timeline, hover gives the peak' '
	heapprof-analyze -f html -o tl.html $PROGS/sites tl.core &&
	node --experimental-websocket "$TEST_DIR/helpers/browser.js" tl.html "$TEST_DIR/helpers/html_page.js" \
		timeline "$(cat peak.txt)" -- \
		text "#tl-now title" "the newest time the dump shows (no snapshot time in it)" >out
'
