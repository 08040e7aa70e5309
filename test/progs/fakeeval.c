/*
 * A stand-in for CPython in the analyzer's Python frame tests (t2013): functions named
 * as the interpreter's evaluation loop is, whose addresses the tests put in made-up
 * stack records beside Python frames. Run, it allocates once through that chain.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, used))

volatile size_t sink;

NOINLINE void *bytearray_resize(size_t n)
{
	void *p = malloc(n);

	sink += (size_t)p;
	return p;
}

/* the name the analyzer replaces by Python frames */
NOINLINE void *_PyEval_EvalFrameDefault(size_t n, int depth)
{
	void *p = depth ? _PyEval_EvalFrameDefault(n, depth - 1) : bytearray_resize(n);

	sink++;
	return p;
}

NOINLINE void *call_object(size_t n)
{
	void *p = _PyEval_EvalFrameDefault(n, 0);

	sink++;
	return p;
}

int main(void)
{
	free(call_object(16));
	puts("ok");
	return 0;
}
