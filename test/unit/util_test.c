/*
 * Unit test of the analyzer's small shared helpers: sorted_find_u64 (util.h), the
 * lookup the scan's page filter and the heap graph's region index share, against a
 * linear search; json_str (json.h), the one JSON string writer, byte class by class;
 * the escaping of names (escape.h) on each kind of bad byte, and in messages.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "escape_name.h"
#include "json.h"
#include "util.h"
#include "tap.h"

/* the answer sorted_find_u64 must give, found the slow way */
static size_t linear(const uint64_t *v, size_t n, uint64_t key)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == key)
			return i;
	return SIZE_MAX;
}

/* every key in v, each gap between keys and both ends, for each prefix length */
static void sorted_find(void)
{
	const uint64_t v[] = { 0, 1, 5, 6, 100, 0x7fffffffffffULL, UINT64_MAX - 1, UINT64_MAX };
	const size_t nv = sizeof(v) / sizeof(v[0]);
	unsigned bad = 0, checked = 0;

	for (size_t n = 0; n <= nv; n++)
		for (size_t i = 0; i < nv; i++) {
			uint64_t keys[3] = { v[i], v[i] + 1, v[i] - 1 };

			for (int k = 0; k < 3; k++, checked++)
				bad += sorted_find_u64(v, n, keys[k]) != linear(v, n, keys[k]);
		}
	ok(bad == 0, "sorted_find_u64: %u of %u keys as a linear search finds them", checked - bad,
	   checked);
	ok(sorted_find_u64(NULL, 0, 0) == SIZE_MAX, "sorted_find_u64: nothing in an empty array");
	ok(sorted_find_u64(v + 2, 1, 5) == 0 && sorted_find_u64(v + 2, 1, 6) == SIZE_MAX,
	   "sorted_find_u64: one element, found and not");
}

/* json_str(s, in_html) as text, compared with want */
static bool json_is(const char *s, bool in_html, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool same;

	if (!f)
		return false;
	json_str(s, in_html, f);
	fclose(f);
	same = strcmp(buf, want) == 0;
	if (!same)
		printf("# got %s, want %s\n", buf, want);
	free(buf);
	return same;
}

static void json(void)
{
	ok(json_is(NULL, false, "null"), "json_str: NULL is null");
	ok(json_is("", false, "\"\""), "json_str: the empty string");
	ok(json_is("a\"b\\c", false, "\"a\\\"b\\\\c\""), "json_str: quote and backslash");
	ok(json_is("l1\nl2\tx", false, "\"l1\\nl2\\tx\""), "json_str: newline and tab by name");
	ok(json_is("\x01\x1f\x7f\r", false, "\"\\u0001\\u001f\\u007f\\u000d\""),
	   "json_str: other control bytes and DEL as \\u00XX");
	ok(json_is("</script>\xc3\xa9", false, "\"</script>\xc3\xa9\""),
	   "json_str: '<' and UTF-8 as they are");
	ok(json_is("</script>\n", true, "\"\\u003c/script>\\n\""),
	   "json_str in html: '<' as \\u003c, the rest alike");
	ok(json_is("c1 \xc2\x9b nbsp \xc2\xa0", false, "\"c1 \\u009b nbsp \xc2\xa0\""),
	   "json_str: a C1 control as \\u00XX, the next character as it is");
	ok(json_is("caf\xe9 \xe2\x82 \xed\xa0\x80 \xc0\xaf \xff", false,
		   "\"caf\\\\xe9 \\\\xe2\\\\x82 \\\\xed\\\\xa0\\\\x80 \\\\xc0\\\\xaf \\\\xff\""),
	   "json_str: bytes that are not UTF-8 (Latin-1, cut, surrogate, overlong) as \\\\xNN");
}

static const struct {
	const char *in;
	size_t len;	/* escape_char_len(in) */
	const char *out;	/* escape_dup(in) */
} chars[] = {
	{ "a", 1, "a" },
	{ "\\x1b", 1, "\\x1b" },	/* a backslash stays: escaping twice is once */
	{ "\x1b[31m", 0, "\\x1b[31m" },		/* ESC */
	{ "\x07", 0, "\\x07" },
	{ "\x7f", 0, "\\x7f" },			/* DEL */
	{ "\xc3\xa9", 2, "\xc3\xa9" },		/* é */
	{ "\xe2\x82\xac", 3, "\xe2\x82\xac" },	/* € */
	{ "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },	/* U+1F600 */
	{ "\xc2\xa0", 2, "\xc2\xa0" },		/* U+00A0, the first past C1 */
	{ "\xc2\x9b", 0, "\\xc2\\x9b" },		/* U+009B, CSI */
	{ "\xc2\x80", 0, "\\xc2\\x80" },		/* U+0080 */
	{ "\xe9t\xe9", 0, "\\xe9t\\xe9" },		/* Latin-1 */
	{ "\x9b", 0, "\\x9b" },			/* a continuation byte alone */
	{ "\xc0\xaf", 0, "\\xc0\\xaf" },		/* overlong '/' */
	{ "\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf" },	/* overlong, 3 bytes */
	{ "\xed\xb3\xa9", 0, "\\xed\\xb3\\xa9" },	/* a surrogate, U+DCE9 */
	{ "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80" },	/* past U+10FFFF */
	{ "\xe2\x82", 0, "\\xe2\\x82" },		/* cut short */
	{ "\xff\xfe", 0, "\\xff\\xfe" },
	{ "", 0, "" },
};

/* what warn() prints for fmt and arg */
static bool warned(const char *fmt, const char *arg, const char *want)
{
	char got[512] = "";
	FILE *tmp = tmpfile();
	int saved = dup(2);
	bool same;

	if (!tmp || saved < 0)
		return false;
	fflush(stderr);
	dup2(fileno(tmp), 2);
	warn(fmt, arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	if (!fgets(got, sizeof(got), tmp))
		got[0] = 0;
	fclose(tmp);
	same = !strcmp(got, want);
	if (!same)
		printf("# got %s# want %s", got, want);
	return same;
}

static void escape(void)
{
	unsigned bad = 0;
	char buf[8];

	for (size_t i = 0; i < sizeof(chars) / sizeof(chars[0]); i++) {
		char *e = escape_dup(chars[i].in), *twice = escape_dup(e);

		if (escape_char_len(chars[i].in) != chars[i].len || strcmp(e, chars[i].out) ||
		    strcmp(twice, e) || escape_needed(e) ||
		    escape_needed(chars[i].in) != !!strcmp(e, chars[i].in)) {
			printf("# %zu: length %zu, escaped \"%s\"\n", i,
			       escape_char_len(chars[i].in), e);
			bad++;
		}
		free(e);
		free(twice);
	}
	ok(bad == 0, "escape: each kind of byte, and escaping twice is once");
	ok(escape_into(buf, sizeof(buf), "ab\x1b\x1b") == 6 && !strcmp(buf, "ab\\x1b") &&
	   escape_into(buf, 6, "abcd\xc3\xa9") == 4 && !strcmp(buf, "abcd") &&
	   escape_into(buf, 1, "\x1b") == 0 && !buf[0],
	   "escape_into: cut between characters and escapes");
	ok(!escape_name("plain \xc3\xa9") && !escape_name(NULL),
	   "escape_name: nothing to do, no copy");
	ok(warned("cannot open '%s'", "/tmp/a\x1b]0;x\x07\xe9",
		  "heapprof-analyze: warning: cannot open '/tmp/a\\x1b]0;x\\x07\\xe9'\n"),
	   "warn: what a message quotes is escaped");
}

int main(void)
{
	sorted_find();
	json();
	escape();
	return tap_done();
}
