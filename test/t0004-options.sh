#!/bin/sh
# Docs that cannot drift. heapprof-analyze's options: doc/heapprof-analyze.1 has one
# entry per option of --help, and each starts with the option's --help text, written
# there by scripts/man-options (make man); the rest of an entry is the page's own.
# heapprof.so's variables: build/unit/env_table prints the table the preload reads
# (preload/options.c's defs[]); heapprof.so.7 and the README's table list exactly its
# variables, and give its defaults. Nothing here reads the sources' layout.
. "$(dirname "$0")/lib.sh"

MAN1=$SRC_DIR/doc/heapprof-analyze.1
MAN7=$SRC_DIR/doc/heapprof.so.7
README=$SRC_DIR/README.md

# the long options of --help, one a line
heapprof-analyze --help >help
sed -n 's/^  \(-[a-zA-Z], \|    \)--\([a-z][a-z-]*\).*/\2/p' help | sort >opts

# the options a man page's OPTIONS section has entries for: each .TP's tag line (the
# first line after it that is not a comment)
man_options()
{
	awk '/^\.SH/ { o = ($2 == "OPTIONS") } o && /^\.TP/ { tag = 1; next }
		tag && !/^\.\\"/ { print; tag = 0 }' "$1" |
		sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z-]*' | sed 's/^--//' | sort
}

test_case '--help lists the options' '
	expect_num "options in --help" $(wc -l <opts) -ge 30 &&
	expect_grep -x format opts && expect_grep -x short-names opts && expect_grep -x leaks opts
'

test_case 'doc/heapprof-analyze.1 starts each option with its --help text (make man)' '
	sh "$SRC_DIR/scripts/man-options" help "$MAN1" >man.1 &&
	expect_same "$MAN1" man.1 ||
	{ echo "doc/heapprof-analyze.1 is not what --help gives: make man"; false; }
'

test_case 'the man page has one entry per option of --help, and no other' '
	man_options "$MAN1" >man &&
	comm -23 opts man | sed "s/^/not in doc\/heapprof-analyze.1: --/" >missing &&
	comm -13 opts man | sed "s/^/in doc\/heapprof-analyze.1, not in --help: --/" >>missing &&
	expect_no_grep . missing
'

test_case 'man-options fails on an option without an entry and on an entry without an option' '
	grep -v "^.\\\\\" help --top\$" "$MAN1" >short.1 &&
	! sh "$SRC_DIR/scripts/man-options" help short.1 >/dev/null 2>err &&
	expect_grep -x -F "man-options: --top is in --help, not in the man page (give it an entry with .\\\" help --top)" err &&
	sed "s/^.\\\\\" help --top\$/.\\\\\" help --topp/" "$MAN1" >extra.1 &&
	! sh "$SRC_DIR/scripts/man-options" help extra.1 >/dev/null 2>err &&
	expect_grep -x -F "man-options: --topp is in the man page, not in --help" err
'

test_case '-j 0 and --jobs=0 are bad usage' '
	for args in "-j 0" "--jobs=0" "-j0"; do
		heapprof-analyze $args prog core >out 2>err; rc=$?
		[ $rc = 64 ] && ! test -s out && grep -q "^heapprof-analyze: --jobs needs a number above 0" err ||
		{ echo "args [$args]: status $rc"; cat err; exit 1; }
	done
'

# the preload's table: "NAME number DEFAULT" ("auto" when worked out at start-up, as
# HEAPPROF_REPLAY's: the docs say how in words) or "NAME string", one a line
"$BUILD/unit/env_table" >table
cut -d" " -f1 table | sort >vars

# the variables a man page's ENVIRONMENT section defines: the lines after each .TP
man_variables()
{
	awk '/^\.SH/ { o = ($2 == "ENVIRONMENT") } o && prev == ".TP" { print } { prev = $0 }' "$1" |
		grep -o 'HEAPPROF_[A-Z_]*' | sort -u
}

# man_entry VAR: the text of VAR's entry in heapprof.so.7, roff requests dropped
man_entry()
{
	awk -v v="$1" '/^\.(TP|SH)/ { on = 0 } on && !/^\.\\"/ { print }
		prev == ".TP" && index($0, v "=") { on = 1 } { prev = $0 }' "$MAN7" |
		sed 's/^\.[A-Z]* *//; s/\\f[BIR]//g; s/\\-/-/g'
}

# readme_rows: the README's table as "NAME DEFAULT-CELL", one a line
readme_rows()
{
	sed -n 's/^| `\(HEAPPROF_[A-Z_]*\)` | \([^|]*\) |.*/\1 \2/p' "$README"
}

test_case 'env_table prints the table preload/options.c reads' '
	expect_num "variables" $(wc -l <vars) -ge 16 &&
	expect_grep -x "HEAPPROF_FRAMES number 128" table &&
	expect_grep -x "HEAPPROF_REPLAY number auto" table &&
	expect_grep -x "HEAPPROF_OUTPUT string" table
'

test_case 'heapprof.so.7 lists exactly the variables of the table' '
	man_variables "$MAN7" >man7 &&
	comm -23 vars man7 | sed "s/^/not in doc\/heapprof.so.7: /" >missing &&
	comm -13 vars man7 | sed "s/^/in doc\/heapprof.so.7, not in preload\/options.c: /" >>missing &&
	expect_no_grep . missing
'

test_case 'heapprof.so.7 gives each numeric default' '
	while read name kind def; do
		[ $kind = number ] && [ $def != auto ] || continue
		man_entry $name | tr "\n" " " >$name.entry
		expect_grep -E "\(default $def[,;)]|$def \(the default" $name.entry || echo $name >>bad
	done <table &&
	! test -s bad
'

test_case 'the README table lists exactly the variables, with their defaults' '
	readme_rows >rows && cut -d" " -f1 rows | sort >readme &&
	comm -23 vars readme | sed "s/^/not in the README table: /" >missing &&
	comm -13 vars readme | sed "s/^/in the README table, not in preload\/options.c: /" >>missing &&
	expect_no_grep . missing &&
	while read name kind def; do
		cell=$(sed -n "s/^$name //p" rows)
		if [ $kind = number ] && [ $def != auto ]; then
			expect_eq "$name default in the README" "\`$def\`" "${cell%% *}" || exit 1
		else
			[ -n "$cell" ] || { echo "$name: no default in the README"; exit 1; }
		fi
	done <table
'

test_case 'heapprof.so.7 no longer says that nothing is written to files' '
	expect_no_grep "Nothing is written to files" "$MAN7" && expect_grep "HEAPPROF_OUTPUT" "$MAN7"
'
