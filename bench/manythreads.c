/*
 * N threads blocked on a pipe, each holding a block, while the main thread asks for
 * snapshots: the pause heapprof_snapshot() costs its caller with that many threads to
 * list (bench/sigthread.sh).
 *   manythreads N ROUNDS    prints "pause MS" per snapshot, the files go to HEAPPROF_OUTPUT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "heapprof.h"

static int go[2];

static void *waiter(void *arg)
{
	void *volatile keep = malloc(64);
	char c;

	(void)arg;
	if (read(go[0], &c, 1) < 0)
		return keep;
	return NULL;
}

static double ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, rounds = argc > 2 ? atoi(argv[2]) : 5;
	pthread_attr_t attr;
	pthread_t t;

	if (pipe(go) < 0 || pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 1 << 16))
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, &attr, waiter, NULL))
			return 1;
	sleep(1);	/* all of them in read() */
	for (int r = 0; r < rounds; r++) {
		double t0 = ms();
		int rc = heapprof_snapshot(NULL);

		printf("pause %.2f\n", ms() - t0);
		if (rc || heapprof_snapshot_wait(60000))
			return 1;
	}
	return 0;
}
