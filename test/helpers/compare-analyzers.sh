#!/bin/sh
# compare-analyzers.sh OLD NEW INPUTS [DIR]: run two heapprof-analyze binaries on every
# input listed in INPUTS with every option set below, and name each run whose standard
# output, standard error or exit status differ. For a refactoring that must not change a
# report: build the old analyzer, keep a copy, and compare it with the new one.
#
# INPUTS has one line per input, NAME|ARGS|BASE: ARGS the program and core as the
# analyzer takes them (or --raw=IMAGE@ADDR PROGRAM), BASE another core of the same
# program for the --base runs (empty: none). DIR (default $TMPDIR/compare) keeps each
# side's output; OLD's are kept between runs while OLD stays the same binary.
# A run whose JSON report (or HTML page's data) differs only in the order of object
# members is counted apart, as "reordered"; an HTML page whose data are the same but
# whose own markup or script changed, as "page". Prints "N runs compared, M differ, K
# reordered, P page" last; the status is 1 when some differ.
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD NEW INPUTS [DIR]" >&2; exit 64; }
OLD=$1 NEW=$2 INPUTS=$3
DIR=${4:-${TMPDIR:-/tmp}/compare}
mkdir -p "$DIR/old" "$DIR/new"
sum=$(cksum <"$OLD")
[ "$(cat "$DIR/old.sum" 2>/dev/null)" = "$sum" ] || { rm -f "$DIR"/old/*; echo "$sum" >"$DIR/old.sum"; }

# Option sets; a leading '*' runs the set in every format, the others in text and json.
SETS='*
*--top=3
*--metric=inuse_objects
*--metric=alloc_space
--metric=alloc_objects
--metric=alloc_time
*--metric=retained_space
--metric=retained_space --top=0
*--leaks
--leaks=all
--leaks=possible,reachable --top=0
--fail-on-leak
*--memory
--memory --top=2
--memory --leaks
--memory --age
--leaks --age
--memory --leaks --age --top=5
*--age
--older-than=0s
--older-than=1d
--age --older-than=0s
*--lifetimes
--lifetimes --top=0
--lifetimes --focus=main
*--peak
*--peak-diff
--peak --timeline
--peak --metric=inuse_objects
--timeline
*--by=function
--by=file
--by=module --top=2
--by=function --focus=main
*--focus=main
--focus=site_ --hide=^main$
--ignore=site_big
--hide=^operator
--max-frames=2
*--base=BASE
--base=BASE --top=2
--base=BASE --by=function
--base=BASE --focus=main
*--by-thread
--by-thread --leaks
--region=parse
*--events
--events -v
*--why=main
--why=site_ --top=1
--why=0x1
--why=main --leaks
--short-names
--min-percent=5
--python=native
--python=python
--python=merged --focus=run
-f text -o OUT
-f json -o OUT
--why=main -o OUT
--by=function -o OUT'

# same_data OLD NEW: 0 when both are JSON, or HTML pages around JSON data, equal as
# values; 2 when two pages' data are, and the pages around them are not; else 1
same_data()
{
	python3 - "$1" "$2" <<'PY' 2>/dev/null
import json, re, sys
def load(p):
    t = open(p, encoding="utf-8", errors="surrogateescape").read()
    m = re.search(r'(<script id="hp-data" type="application/json">)(.*?)(</script>)', t, re.S)
    if m:
        return t[:m.start(2)] + t[m.end(2):], json.loads(m.group(2))
    return "", json.loads(t)
a, b = load(sys.argv[1]), load(sys.argv[2])
sys.exit(0 if a == b else 2 if a[1] == b[1] else 1)
PY
}

# run SIDE BIN KEY ARGS...: one run's stdout, stderr and status into DIR/SIDE/KEY.*
run()
{
	side=$1 bin=$2 key=$3
	shift 3
	[ "$side" = old ] && [ -f "$DIR/old/$key.rc" ] && return
	out="$DIR/$side/$key.file"
	rm -f "$out"
	# the -o file's name is in no output: each side writes its own
	set -- $(printf '%s\n' "$@" | sed "s|^OUT\$|$out|")
	"$bin" -j 1 "$@" >"$DIR/$side/$key.out" 2>"$DIR/$side/$key.err"
	echo $? >"$DIR/$side/$key.rc"
	[ -f "$out" ] && cat "$out" >>"$DIR/$side/$key.out"
	rm -f "$out"
}

while IFS='|' read -r name args base; do
	[ -n "$name" ] || continue
	printf '%s\n' "$SETS" | while IFS= read -r set; do
		all=
		case $set in '*'*) all=1; set=${set#'*'} ;; esac
		case $set in *BASE*) [ -n "$base" ] || continue; set=$(printf '%s' "$set" | sed "s|BASE|$base|") ;; esac
		case $set in *-f\ *) formats=- ;; *) formats=${all:+text collapsed pprof svg json html}; formats=${formats:-text json} ;; esac
		for f in $formats; do
			fo=
			[ "$f" = - ] || fo="-f $f"
			key=$(printf '%s %s %s' "$name" "$fo" "$set" | cksum | cut -d' ' -f1)
			run old "$OLD" "$key" $fo $set $args
			run new "$NEW" "$key" $fo $set $args
			if ! cmp -s "$DIR/old/$key.err" "$DIR/new/$key.err" ||
			   ! cmp -s "$DIR/old/$key.rc" "$DIR/new/$key.rc"; then
				echo "differ: $name: $fo $set ($DIR/*/$key.*)"
			elif cmp -s "$DIR/old/$key.out" "$DIR/new/$key.out"; then
				echo "same: $name: $fo $set"
			else
				same_data "$DIR/old/$key.out" "$DIR/new/$key.out"
				case $? in
				0) echo "reordered: $name: $fo $set ($DIR/*/$key.*)" ;;
				2) echo "page: $name: $fo $set ($DIR/*/$key.*)" ;;
				*) echo "differ: $name: $fo $set ($DIR/*/$key.*)" ;;
				esac
			fi
		done
	done
done <"$INPUTS" >"$DIR/log"
n=$(grep -c '^same\|^differ\|^reordered\|^page' "$DIR/log")
bad=$(grep -c '^differ' "$DIR/log")
moved=$(grep -c '^reordered' "$DIR/log")
page=$(grep -c '^page' "$DIR/log")
grep '^differ\|^reordered\|^page' "$DIR/log"
echo "$n runs compared, $bad differ, $moved reordered, $page page"
[ "$bad" -eq 0 ]
