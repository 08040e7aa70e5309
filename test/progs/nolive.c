/*
 * Allocates and frees again, so nothing is live, then says "ready" with write(2) (stdio
 * would keep a buffer) and waits: the core of a program that ran under heapprof.so
 * but had no live block (t2001).
 */
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	for (int i = 0; i < 100; i++) {
		char *volatile p = malloc(100 + (size_t)i);

		free(p);
	}
	if (write(1, "ready\n", 6) != 6)
		return 1;
	for (;;)
		pause();
}
