/*
 * The malloc family's common calls, N times each (t1015 counts what heapprof.so's entry
 * points execute for them): malloc, realloc of that block, free. Small blocks, so that
 * under sparse sampling nearly every call is one the sample points skip.
 */
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;	/* the compiler may not pair malloc with free away */

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;

	for (long i = 0; i < n; i++) {
		sink = malloc(32);
		sink = realloc(sink, 48);
		if (!sink)
			return 1;
		free(sink);
	}
	printf("done %ld\n", n);
	return 0;
}
