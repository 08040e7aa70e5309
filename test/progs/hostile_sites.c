/*
 * Allocation sites with the hostile names of hostile.h, built without -g into a
 * library whose file name is as hostile (test/t4011-hostile-names.sh builds it): the
 * symbol table is all that names these functions.
 */
#include <stdlib.h>

#include "hostile.h"

#define DEFINE_SITE(fn, label)                                         \
	__attribute__((noinline)) void *fn(size_t n)                   \
	{                                                              \
		void *p = malloc(n);                                   \
		__asm__ volatile("" : : "r"(p) : "memory"); /* kept */ \
		return p;                                              \
	}
SITE_LABELS(DEFINE_SITE)
