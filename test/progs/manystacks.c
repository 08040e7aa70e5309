/*
 * Many distinct stacks, for the size and load time of big reports (t4008):
 *   manystacks BITS   2^BITS blocks of 16..23 bytes, each from its own stack: a chain of
 *                     BITS calls, each through one of two call sites (bit i of the
 *                     block's number picks which). Prints "ready" and waits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile sink;

/* no sibling calls: each call site must stay a return address of its own */
static __attribute__((noinline, optimize("no-optimize-sibling-calls"))) void *
branch(int depth, unsigned bits)
{
	void *p;

	if (!depth)
		return malloc(16 + (bits & 7));
	if (bits & 1) {
		p = branch(depth - 1, bits >> 1);
		sink = p;
	} else {
		p = branch(depth - 1, bits >> 1);
		sink = (char *)p + 1;
	}
	return p;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	if (n < 1 || n > 20) {
		fprintf(stderr, "usage: manystacks BITS (1..20)\n");
		return 64;
	}
	for (unsigned i = 0; i < 1u << n; i++)
		branch(n, i);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
