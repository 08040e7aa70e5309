#!/bin/sh
# Docs that cannot drift: the analyzer's options come from one table in
# analyzer/main.c (opt_defs: --help and getopt are made from it), and the preload's
# variables from preload/options.c's defs[]. Every option of the table is in --help,
# the man page's OPTIONS and the README, and every option the man page lists is in
# the table; every HEAPPROF_* variable of defs[] is in heapprof.so.7 and the README.
# The names are read from the sources, so a new option without docs fails here.
. "$(dirname "$0")/lib.sh"

MAIN=$SRC_DIR/analyzer/main.c
MAN1=$SRC_DIR/doc/heapprof-analyze.1
MAN7=$SRC_DIR/doc/heapprof.so.7
README=$SRC_DIR/README.md

# the long options of opt_defs, one a line
sed -n 's/^[[:space:]]*{ \.name = "\([a-z-]*\)".*/\1/p' "$MAIN" | sort >table

# the options a man page's OPTIONS section defines: the lines after each .TP
man_options()
{
	awk '/^\.SH/ { o = ($2 == "OPTIONS") } o && prev == ".TP" { print } { prev = $0 }' "$1" |
		sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z-]*' | sed 's/^--//' | sort -u
}

test_case 'the options table is read from main.c' '
	[ $(wc -l <table) -ge 30 ] && grep -qx format table && grep -qx short-names table
'

test_case 'every option of the table is in --help' '
	heapprof-analyze --help >help &&
	while read o; do
		grep -q -- "--$o\([^a-z-]\|$\)" help || { echo "--$o is not in --help"; exit 1; }
	done <table &&
	grep -A3 -- "--format=FMT" help | grep -q json
'

test_case 'the man page lists exactly the options of the table' '
	man_options "$MAN1" >man &&
	comm -23 table man | sed "s/^/not in doc\/heapprof-analyze.1: --/" >missing &&
	comm -13 table man | sed "s/^/in doc\/heapprof-analyze.1, not in main.c: --/" >>missing &&
	cat missing && ! test -s missing
'

test_case 'the README names every option of the table' '
	while read o; do
		grep -q -- "--$o\([^a-z-]\|$\)" "$README" || { echo "--$o is not in README.md"; exit 1; }
	done <table
'

test_case '-j 0 and --jobs=0 are bad usage' '
	for args in "-j 0" "--jobs=0" "-j0"; do
		heapprof-analyze $args prog core >out 2>err; rc=$?
		[ $rc = 64 ] && ! test -s out && grep -q "^heapprof-analyze: --jobs needs a number above 0" err ||
		{ echo "args [$args]: status $rc"; cat err; exit 1; }
	done
'

# the variables of preload/options.c's defs[], one a line
sed -n 's/^[[:space:]]*\(STR\|NUM\)("\(HEAPPROF_[A-Z_]*\)".*/\2/p' "$SRC_DIR/preload/options.c" |
	sort >vars

# the variables a man page's ENVIRONMENT section defines: the lines after each .TP
man_variables()
{
	awk '/^\.SH/ { o = ($2 == "ENVIRONMENT") } o && prev == ".TP" { print } { prev = $0 }' "$1" |
		grep -o 'HEAPPROF_[A-Z_]*' | sort -u
}

test_case 'the variables are read from preload/options.c' '
	[ $(wc -l <vars) -ge 16 ] && grep -qx HEAPPROF_FRAMES vars && grep -qx HEAPPROF_PEAK vars
'

test_case 'heapprof.so.7 lists exactly the variables of defs[]' '
	man_variables "$MAN7" >man7 &&
	comm -23 vars man7 | sed "s/^/not in doc\/heapprof.so.7: /" >missing &&
	comm -13 vars man7 | sed "s/^/in doc\/heapprof.so.7, not in options.c: /" >>missing &&
	cat missing && ! test -s missing
'

test_case 'the README table names every variable of defs[]' '
	while read v; do
		grep -q "^| .$v. |" "$README" || { echo "$v is not in the README table"; exit 1; }
	done <vars
'

test_case 'heapprof.so.7 no longer says that nothing is written to files' '
	! grep -q "Nothing is written to files" "$MAN7" && grep -q "HEAPPROF_OUTPUT" "$MAN7"
'
