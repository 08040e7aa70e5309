/*
 * bigmap BYTES: reserve BYTES of address space (PROT_NONE, MAP_NORESERVE: no memory is
 * used), print ready, and wait. A core of it by gdb's gcore holds them all, as zeros
 * (t6002: the wrapper checks the room first).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long long n;

	if (argc != 2 || (n = strtoull(argv[1], NULL, 0)) == 0)
		return 64;
	if (mmap(NULL, (size_t)n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) ==
	    MAP_FAILED) {
		perror("bigmap: mmap");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
