/*
 * Known allocation counts per function and thread, for test/t3004-counts.sh.
 *   counts [crash]   main, "worker-a" and "worker-b" allocate (table below); worker-b
 *                    frees 10 of worker-a's blocks. Prints the tids, then "ready" and
 *                    waits; with crash it then aborts, and waits in the SIGABRT handler.
 *   sampled          s_big 20,000 x 3,000 bytes (kept), s_small 100,000 x 100 (freed)
 *   time             4 rounds: 200 ms sleep, t_slow's malloc; 50 ms sleep, t_fast's
 *   events           known calls; prints them as the ring should show them
 *   events-thread    a new thread "evthread": et_alloc's malloc(55), et_free's free of
 *                    it, then et_overflow's reallocarray(NULL, 2^62, 8), refused;
 *                    prints "tid N" (its ring must start with these three calls)
 *   regions          r_parse 5 x 111 in region "parse", r_eval 3 x 222 in "eval",
 *                    r_none 2 x 333 outside (heapprof.h's region API)
 *
 *   function   thread     calls  bytes   entry points
 *   f_malloc   main       10     1,000   malloc; main frees 4 (400 bytes)
 *   f_calloc   main       5      500     calloc(4, 25)
 *   f_realloc  main       9      180     3 x (malloc 10, realloc 20, realloc 30)
 *   f_aligned  main       6      1,112   posix_memalign 2 x 200, aligned_alloc 2 x 256,
 *                                        memalign 2 x 100
 *   f_cxx      main       7      1,344   new char[300] x 4, new obj48 x 3
 *   w_a        worker-a   20     1,280   malloc 64; worker-b frees 10 (640 bytes)
 *   w_b        worker-b   7      7,000   calloc(1, 1000)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "heapprof.h"

#define NOINLINE __attribute__((noinline))
#define KEEP() asm volatile("" ::: "memory")

void f_cxx(void **keep);

static void *keep[256];
static void *from_a[20];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int a_done;
static pid_t tid_a, tid_b;

static pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* write(2) only: stdio would allocate, and the rings must hold our calls alone */
static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(3);
}

static NOINLINE void f_malloc(void)
{
	for (int i = 0; i < 10; i++)
		keep[i] = malloc(100);
	for (int i = 0; i < 4; i++)
		free(keep[i]);
	KEEP();
}

static NOINLINE void f_calloc(void)
{
	for (int i = 0; i < 5; i++)
		keep[10 + i] = calloc(4, 25);
	KEEP();
}

static NOINLINE void f_realloc(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = malloc(10);

		p = realloc(p, 20);
		keep[20 + i] = realloc(p, 30);
	}
	KEEP();
}

static NOINLINE void f_aligned(void)
{
	for (int i = 0; i < 2; i++) {
		if (posix_memalign(&keep[30 + i], 64, 200))
			abort();
		keep[32 + i] = aligned_alloc(128, 256);
		keep[34 + i] = memalign(32, 100);
	}
	KEEP();
}

static NOINLINE void w_a(void)
{
	for (int i = 0; i < 20; i++)
		from_a[i] = malloc(64);
	KEEP();
}

static NOINLINE void w_b(void)
{
	for (int i = 0; i < 7; i++)
		keep[60 + i] = calloc(1, 1000);
	KEEP();
}

static void *worker_a(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-a");
	tid_a = tid();
	w_a();
	pthread_mutex_lock(&lock);
	a_done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *worker_b(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-b");
	tid_b = tid();
	pthread_mutex_lock(&lock);
	while (!a_done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < 10; i++)	/* another thread's blocks */
		free(from_a[i]);
	w_b();
	return NULL;
}

static void wait_forever(void)
{
	for (;;)
		pause();
}

static void on_abort(int sig)
{
	(void)sig;
	say("ready\n");		/* the test takes its core here, inside the handler */
	wait_forever();
}

static int run_counts(int crash)
{
	pthread_t a, b;
	char line[128];

	/* the threads first: pthread_create's own allocations are not ours to count */
	if (pthread_create(&b, NULL, worker_b, NULL) || pthread_create(&a, NULL, worker_a, NULL))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	f_malloc();
	f_calloc();
	f_realloc();
	f_aligned();
	f_cxx(&keep[40]);
	snprintf(line, sizeof(line), "tids main=%d worker-a=%d worker-b=%d\n", (int)tid(),
		 (int)tid_a, (int)tid_b);
	say(line);
	if (crash) {
		signal(SIGABRT, on_abort);
		abort();
	}
	say("ready\n");
	wait_forever();
	return 0;
}

static NOINLINE void s_big(void **v, int n)
{
	for (int i = 0; i < n; i++)
		v[i] = malloc(3000);
	KEEP();
}

static NOINLINE void s_small(void)
{
	for (int i = 0; i < 100000; i++) {
		void *p = malloc(100);

		asm volatile("" : : "r"(p) : "memory");	/* or the pair is optimized away */
		free(p);
	}
}

static int run_sampled(void)
{
	static void *big[20000];

	s_big(big, 20000);
	s_small();
	say("ready\n");
	wait_forever();
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

/* not "return malloc()": a tail call would leave no frame of its own */
static NOINLINE void t_slow(int i)
{
	keep[1 + 2 * i] = malloc(16);
	KEEP();
}

static NOINLINE void t_fast(int i)
{
	keep[2 + 2 * i] = malloc(16);
	KEEP();
}

static int run_time(void)
{
	keep[0] = malloc(1);	/* the clock starts at the thread's previous call */
	for (int i = 0; i < 4; i++) {
		sleep_ms(200);
		t_slow(i);
		sleep_ms(50);
		t_fast(i);
	}
	say("ready\n");
	wait_forever();
	return 0;
}

/* Each call, as --events prints it, into out (the last 8 are the ring's). Pointers are
 * taken as numbers before the calls that free them. */
static NOINLINE void e_calls(char *out, size_t cap)
{
	char *o = out;
	void *p[12];
	unsigned long q;
	int rc;

#define LOG(...) (o += snprintf(o, cap - (size_t)(o - out), __VA_ARGS__))
#define U(x) ((unsigned long)(x))
	for (int i = 0; i < 4; i++) {
		p[i] = malloc(101 + i);
		LOG("malloc(%d) = 0x%lx\n", 101 + i, U(p[i]));
	}
	p[4] = calloc(3, 7);
	LOG("calloc(3, 7) = 0x%lx\n", U(p[4]));
	q = U(p[0]);
	p[0] = realloc(p[0], 500);
	LOG("realloc(0x%lx, 500) = 0x%lx\n", q, U(p[0]));
	q = U(p[1]);
	free(p[1]);
	LOG("free(0x%lx)\n", q);
	rc = posix_memalign(&p[5], 64, 300);
	LOG("posix_memalign(64, 300) = 0x%lx\n", rc ? 0 : U(p[5]));
	p[6] = aligned_alloc(256, 512);
	LOG("aligned_alloc(256, 512) = 0x%lx\n", U(p[6]));
	p[7] = memalign(32, 40);
	LOG("memalign(32, 40) = 0x%lx\n", U(p[7]));
	q = U(p[2]);
	free(p[2]);
	LOG("free(0x%lx)\n", q);
	p[8] = malloc(77);
	LOG("malloc(77) = 0x%lx\n", U(p[8]));
#undef LOG
#undef U
	KEEP();
}

static int run_events(void)
{
	static char buf[4096];

	e_calls(buf, sizeof(buf));
	say(buf);
	say("ready\n");
	wait_forever();
	return 0;
}

static NOINLINE void *et_alloc(void)
{
	void *p = malloc(55);

	KEEP();
	return p;
}

static NOINLINE void et_free(void *p)
{
	free(p);
	KEEP();
}

static NOINLINE void et_overflow(void)
{
	static volatile size_t huge = (size_t)1 << 62;	/* unseen: no warning, no folding */

	keep[0] = reallocarray(NULL, huge, 8);
	KEEP();
}

static void *et_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "evthread");
	*(long *)arg = syscall(SYS_gettid);
	et_free(et_alloc());
	et_overflow();
	return NULL;
}

static int run_events_thread(void)
{
	pthread_t t;
	long tid = 0;
	char buf[64];

	if (pthread_create(&t, NULL, et_thread, &tid) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	snprintf(buf, sizeof(buf), "tid %ld\nready\n", tid);
	say(buf);
	wait_forever();
	return 0;
}

/* loop bounds the compiler cannot see: a loop it unrolled would make one site per copy */
static volatile int n_parse = 5, n_eval = 3, n_none = 2;

static NOINLINE void r_parse(void)
{
	for (int i = 0; i < n_parse; i++)
		keep[i] = malloc(111);
	KEEP();
}

static NOINLINE void r_eval(void)
{
	for (int i = 0; i < n_eval; i++)
		keep[10 + i] = malloc(222);
	KEEP();
}

static NOINLINE void r_none(void)
{
	for (int i = 0; i < n_none; i++)
		keep[20 + i] = malloc(333);
	KEEP();
}

static int run_regions(void)
{
	heapprof_region_begin("parse");
	r_parse();
	heapprof_region_end();
	heapprof_region_begin("eval");
	r_eval();
	heapprof_region_end();
	r_none();
	say("ready\n");
	wait_forever();
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "counts";

	if (!strcmp(mode, "counts"))
		return run_counts(0);
	if (!strcmp(mode, "crash"))
		return run_counts(1);
	if (!strcmp(mode, "sampled"))
		return run_sampled();
	if (!strcmp(mode, "time"))
		return run_time();
	if (!strcmp(mode, "events"))
		return run_events();
	if (!strcmp(mode, "events-thread"))
		return run_events_thread();
	if (!strcmp(mode, "regions"))
		return run_regions();
	fprintf(stderr, "usage: counts [counts|crash|sampled|time|events|events-thread|regions]\n");
	return 64;
}
