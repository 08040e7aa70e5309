/*
 * How many pthread keys a program gets (t1003): it allocates first, so that
 * heapprof.so has made whatever key of its own it makes, then creates keys until
 * pthread_key_create refuses, and prints the count.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	pthread_key_t k;
	int n = 0;

	free(malloc(32));
	while (pthread_key_create(&k, NULL) == 0)
		n++;
	printf("%d\n", n);
	return 0;
}
