#!/bin/sh
# The SVG flame graph writer (analyzer/flame.c): the unit program's checks, then its
# SVG must be well-formed XML (xmllint), render (rsvg-convert) and carry exact totals;
# so must the one with a timeline chart (chart.c's unit program). The one of names of
# any bytes must be well-formed too.
. "$(dirname "$0")/lib.sh"

run_tap flame_test "$BUILD/unit/flame_test" flame.svg hostile.svg
run_tap chart_test "$BUILD/unit/chart_test" timeline.svg

if command -v xmllint >/dev/null; then
	test_case 'the SVG is well-formed XML' 'xmllint --noout flame.svg timeline.svg hostile.svg'
else
	skip_case 'the SVG is well-formed XML' 'xmllint missing (Debian libxml2-utils)'
fi

if command -v rsvg-convert >/dev/null; then
	test_case 'rsvg-convert renders it' '
		rsvg-convert -o flame.png flame.svg 2>err && ! test -s err &&
		[ "$(head -c 4 flame.png | tail -c 3)" = PNG ] &&
		rsvg-convert -o timeline.png timeline.svg 2>err && ! test -s err
	'
else
	skip_case 'rsvg-convert renders it' 'rsvg-convert missing (Debian librsvg2-bin)'
fi

test_case 'tooltips carry exact totals; script and style are inline CDATA' '
	grep -q "<title>all (9048579 bytes, 100.00%)</title>" flame.svg &&
	grep -q "<title>site_small (2000000 bytes, 22.10%)</title>" flame.svg &&
	grep -q "<title>operator new(unsigned long) (1048576 bytes, 11.59%)</title>" flame.svg &&
	grep -q "<script type=\"text/ecmascript\"><!\[CDATA\[" flame.svg &&
	! grep -q "xlink:href\|<image\|@import\|src=" flame.svg
'
