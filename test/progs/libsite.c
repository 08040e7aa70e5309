/* A shared library of the tests' own: its frames must be named in the report. */
#include <stdlib.h>

static volatile size_t sink;

__attribute__((noinline)) void *lib_alloc(size_t size)
{
	void *p = malloc(size);

	sink += (size_t)p;
	return p;
}
