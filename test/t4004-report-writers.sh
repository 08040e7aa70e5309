#!/bin/sh
# -f pprof and -f svg on a real core (test/progs/sites): the real pprof and a real SVG
# renderer read what the analyzer wrote, and the totals agree with the text report's;
# --short-names on C++ names.
. "$(dirname "$0")/lib.sh"
need_tool gcore
. "$TEST_DIR/helpers/sites.sh"

test_case 'a core of the sites workload' '
	run_preloaded $PROGS/sites $SITES && take_core sites.core &&
	heapprof-analyze -f collapsed $PROGS/sites sites.core >sites.txt &&
	check_sites sites.txt &&
	heapprof-analyze --top=0 $PROGS/sites sites.core >sites.text
'

total() { awk '{ s += $NF } END { print s }' "$1"; }

if have_pprof; then
	test_case '-f pprof: pprof reads it without a word, totals per sample type exact' '
		heapprof-analyze -f pprof -o sites.pb.gz $PROGS/sites sites.core &&
		"$PPROF" -raw sites.pb.gz >raw 2>raw.err && ! test -s raw.err &&
		[ "$(awk "/^inuse_space/ { on = 1; next } /^Locations/ { on = 0 } on { s += \$1 } END { print s }" raw)" = "$(total sites.txt)" ] &&
		blocks=$(sed -n "s/^  live: .* in \([0-9,]*\) blocks.*/\1/p" sites.text | tr -d ,) &&
		[ "$(awk "/^inuse_space/ { on = 1; next } /^Locations/ { on = 0 } on { s += \$2 } END { print s }" raw)" = "$blocks" ] &&
		grep -q "^Comment: heapprof-analyze .*sites.core" raw &&
		grep -q " M=[0-9]* site_small .*sites.c:[0-9]" raw &&
		grep -q "site_inl .*sites.c" raw
	'
	test_case '-f pprof: per function, pprof -top agrees with the collapsed report' '
		"$PPROF" -top -nodefraction=0 -unit=B -sample_index=inuse_space sites.pb.gz >top &&
		grep -q " 2000B .* site_small\$" top && grep -q " 25000B .* site_grow\$" top &&
		grep -q " 2331B .* lib_alloc\$" top
	'
	test_case '-f pprof: mappings carry the modules and their build-ids' '
		id=$(readelf -n $PROGS/sites | sed -n "s/.*Build ID: //p") &&
		grep -q "/progs/sites $id" raw
	'
else
	skip_case '-f pprof read by pprof' "$PPROF_WHY"
fi

test_case '-f svg: well-formed, renders, names and totals in the tooltips' '
	heapprof-analyze -f svg -o sites.svg $PROGS/sites sites.core &&
	xmllint --noout sites.svg &&
	grep -q "site_small" sites.svg &&
	grep -q "$(total sites.txt)" sites.svg &&
	{ ! command -v rsvg-convert >/dev/null || rsvg-convert -o sites.png sites.svg; }
'

test_case '--short-names drops parameter lists and template arguments' '
	run_preloaded $PROGS/cxx && take_core cxx.core &&
	heapprof-analyze -f collapsed $PROGS/cxx cxx.core >long.txt &&
	heapprof-analyze -f collapsed --short-names $PROGS/cxx cxx.core >short.txt &&
	grep -q "operator new(unsigned long)" long.txt &&
	! grep -q "(unsigned long)" short.txt && grep -q ";operator new " short.txt &&
	[ "$(total long.txt)" = "$(total short.txt)" ]
'
