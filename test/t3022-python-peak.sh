#!/bin/sh
# --peak on real Python programs: a few imports and json work give tens of thousands of
# stacks live at the peak (Python frames make stacks many). The peak table grows to
# hold them all, each with its bytes; past HEAPPROF_PEAK_ENTRIES the rest are one entry
# that says what it is. (A table of a fixed 8192 entries summed 90% of the peak into
# one entry that reports called "[unknown stack]".)
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
export PYTHONMALLOC=malloc

cat >load.py <<'PY'
import json, decimal, email.parser, http.client, argparse, logging, xml.dom.minidom
import unittest, asyncio, sqlite3, tarfile, zipfile, csv
docs = [json.dumps({"k%d" % i: [i, str(i)] for i in range(3000)}),
        json.dumps([{"x": i, "y": str(i)} for i in range(3000)])]
kept = [json.loads(d) for d in docs]
PY

# peak_of PY SNAP: --peak as collapsed stacks in peak.txt; prints "TOTAL STACKS SUM"
peak_of()
{
	heapprof-analyze --peak -f collapsed "$1" "$2" >peak.txt 2>peak.err || { cat peak.err; return 1; }
	total=$(sed -n "s/^heapprof-analyze: peak: \([0-9]*\) bytes.*/\1/p" peak.err)
	echo "$total $(wc -l <peak.txt) $(awk '{ t += $NF } END { print t }' peak.txt)"
}

for label in debian-3.11 3.12 3.13; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: --peak holds every stack live at the peak" "no python $label on this machine"
		continue
	fi
	test_case "python $label: --peak holds every stack live at the peak, none unknown" '
		rm -f load.snap &&
		HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=load.snap LD_PRELOAD=$PRELOAD "$py" load.py 2>err &&
		set -- $(peak_of "$py" load.snap) && echo "peak: $1 bytes in $2 stacks (sum $3)" &&
		[ "$1" = "$3" ] && [ "$2" -gt 8192 ] &&
		{ grep "^\[unknown stack\]\|^\[peak table overflow" peak.txt >lost; cut -c1-200 lost;
		  ! test -s lost; } &&
		expect_grep "^_start;.*;<module>;" peak.txt
	'
done

py=$(python_path debian-3.11)
[ -n "$py" ] || py=$(python_path 3.12)
if [ -n "$py" ]; then
	test_case 'HEAPPROF_PEAK_ENTRIES=1000: the stacks past it are one entry, named an overflow' '
		rm -f load.snap &&
		HEAPPROF_PEAK_ENTRIES=1000 HEAPPROF_AT_EXIT=1 HEAPPROF_OUTPUT=load.snap \
			LD_PRELOAD=$PRELOAD "$py" load.py 2>err &&
		set -- $(peak_of "$py" load.snap) && echo "peak: $1 bytes in $2 stacks (sum $3)" &&
		[ "$1" = "$3" ] && [ "$2" -le 1000 ] &&
		grep "^\[peak table overflow" peak.txt >over &&
		cat over | cut -c1-200 && [ $(wc -l <over) = 1 ] &&
		expect_grep "^\[peak table overflow: [1-9][0-9]* stacks, \([0-9]*\) bytes\] \1$" over &&
		expect_no_grep "^\[unknown stack\]" peak.txt
	'
else
	skip_case 'HEAPPROF_PEAK_ENTRIES=1000: the stacks past it are one entry, named an overflow' \
		'no python 3.11 or 3.12 on this machine'
fi
