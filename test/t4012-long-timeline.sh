#!/bin/sh
# The longest timeline a dump holds, 2^20 samples (HEAPPROF_TIMELINE's limit; a normal
# run passes the 131,000 the page once choked on in about nine minutes), made in a
# second by test/progs/manysamples, whose own clock moves 4 ms per read: the JSON holds
# every sample, the SVG is well-formed with the peak the JSON gives, and the -f html
# page draws it, the area reaching that peak, with no error in the console.
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool python3

N=1048576
test_case 'a core whose timeline holds 2^20 samples, every one in the JSON' '
	HEAPPROF_TIMELINE=$N run_preloaded $PROGS/manysamples $((N - 1)) && take_core ms.core &&
	heapprof-analyze -f json $PROGS/manysamples ms.core >ms.json &&
	python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))[\"timeline\"]
# the dump'"'"'s samples, then the state at the snapshot
assert len(t) == int(sys.argv[2]) + 1, \"%d samples\" % len(t)
print(\"{:,}\".format(max(s[\"live_bytes\"] for s in t)))
" ms.json $N >peak.txt
'

# libxml2 refuses an attribute past 10 MB: all 2^20 points made one of 15 MB
if command -v xmllint >/dev/null; then
	test_case 'the SVG draws it too, well-formed and with its peak' '
		heapprof-analyze -f svg -o ms.svg $PROGS/manysamples ms.core &&
		grep -q "<title>peak: $(cat peak.txt) bytes in " ms.svg && xmllint --noout ms.svg
	'
else
	skip_case 'the SVG draws it too, well-formed and with its peak' 'xmllint missing (Debian libxml2-utils)'
fi

if ! command -v chromium >/dev/null || ! command -v node >/dev/null ||
	! node --experimental-websocket -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' \
		2>/dev/null; then
	skip_case 'the HTML page draws all of it: area, peak, tooltip, flame graph' \
		'needs chromium and node 20.10 or later'
	exit 0
fi
test_case 'the HTML page draws all of it: area, peak, tooltip, flame graph' '
	heapprof-analyze -f html -o ms.html $PROGS/manysamples ms.core &&
	node --experimental-websocket "$TEST_DIR/helpers/browser.js" ms.html "$TEST_DIR/helpers/html_page.js" \
		timeline "$(cat peak.txt)" -- names sample >out
'
