/*
 * The interpreters heapprof.so knows, one row each (interp.h); start-up asks them in
 * order and keeps the first that finds its runtime in the process.
 */
#include <stddef.h>

#include "interp.h"

static const struct interp *const interps[] = {
	&python_interp,
};

const struct interp *interp_find(void)
{
	for (size_t i = 0; i < sizeof(interps) / sizeof(interps[0]); i++)
		if (interps[i]->init())
			return interps[i];
	return NULL;
}
