/*
 * A program that leaks until its memory limit ends it (HEAPPROF_OOM, t6012 and
 * bench/oom.sh): blocks of SIZE bytes from leak_block(), each written whole, chained
 * through their first word, at RATE MB/s (0: as fast as it can).
 *   oomleak [-r RATE] [-s SIZE] [-t THREADS] [-m MAX_MB] [-f]
 * -t: THREADS threads leak, RATE in all. -m: stop at MAX_MB MB held, print "held N
 * blocks" and "ready", and wait (-f: free everything first and trim, print "freed",
 * wait for SIGUSR1, then leak up to MAX_MB again). When malloc returns NULL: print
 * "out of memory after N blocks" (the blocks held then, all threads; with "(errno is
 * not ENOMEM)" after it if so) and exit 3.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static double rate_mb = 50;
static size_t size = 4096;
static unsigned nthreads = 1;
static unsigned long max_mb;
static int free_first;
static unsigned long held;	/* blocks held, all threads */

NOINLINE static void *leak_block(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory");
	return p;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *leak(void *arg)
{
	double t0 = now_s(), per_s = rate_mb * 1e6 / nthreads;
	unsigned long mine = 0, cap = max_mb * 1000000 / size / nthreads;
	void **chain = arg;

	for (;;) {
		void **p;

		if (cap && mine == cap)
			return NULL;
		/* a millisecond's worth at a time: 50 MB/s is 50 kB per ms */
		if (rate_mb > 0 && (double)mine * (double)size > (now_s() - t0) * per_s) {
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
			continue;
		}
		p = leak_block(size);
		if (!p) {
			int err = errno;

			printf("out of memory after %lu blocks%s\n",
			       __atomic_load_n(&held, __ATOMIC_SEQ_CST),
			       err == ENOMEM ? "" : " (errno is not ENOMEM)");
			fflush(stdout);
			_exit(3);
		}
		memset(p, 0x5a, size);
		*p = *chain;
		*chain = p;
		mine++;
		__atomic_add_fetch(&held, 1, __ATOMIC_SEQ_CST);
	}
}

static void run(void **chains)
{
	pthread_t t[64];

	for (unsigned i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, leak, &chains[i]);
	leak(&chains[0]);
	for (unsigned i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
}

/* Every block back, and the memory to the kernel (malloc keeps freed memory below
 * the blocks its caches hold). */
static void release(void **chains)
{
	for (unsigned i = 0; i < nthreads; i++)
		while (chains[i]) {
			void **p = chains[i];

			chains[i] = *p;
			free(p);
			held--;
		}
	malloc_trim(0);
}

int main(int argc, char **argv)
{
	static void *chains[64];
	sigset_t usr1;
	int c, sig;

	while ((c = getopt(argc, argv, "r:s:t:m:f")) != -1) {
		switch (c) {
		case 'r': rate_mb = atof(optarg); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 't': nthreads = (unsigned)atoi(optarg); break;
		case 'm': max_mb = strtoul(optarg, NULL, 0); break;
		case 'f': free_first = 1; break;
		default: return 64;
		}
	}
	if (size < sizeof(void *) || nthreads < 1 || nthreads > 64)
		return 64;
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);	/* for sigwait, in every thread */
	run(chains);
	if (free_first) {
		release(chains);
		printf("freed\n");
		sigwait(&usr1, &sig);
		run(chains);
	}
	printf("held %lu blocks\nready\n", held);
	pause();
	return 0;
}
