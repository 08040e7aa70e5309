/*
 * The heap graph's worst case, for the leak and retained-size cost figures: 300,000
 * blocks of 64 bytes, each holding 8 pointers to random blocks (2.4 million pointers,
 * all into the heap), one global pointing at the first block. Prints "ready" and
 * waits for a snapshot.
 *   randheap [N]   N blocks instead of 300,000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PTRS 8		/* 64-byte blocks */

void **g_first;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 300000;
	void ***b = malloc(n * sizeof(*b));
	uint64_t seed = 88172645463325252ULL;

	if (!b || !n)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (!(b[i] = malloc(PTRS * sizeof(void *))))
			return 1;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < PTRS; k++)
			b[i][k] = b[rnd(&seed) % n];
	g_first = (void **)b[0];
	free(b);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	for (;;)
		pause();
}
