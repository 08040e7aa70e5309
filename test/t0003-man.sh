#!/bin/sh
# The manual pages in doc/ render without a warning, and name every option that
# heapprof-analyze --help lists.
. "$(dirname "$0")/lib.sh"
need_tool groff

for page in heapprof-analyze.1 heapprof.1 heapprof.so.7; do
	test_case "doc/$page renders without warnings" '
		groff -man -Tutf8 -ww -z "$SRC_DIR/doc/'$page'" 2>err && ! test -s err &&
		if command -v man >/dev/null; then
			MANWIDTH=80 man --warnings -l "$SRC_DIR/doc/'$page'" >out 2>err &&
			! test -s err && test -s out
		fi
	'
done

test_case 'heapprof-analyze.1 names every long option of --help' '
	heapprof-analyze --help | grep -o -- "--[a-z-]*" | sort -u >opts &&
	MANWIDTH=200 man -l "$SRC_DIR/doc/heapprof-analyze.1" 2>/dev/null | sed "s/‐/-/g" >page &&
	while read o; do grep -q -- "$o" page || { echo "missing $o"; exit 1; }; done <opts
'

# libdwfl asks debuginfod when DEBUGINFOD_URLS is set: reports that depend on the network
# and a cache in HOME, which the page and the README must say
test_case 'heapprof-analyze.1 ENVIRONMENT and the README name DEBUGINFOD_URLS' '
	groff -man -Tutf8 "$SRC_DIR/doc/heapprof-analyze.1" 2>/dev/null | sed "s/.\x08//g; s/‐/-/g" |
		sed -n "/^ENVIRONMENT/,/^EXAMPLES/p" | grep -o "^ *DEBUGINFOD_URLS$" | tr -d " " >got &&
	grep -o "debuginfod servers when .DEBUGINFOD_URLS. is set" "$SRC_DIR/README.md" >>got &&
	printf "%s\n" DEBUGINFOD_URLS "debuginfod servers when \`DEBUGINFOD_URLS\` is set" >want &&
	expect_same want got
'
