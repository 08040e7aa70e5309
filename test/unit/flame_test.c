/*
 * flame.c on fixed stacks: the same stacks in another order give the same bytes,
 * and the SVG is written to argv[1] for test/t4003-flame.sh to check with xmllint
 * and rsvg-convert. Totals: 6,000,000 + 2,000,000 + 1,048,576 + 3 bytes = 9,048,579.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "tap.h"

static const char *const s1[] = { "_start", "main", "site_big" };
static const char *const s2[] = { "_start", "main", "site_small" };
static const char *const s3[] = { "_start", "main", "std::vector<int>::push_back(int&&)",
				  "operator new(unsigned long)" };
static const char *const s4[] = { "_start", "main", "odd <&\"'> \x01name" };
static const struct flame_stack stacks[] = {
	{ s1, 3, 6000000 }, { s2, 3, 2000000 }, { s3, 4, 1048576 }, { s4, 3, 3 },
};

static char *svg(const struct flame_stack *st, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f || flame_write(st, n, "bytes", "live bytes <test>", f) < 0)
		return NULL;
	fclose(f);
	return buf;
}

static unsigned count(const char *s, const char *what)
{
	unsigned n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	struct flame_stack rev[4];
	char *a = svg(stacks, 4), *b;

	for (size_t i = 0; i < 4; i++)
		rev[i] = stacks[3 - i];
	b = svg(rev, 4);
	ok(a && b, "flame_write succeeds");
	ok(a && b && !strcmp(a, b), "stacks in another order give the same bytes");
	ok(a && strstr(a, "<title>all (9048579 bytes, 100.00%)</title>"), "the root holds the total");
	ok(a && strstr(a, "<title>main (9048579 bytes, 100.00%)</title>"), "main holds it all");
	ok(a && strstr(a, "<title>site_big (6000000 bytes, 66.31%)</title>"), "site_big: value and percent");
	ok(a && strstr(a, "std::vector&lt;int&gt;::push_back(int&amp;&amp;)"), "C++ names are escaped");
	ok(a && !strstr(a, "odd <&"), "the odd name is escaped");
	ok(a && !strstr(a, "odd &lt;&amp;&quot;&apos;&gt; ?name ("), "the tiny frame is left out");
	ok(a && count(a, "http") == 1 && strstr(a, "xmlns=\"http://www.w3.org/2000/svg\""),
	   "no external resources, only the SVG namespace");
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		ok(f && fputs(a, f) >= 0 && fclose(f) == 0, "wrote %s", argv[1]);
	}
	free(a);
	free(b);
	return tap_done();
}
