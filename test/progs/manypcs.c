/*
 * Many distinct return addresses, for the unwinder's rule cache (t1010):
 *   manypcs N   one block of 16 bytes from each of N (up to 8192) call sites of one
 *               function, each its own return address, then exits (frees none).
 */
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

static __attribute__((noinline)) void *leaf(unsigned i)
{
	void *p = malloc(16);

	sink = p;
	return (char *)p + (i & 0);
}

/* -O0: each case keeps its own call, which an optimizer would merge into one */
#define C case __COUNTER__: p = leaf(n); break;
#define C4 C C C C
#define C16 C4 C4 C4 C4
#define C64 C16 C16 C16 C16
#define C256 C64 C64 C64 C64
#define C1K C256 C256 C256 C256
#define C8K C1K C1K C1K C1K C1K C1K C1K C1K

static __attribute__((noinline, optimize("O0"))) void *site(unsigned n)
{
	void *p = NULL;

	switch (n) {
	C8K
	}
	sink = p;
	return p;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 8192;

	for (unsigned i = 0; i < n && i < 8192; i++)
		if (!site(i))
			return 1;
	puts("done");
	return 0;
}
