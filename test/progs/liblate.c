/* Loaded by attachee after heapprof attached (t6013): its references to the malloc
 * family must lead to heapprof too, or late_free() of a tagged block would abort. */
#include <stdlib.h>

void *late_alloc(size_t n);
void late_free(void *p);

__attribute__((noinline)) void *late_alloc(size_t n)
{
	void *volatile p = malloc(n);

	return p;
}

void late_free(void *p)
{
	free(p);
}
