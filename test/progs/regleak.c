/*
 * What heapprof.so leaves in registers on the way back from the malloc family: a
 * variadic call right after each (the program's own, say a printf) saves its argument
 * registers on its stack, where a scan took a stale tag for a damaged header. Prints
 * "N words" that look like a block tag's (top 16 bits HP2_MAGIC16), then "ok".
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "heapprof_format.h"

static int found;

/* The five argument registers after the first, as the call found them. */
static __attribute__((noinline)) void probe(const char *what, ...)
{
	va_list ap;

	va_start(ap, what);
	for (int i = 0; i < 5; i++) {
		unsigned long v = va_arg(ap, unsigned long);

		if ((v >> 48) == HP2_MAGIC16) {
			printf("after %s: a tag's word %#lx\n", what, v);
			found++;
		}
	}
	va_end(ap);
}

int main(void)
{
	void *p, *q = NULL;

	for (int i = 0; i < 3; i++) {
		p = malloc(100);
		probe("malloc");
		p = realloc(p, 200);
		probe("realloc");
		printf("%zu\n", malloc_usable_size(p) >= 200 ? (size_t)200 : (size_t)0);
		free(p);
		probe("free");
		p = calloc(3, 40);
		probe("calloc");
		free(p);
		p = memalign(64, 100);
		probe("memalign");
		if (posix_memalign(&q, 64, 100) == 0)
			probe("posix_memalign");
		free(q);
		free(p);
	}
	printf("%d words\nok\n", found);
	return 0;
}
