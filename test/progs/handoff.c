/*
 * Blocks handed to threads that free them and end: spike() makes 10,000,000 bytes and
 * frees them, then N times made() makes 20,000 bytes that a new thread frees before it
 * ends, each thread also making and freeing a block of its own first. The threads end
 * in turn by returning, by pthread_exit() and by cancellation. Then, with a sample
 * due, one more allocation. heapprof's live counts must follow: the peak stays the
 * spike, and the timeline ends near what is live.
 *   handoff [N]        (default 2000)
 * PEAKS_END=wait: says "ready" and waits for a core instead of exiting.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPIKE 10000000
#define HANDED 20000

static void *volatile sink;

static __attribute__((noinline)) void spike(void)
{
	char *p = malloc(SPIKE);

	memset(p, 1, SPIKE);	/* as massif and a core see it: touched */
	sink = p;
	free(p);
}

static __attribute__((noinline)) void *made(void)
{
	return malloc(HANDED);
}

/* A block of the thread's own first: its counts then have a record to go to. */
static __attribute__((noinline)) void own(void)
{
	sink = malloc(100);
	free(sink);
}

static void *by_return(void *p)
{
	own();
	free(p);
	return NULL;
}

static void *by_exit(void *p)
{
	own();
	free(p);
	pthread_exit(NULL);
}

static pthread_barrier_t freed;

static void *by_cancel(void *p)
{
	own();
	free(p);
	pthread_barrier_wait(&freed);
	for (;;)
		pause();	/* a cancellation point */
	return NULL;	/* never: the thread ends in pause() */
}

int main(int argc, char **argv)
{
	void *(*const end[])(void *) = { by_return, by_exit, by_cancel };
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	struct timespec ms10 = { 0, 10000000 };
	const char *mode = getenv("PEAKS_END");

	pthread_barrier_init(&freed, NULL, 2);
	spike();
	for (int i = 0; i < n; i++) {
		int k = i % 3;
		pthread_t t;

		if (pthread_create(&t, NULL, end[k], made()) != 0) {
			perror("handoff");
			return 1;
		}
		if (end[k] == by_cancel) {
			pthread_barrier_wait(&freed);
			pthread_cancel(t);
		}
		pthread_join(t, NULL);
	}
	nanosleep(&ms10, NULL);	/* past the timeline's interval: the next call samples */
	own();
	if (mode && !strcmp(mode, "wait")) {
		if (write(1, "ready\n", 6) != 6)
			return 1;
		for (;;)
			pause();
	}
	return 0;
}
