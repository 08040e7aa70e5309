#!/bin/sh
# Free memory pinned by live blocks (--memory, pinned.c) on the issue's own program,
# scaled down: 40 MB of 1,000-byte blocks in the main arena and 8 MB in a thread's,
# 99 of every 100 freed, the survivors from keep(). Checked against what forked
# copies of the process saw: glibc's bins after malloc_trim(0), what freeing the
# survivors gave back, and the resident memory malloc_trim(0) released.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# prog.out's "WHAT key=N"
val()
{
	sed -n "s/^$1 .*$2=\([0-9]*\).*/\1/p" prog.out
}

# pinned bytes (or, with $2 = blocks, blocks) of the text line whose stack starts with $1
pinned_line()
{
	sed -n "s/^ *\([0-9,]*\) bytes by \([0-9,]*\) blocks (\([0-9,]*\) in whole pages): $1.*/\1 \2 \3/p" \
		mem.txt | tr -d , | head -1
}

# 1,000 bytes, heapprof's 16-byte header and malloc's size word, rounded up to 16
CHUNK=1024

test_case '--memory: free memory pinned, by stack, in text' '
	run_preloaded $PROGS/pinned &&
	take_core pinned.core &&
	heapprof-analyze --memory --top=3 $PROGS/pinned pinned.core >mem.txt &&
	grep -q "^  free memory pinned, by stack: [0-9,]* bytes in [0-9,]* free chunks below in-use ones, [0-9,]* of them in whole pages$" mem.txt &&
	set -- $(pinned_line "keep < layout < main < ") &&
	[ "$2" = 400 ] && main_pinned=$1 &&
	set -- $(pinned_line "keep < layout < thread_main < ") &&
	[ "$2" = 80 ] && thread_pinned=$1 &&
	echo "$main_pinned $thread_pinned" >pinned.keep
'

test_case 'freeing keep()s survivors gives back what is charged to them, within a page' '
	read main_pinned thread_pinned <pinned.keep &&
	released=$(($(val freed arena_delta) - $(val trim arena_delta))) &&
	expect=$((main_pinned + 400 * CHUNK)) &&
	d=$((released - expect)) &&
	[ ${d#-} -lt 4096 ] || { echo "freed: $released bytes back, charged $expect" >&2; false; }
'

# glibc's bins after malloc_trim(0), as malloc_info says (its totals add each chunk's
# PREV_INUSE bit: one byte per chunk)
bins_after_trim()
{
	sed -n "s/^ *<\(size\|unsorted\) .*total=\"\([0-9]*\)\" count=\"\([0-9]*\)\".*/\2 \3/p" prog.out |
		awk "{ t += \$1 - \$2 } END { print t + 0 }"
}

test_case 'all pinned bytes are the bins malloc_trim(0) leaves, keep() holds 99% of them' '
	heapprof-analyze --memory -f json --top=3 $PROGS/pinned pinned.core >mem.json &&
	read main_pinned thread_pinned <pinned.keep &&
	bins=$(bins_after_trim) && [ "$bins" -gt 40000000 ] &&
	[ "$(jnum pinned_bytes mem.json)" = "$bins" ] &&
	[ $(((main_pinned + thread_pinned) * 100)) -ge $((bins * 99)) ] &&
	grep -q "\"pinned\": \[" mem.json &&
	grep -q "\"pinned_bytes\": $main_pinned, \"trim_bytes\": [0-9]*, \"blocks\": 400, \"holder\": \"block\"" mem.json &&
	json_valid mem.json
'

test_case 'malloc_trim(0) would release what a copy of the process gave back' '
	pages=$(jnum trim_pages_bytes mem.json) && top=$(jnum trim_top_bytes mem.json) &&
	[ "$top" = "$(val trim arena_delta)" ] &&
	[ "$(jnum pinned_trim_bytes mem.json)" = "$pages" ] &&
	rss=$(val trim rss_delta) &&
	{ [ "$rss" -ge "$pages" ] && [ "$rss" -le $((pages + top)) ] ||
		{ echo "resident memory released: $rss, whole pages $pages, top $top" >&2; false; }; }
'
