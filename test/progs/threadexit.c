/*
 * Threads that are gone, and one that is not (t6010): three that each held a block in
 * a local only and ended, joined (glibc keeps their stacks for reuse; memcheck calls
 * the blocks definitely lost); one whose return value was left unread at its join (it
 * stays in the thread's descriptor, which memcheck scans: still reachable); one alive,
 * waiting on a pipe, with a block in a local (reachable). Then exit, or with "wait",
 * prints "ready" and waits to be killed (for gcore).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile size_t sink;
static int go[2], made[2];

/* zeroed: a block made where an ended thread's memory was holds no stale pointers */
NOINLINE static void *alloc_local(size_t n) { void *p = calloc(1, n); sink += (size_t)p; return p; }
NOINLINE static void *alloc_ret(size_t n) { void *p = calloc(1, n); sink += (size_t)p; return p; }
NOINLINE static void *alloc_alive(size_t n) { void *p = calloc(1, n); sink += (size_t)p; return p; }

static void *held_local(void *arg)
{
	void *volatile keep = alloc_local((size_t)arg);

	sink += (size_t)keep;
	return NULL;
}

static void *returns(void *arg)
{
	return alloc_ret((size_t)arg);
}

static void *alive(void *arg)
{
	void *volatile keep = alloc_alive(24);
	char c;

	(void)arg;
	if (write(made[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
		sink++;
	sink += (size_t)keep;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3], r, a;
	char c;

	if (pipe(go) < 0 || pipe(made) < 0 || pthread_create(&a, NULL, alive, NULL) ||
	    read(made[0], &c, 1) != 1)
		return 1;
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, held_local, (void *)(size_t)(100 + i)))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	if (pthread_create(&r, NULL, returns, (void *)48) || pthread_join(r, NULL))
		return 1;
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		printf("ready\n");
		fflush(stdout);
		pause();
	}
	exit(0);	/* the waiting thread is alive still */
}
