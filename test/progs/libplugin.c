/*
 * A plugin that plugin_host loads, calls and unloads: its blocks outlive its code, so
 * a report on a later core names these functions only through heapprof's module
 * record (t3005). Each function fills its block so no malloc+memset becomes calloc.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *plugin_alloc(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 0x5a, n);
	return p;
}

__attribute__((noinline)) void *plugin_alloc_big(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 0xa5, n);
	return p;
}

/* n blocks of 1000 bytes and one of 5000 into keep[0..n] */
void plugin_run(void **keep, int n)
{
	for (int i = 0; i < n; i++)
		keep[i] = plugin_alloc(1000);
	keep[n] = plugin_alloc_big(5000);
}
