/*
 * getline into a buffer from malloc, grown by the libc: linked with libheapprof.a into
 * a dynamic program, the shared libc's realloc must never see a block of heapprof's
 * (t3011). Reads three lines from stdin, then ';'-ended records to its end, prints
 * each length, frees the buffer.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	size_t n = 4;
	char *line = malloc(n);
	ssize_t len;

	if (!line)
		return 1;
	for (int i = 0; i < 3 && (len = getline(&line, &n, stdin)) >= 0; i++)
		printf("%zd\n", len);
	while ((len = getdelim(&line, &n, ';', stdin)) >= 0)
		printf("%zd\n", len);
	free(line);
	return 0;
}
