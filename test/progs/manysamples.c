/*
 * A timeline as long as HEAPPROF_TIMELINE allows, made in seconds (t4012): this
 * program's own clock_gettime, which heapprof.so's calls reach (the program exports it:
 * -rdynamic), stands still until main starts its loop and then makes
 * CLOCK_MONOTONIC_COARSE, the clock of heapprof.so's samples, advance 4 ms each time it
 * is read, so that each allocation of the loop is a sample of its own. Other clocks are
 * the kernel's.
 *
 *   manysamples N   N allocations, each freeing the one made 256 before: live bytes
 *                   rise to about 1 MiB at the middle and fall; "ready", then wait
 *
 * The ring starts with one sample, so N = HEAPPROF_TIMELINE - 1 fills it exactly.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 256

static volatile int running;	/* the loop: the coarse clock moves */
static unsigned long long coarse_ms = 1000000;
static void *slot[SLOTS];
static char out_buf[BUFSIZ];	/* stdout's buffer: no allocation outside the loop */

int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (id != CLOCK_MONOTONIC_COARSE)
		return (int)syscall(SYS_clock_gettime, id, ts);
	if (running)
		coarse_ms += 4;
	ts->tv_sec = (time_t)(coarse_ms / 1000);
	ts->tv_nsec = (long)(coarse_ms % 1000) * 1000000;
	return 0;
}

__attribute__((noinline)) static void *sample(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call: a frame of its own */
	return p;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;

	setvbuf(stdout, out_buf, _IOLBF, sizeof(out_buf));
	running = 1;
	for (unsigned long i = 0; i < n; i++) {
		unsigned long d = i < n / 2 ? i : n - i;	/* distance from the ends */

		free(slot[i % SLOTS]);
		slot[i % SLOTS] = sample(16 + 4096 * d / (n / 2 + 1));
	}
	running = 0;
	printf("ready\n");
	for (;;)
		pause();
}
