#!/bin/sh
# The docs as a reader meets them: a README of at most 300 lines whose demo output is
# what make demo prints, links that lead somewhere, and no path of the machine the docs
# or the golden files were written on.
. "$(dirname "$0")/lib.sh"
need_tool python3

README=$SRC_DIR/README.md

test_case 'the README is at most 300 lines' '
	expect_num "lines in README.md" $(wc -l <"$README") -le 300
'

test_case 'every relative link in README.md and docs/ names a file and a heading there' '
	python3 "$TEST_DIR/helpers/doc_links.py" "$README" "$SRC_DIR"/docs/*.md
'

test_case 'doc_links.py finds a missing file and a missing heading' '
	mkdir -p d && printf "# One\n\n## Two words (\`--x\`)\n" >d/a.md &&
	printf "[a](a.md#two-words---x) [b](a.md#one) [c](#three) [d](nosuch.md)\n\n# Three\n" >d/b.md &&
	python3 "$TEST_DIR/helpers/doc_links.py" d/a.md >out &&
	printf "[x](a.md#three)\n" >d/c.md &&
	! python3 "$TEST_DIR/helpers/doc_links.py" d/b.md d/c.md >out &&
	expect_grep -x "d/b.md: nosuch.md: no such file" out &&
	expect_grep -x "d/c.md: a.md#three: no such heading" out &&
	expect_eq "broken links found" 2 "$(wc -l <out)"
'

# A path of the machine the docs were written on (a checkout, a home directory) means
# nothing to a reader: an absolute path in the docs or the golden files starts with a
# system directory (or is /path/to/... by way of example), and none names this checkout.
test_case 'no path of a checkout or a home directory in the docs and golden files' '
	for f in "$README" "$SRC_DIR"/docs/*.md "$SRC_DIR"/doc/* "$SRC_DIR"/test/data/*.expected; do
		grep -H -n -F -e "$SRC_DIR" "$f"
		grep -H -n -o -E "(^|[] \`'"'"'\"(=:])/[a-zA-Z][a-zA-Z0-9_.-]*/[^ \`'"'"'\")]*" "$f" |
			grep -v -E ":[] \`'"'"'\"(=:]?/(usr|lib|proc|dev|sys|tmp|opt|etc|var|bin|share|path)/"
	done >paths
	expect_no_grep . paths
'

# make demo against the README: the same commands and the same report, but for the pid,
# the addresses and the bytes scanned (the process's own mappings)
demo_norm()
{
	sed -E "s/(pid |demo\.core[. ])[0-9]+/\1PID/g; s/0x[0-9a-f]{16}/ADDR/g; s/^(  scanned: ).*/\1.../"
}

if [ -n "${SANITIZE:-}" ]; then
	# the sanitizers' runtime brings libstdc++ into the demo, and its 72,704-byte
	# emergency pool is one more block than the README's plain build shows
	skip_case 'the README shows what make demo prints' 'the README shows the plain build'
elif command -v gcore >/dev/null 2>&1; then
	test_case 'the README shows what make demo prints' '
		sh "$SRC_DIR/scripts/demo.sh" "$BUILD" >demo.out 2>demo.err &&
		demo_norm <demo.out >got &&
		sed -n "/^\\\$ LD_PRELOAD=heapprof.so .\/demo &/,/^\`\`\`\$/p" "$README" | sed "\$d" |
			demo_norm >want &&
		expect_grep "^  program:    \./demo\$" got && expect_same want got
	'
else
	skip_case 'the README shows what make demo prints' 'gcore is not installed'
fi
