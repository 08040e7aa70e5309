#!/bin/sh
# -f html in a real browser: headless Chromium driven over the DevTools protocol
# (test/helpers/browser.js, node's own WebSocket; scripts/install-deps --test installs both).
# On a C program's core, a diff, a --leaks=all report, a --by-thread report and a
# sampled one: the page draws the expected frames, zooms on a click, searches with the
# right share, switches metric to the expected widths, logs no error and fetches
# nothing. Also the size and load time of the biggest page the tests make.
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool chromium
need_tool node
need_tool python3
. "$TEST_DIR/helpers/sites.sh"
# node 20.10 and later have a WebSocket (behind this flag until 22)
if ! node --experimental-websocket -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null; then
	echo "# skipped: node $(node --version) has no WebSocket (20.10 or later needed)"
	exit 77
fi

browse() { node --experimental-websocket "$TEST_DIR/helpers/browser.js" "$@"; }
page() { f=$1; shift; browse "$f" "$TEST_DIR/helpers/html_page.js" "$@"; }

# share FILE REGEX: the part of the collapsed stacks in FILE with a frame matching REGEX
share()
{
	awk -v re="$2" '{ n = split($0, a, " "); v = a[n] < 0 ? -a[n] : a[n]; t += v;
		k = split(substr($0, 1, length($0) - length(a[n]) - 1), fr, ";");
		for (i = 1; i <= k; i++) if (fr[i] ~ re) { s += v; break } }
		END { printf "%.9f\n", t ? s / t : 0 }' "$1"
}

test_case 'a core of the sites workload' '
	run_preloaded $PROGS/sites $SITES && take_core sites.core &&
	heapprof-analyze -f html -o sites.html $PROGS/sites sites.core &&
	heapprof-analyze -f collapsed $PROGS/sites sites.core >sites.txt
'

test_case 'the page is one file: no URL to fetch anything from' '
	! grep -Eiq "(src|href)=\"(https?:)?//|@import|url\(" sites.html &&
	grep -q "Content-Security-Policy\" content=\"default-src .none.;" sites.html
'

test_case 'the C core: frames drawn, click zooms, search share, tooltip, no error' '
	page sites.html names main site_small site_big lib_alloc -- zoom site_grow -- \
		search "^site_(small|big)\$" $(share sites.txt "^site_(small|big)$") -- \
		hover site_big "sites.c:" -- \
		text "#summary" "$(heapprof-analyze $PROGS/sites sites.core | sed -n "s/^  live:       //p")" \
		-- shot page.png >out &&
	grep -q "^load_ms [0-9]" out && grep -q "^drawn_ms [0-9]" out &&
	file page.png | grep -q "PNG image data, 1200 x 640" &&
	if [ -n "${HP_SCREENSHOT:-}" ]; then cp page.png "$HP_SCREENSHOT"; fi
'

C=$PROGS/counts
test_case 'exact counts: switching the metric redraws the widths to each metric' '
	run_preloaded $C && take_core counts.core &&
	heapprof-analyze -f html -o counts.html $C counts.core &&
	heapprof-analyze -f collapsed --metric=alloc_objects $C counts.core >calls.txt &&
	heapprof-analyze -f collapsed --metric=alloc_space $C counts.core >abytes.txt &&
	heapprof-analyze -f collapsed $C counts.core >live.txt &&
	page counts.html metric 0 f_malloc $(share live.txt "^f_malloc$") -- \
		metric 3 f_malloc $(share calls.txt "^f_malloc$") -- \
		metric 3 w_b $(share calls.txt "^w_b$") -- \
		metric 2 f_cxx $(share abytes.txt "^f_cxx$") -- \
		text "#metric" "allocation calls" -- hover w_b "allocation calls: 7" >/dev/null
'

# (worker-a has ended when the core is taken: "(ended)" after its name)
test_case '--by-thread: the threads are roots, and searchable' '
	heapprof-analyze -f html --by-thread -o threads.html $C counts.core &&
	heapprof-analyze -f collapsed --by-thread $C counts.core >threads.txt &&
	t=$(grep -o "^\[thread [0-9]* worker-a (ended)\]" threads.txt | head -1) &&
	page threads.html names "$t" -- search "worker-a" $(share threads.txt "worker-a") >/dev/null
'

test_case 'a diff (--base): growth red and first, shrinkage blue' '
	run_preloaded $PROGS/sites small=3x1000 tmp=2x500 wait big=2x300000 small=2x1000 \
		free-tmp=2 zeroed=4x333 &&
	gcore -o "$SCRATCH/snap" "$PROG_PID" >gcore.log 2>&1 && mv "$SCRATCH/snap.$PROG_PID" old.core &&
	kill -USR1 "$PROG_PID" && i=0 &&
	while [ "$(grep -c "^ready$" prog.out)" -lt 2 ]; do
		i=$((i + 1)); [ $i -lt 600 ] || return 1; sleep 0.1
	done && take_core new.core &&
	heapprof-analyze -f html --base=old.core -o diff.html $PROGS/sites new.core &&
	heapprof-analyze -f collapsed --base=old.core $PROGS/sites new.core >diff.txt &&
	python3 "$TEST_DIR/helpers/stacks_of.py" html diff.html >d1 && python3 "$TEST_DIR/helpers/stacks_of.py" collapsed diff.txt >d2 &&
	expect_same d2 d1 &&
	page diff.html diff shrink -- names site_big site_tmp -- text "#title" "Heap growth of" >/dev/null
'

test_case '--leaks=all: the classes are roots' '
	run_preloaded $PROGS/leaky && take_core leaky.core &&
	heapprof-analyze -f html --leaks=all -o leaks.html $PROGS/leaky leaky.core &&
	page leaks.html names "[definitely lost]" "[still reachable]" alloc_plain -- \
		text "#summary" "definitely lost" >/dev/null
'

test_case 'a sampled report says so, and draws its estimates' '
	HEAPPROF_SAMPLE=65536 HEAPPROF_SEED=777 run_preloaded $C sampled && take_core sampled.core &&
	heapprof-analyze -f html --age -o sampled.html $C sampled.core &&
	page sampled.html names s_big -- text "#warn" "Sampled" -- text "#ages" "bytes" >/dev/null
'

# the pinned table previews as the text does (report_preview): past heapprof's operator
# new and the library's allocation, inlined build_index named, the stack's number
test_case '--memory: the pinned table previews as the text, with the stack number' '
	run_preloaded $PROGS/cxx_index && take_core index.core &&
	heapprof-analyze -f html --memory --top=3 -o index.html $PROGS/cxx_index index.core &&
	page index.html text "#memory" "block: std::vector<int, std::allocator<int> >::push_back(int const&) < build_index < main < __libc_start_call_main < ...  #1" >/dev/null
'

# the cells of a row run together in textContent: "405,504bytes in the arenas"
test_case '--memory: a section of its own, with the figures of the JSON report, heapprof'"'"'s own too' '
	heapprof-analyze -f html --memory -o memory.html $C counts.core &&
	heapprof-analyze -f json --memory $C counts.core >memory.json &&
	fig=$(python3 -c "import json, sys; m = json.load(sys.stdin)[\"memory\"]; a = m[\"allocator\"]; c = a[\"chunks\"][\"tagged\"]
s = [p[\"bytes\"] for p in m[\"heapprof\"][\"components\"] if p[\"component\"] == \"stacks\"][0]
print(\"{:,}all|{:,}bytes in the arenas|{:,}{:,}in use, heapprof blocks|{:,}stack records\".format(m[\"dumped_bytes\"], a[\"arena_bytes\"], c[\"bytes\"], c[\"count\"], s))" <memory.json) &&
	page memory.html text "#memory" "${fig%%|*}" -- text "#memory" "$(echo "$fig" | cut -d"|" -f2)" -- \
		text "#memory" "$(echo "$fig" | cut -d"|" -f3)" -- text "#memory" "$(echo "$fig" | cut -d"|" -f4)" -- \
		text "#memory-sec h2" "Memory" >/dev/null &&
	! grep -q "\"memory\":" counts.html
'

test_case 'the biggest page: 131,072 stacks, its size and load time' '
	run_preloaded $PROGS/manystacks 17 && take_core many.core &&
	heapprof-analyze -f html -o many.html $PROGS/manystacks many.core &&
	n=$(heapprof-analyze $PROGS/manystacks many.core | sed -n "s/.*, \([0-9]*\) distinct stacks.*/\1/p") &&
	[ "$n" -ge 131072 ] &&
	page many.html names branch -- text "#summary" "$n distinct stacks" >out &&
	echo "# $n stacks: $(wc -c <many.html) bytes, first flame graph drawn in $(sed -n "s/^drawn_ms //p" out) ms, loaded in $(sed -n "s/^load_ms //p" out) ms (load average $(cut -d" " -f1 /proc/loadavg))" >measured
'
if [ -f "$SCRATCH/measured" ]; then cat "$SCRATCH/measured"; fi
