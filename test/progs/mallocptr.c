/*
 * Built without PIE, calls malloc through a pointer (as python3's allocator table does),
 * so that its malloc is a canonical PLT entry: for t1001-preload.sh, heapprof.so must
 * not take that stub for a malloc of the program's own. Exits with its block live.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *(*volatile g_alloc)(size_t);
static void *volatile g_keep;

__attribute__((noinline)) static void *alloc_through_pointer(size_t n)
{
	void *p = g_alloc(n);

	memset(p, 1, n);
	return p;
}

int main(void)
{
	g_alloc = malloc;	/* in code: an absolute address, not a data relocation */
	g_keep = alloc_through_pointer(100);
	printf("ok\n");
	return 0;
}
