/*
 * Test program for --lifetimes (t4009): blocks of known lifetimes, then "ready" and a
 * wait for the core. Every site is a noinline function; stdout is unbuffered so that
 * printing allocates nothing between the sites' calls.
 *   a thread makes one block at site_xthread, the main thread frees it after the join
 *   site_slow: 5 blocks of 100 bytes, freed after a 200 ms sleep
 *   site_counted: one block of 200 bytes freed after 10 live site_filler blocks of 16
 *   site_old: 2 live blocks of 300 bytes, then a 300 ms sleep
 *   site_young: 1 live block of 500 bytes (the newest live block: ages count from it)
 *   site_temp: TEMP (argv[1], default 100) blocks of 48, each freed by the next call
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *volatile sink;

#define SITE(name)                                  \
	NOINLINE static void *name(size_t n)        \
	{                                           \
		void *p = malloc(n);                \
		__asm__ volatile("" ::: "memory");  \
		sink = p;                           \
		return p;                           \
	}
SITE(site_xthread)
SITE(site_slow)
SITE(site_counted)
SITE(site_filler)
SITE(site_old)
SITE(site_young)
SITE(site_temp)

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&t, &t))
		;
}

static void *thread_main(void *arg)
{
	(void)arg;
	return site_xthread(64);
}

int main(int argc, char **argv)
{
	long temp = argc > 1 ? atol(argv[1]) : 100;
	void *slow[5], *filler[10], *counted, *x;
	pthread_t t;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, &x))
		return 1;
	free(x);
	for (int i = 0; i < 5; i++)
		slow[i] = site_slow(100);
	sleep_ms(200);
	for (int i = 0; i < 5; i++)
		free(slow[i]);
	counted = site_counted(200);
	for (int i = 0; i < 10; i++)
		filler[i] = site_filler(16);
	free(counted);
	site_old(300);
	site_old(300);
	sleep_ms(300);
	site_young(500);
	for (long i = 0; i < temp; i++)
		free(site_temp(48));
	sink = filler;
	fputs("ready\n", stdout);
	for (;;)
		pause();
}
