/*
 * flame.c on fixed stacks: the same stacks in another order give the same bytes,
 * and the SVG is written to argv[1] for test/t4003-flame.sh to check with xmllint
 * and rsvg-convert. Totals: 6,000,000 + 2,000,000 + 1,048,576 + 3 bytes = 9,048,579.
 * Then names of any bytes: a long one of 2- and 3-byte UTF-8 characters that labels
 * of several widths cut, one with a Latin-1 byte and a control character; that SVG
 * goes to argv[2], for xmllint too.
 */
#define _GNU_SOURCE
#include <locale.h>
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

#define WIDE "\xc3\xa9\xe2\x82\xac\xe6\xbc\xa2"	/* "é€漢" */
#define WIDE5 WIDE WIDE WIDE WIDE WIDE
static const char *const h1[] = { "main", "a", "cut_" WIDE5 WIDE5 WIDE5 WIDE5 WIDE5 WIDE5 };
static const char *const h2[] = { "main", "bb", "cut_" WIDE5 WIDE5 WIDE5 WIDE5 WIDE5 WIDE5 };
static const char *const h3[] = { "main", "ccc", "cut_" WIDE5 WIDE5 WIDE5 WIDE5 WIDE5 WIDE5 };
static const char *const h4[] = { "main", "latin_caf\xe9\x01" };
static const struct flame_stack hostile[] = {
	{ h1, 3, 500 }, { h2, 3, 300 }, { h3, 3, 170 }, { h4, 2, 30 },
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
	ok(a && !strstr(a, "odd &lt;&amp;&quot;&apos;&gt; \\x01name ("),
	   "the tiny frame is left out");
	ok(a && count(a, "http") == 1 && strstr(a, "xmlns=\"http://www.w3.org/2000/svg\""),
	   "no external resources, only the SVG namespace");
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		ok(f && fputs(a, f) >= 0 && fclose(f) == 0, "wrote %s", argv[1]);
	}
	free(a);
	free(b);

	/* glibc's own UTF-8 decoder judges: it takes no bad sequence, nor a cut one */
	a = svg(hostile, 4);
	ok(setlocale(LC_CTYPE, "C.UTF-8") && a && mbstowcs(NULL, a, 0) != (size_t)-1,
	   "names of any bytes: the SVG is UTF-8");
	ok(a && count(a, "..</text>") >= 3 && strstr(a, ">cut_" WIDE),
	   "the long name's labels are cut");
	ok(a && strstr(a, "latin_caf\\xe9\\x01"),
	   "a Latin-1 byte and a control character as \\xNN");
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");

		ok(f && a && fputs(a, f) >= 0 && fclose(f) == 0, "wrote %s", argv[2]);
	}
	free(a);
	return tap_done();
}
