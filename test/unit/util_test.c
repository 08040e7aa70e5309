/*
 * Unit test of the analyzer's small shared helpers: sorted_find_u64 (util.h), the
 * lookup the scan's page filter and the heap graph's region index share, against a
 * linear search; json_str (json.h), the one JSON string writer, byte class by class.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
}

int main(void)
{
	sorted_find();
	json();
	return tap_done();
}
