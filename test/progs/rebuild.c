/*
 * A program rebuilt in place (t3010): built once as is and once with -DEXTRA, which
 * puts a function before big() so that every address after it moves. Allocates from
 * big() and small() (and extra() when built with it), prints "ready" and waits for a
 * signal so a core can be taken.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile size_t sink;

#ifdef EXTRA
/* Long enough that big()'s old code lies inside it in the rebuilt program. */
NOINLINE void *extra(size_t size)
{
	void *p = malloc(size);

	for (size_t i = 0; i < size; i++)
		sink += i * 7 + (sink >> 3) + (sink ^ 0x55) * 11 + (i % 13) * (sink % 17);
	for (size_t i = 0; i < size; i++)
		sink ^= i * 5 + (sink << 2) + (sink ^ 0xaa) * 3 + (i % 11) * (sink % 19);
	sink += (size_t)p;
	return p;
}
#endif

NOINLINE void *big(size_t size) { void *p = malloc(size); sink += (size_t)p; return p; }
NOINLINE void *small(size_t size) { void *p = malloc(size); sink += (size_t)p; return p; }

int main(void)
{
#ifdef EXTRA
	extra(50);
#endif
	big(300000);
	for (int i = 0; i < 10; i++)
		small(100);
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
