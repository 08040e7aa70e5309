/*
 * A program asleep while it is snapshotted (t6009): its main thread sleeps SECS
 * seconds in CALL (nanosleep, sleep, poll, epoll, select; ppoll, pselect, epoll_pwait
 * with an empty signal mask) and exits 0 only if the whole sleep passed and the call
 * said so; a worker thread waits on a pipe. What the stacks hold: alloc_main's block
 * in a local of main (reachable), alloc_worker's in a local of the worker
 * (reachable), alloc_dead's only in a dead frame below main's (lost, when the scan
 * starts at main's stack pointer).
 *   snaproots CALL SECS [MODE]
 *   MODE block    main blocks SIGUSR2 as it goes to sleep, as servers do
 *        unblock  main sets the empty signal mask first, as bash does
 *        api      the worker calls heapprof_snapshot(NULL) once main sleeps
 *        peak     the worker then makes 1 MiB in alloc_peak, kept in a local
 *        fork     a child of fork() sleeps too (its status is the parent's too)
 *        own      main puts a handler of its own on SIGUSR2: it writes "own handler"
 * Prints "child PID" (fork) and "ready"; then, with SNAPROOTS_GO=FILE, waits for FILE
 * to exist; prints "sleeping" as it goes to sleep, "slept CALL" after it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heapprof.h"

#define NOINLINE __attribute__((noinline))

static volatile size_t sink;
static volatile int dozing;	/* main is about to sleep */
static int go[2];
static const char *mode = "";

NOINLINE static void *alloc_main(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }
NOINLINE static void *alloc_worker(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }
NOINLINE static void *alloc_dead(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }
NOINLINE static void *alloc_peak(size_t n) { void *p = malloc(n); sink += (size_t)p; return p; }

/* The pointer only deep in a big frame, far below what the sleeping call's frames
 * reach over: once this returns, no live frame holds it. */
NOINLINE static void dead_frame(void)
{
	void *volatile slots[1024] __attribute__((unused));
	void *p = alloc_dead(40);

	for (int i = 0; i < 768; i++)
		slots[i] = p;
}

static void own_handler(int sig)
{
	(void)sig;
	if (write(1, "own handler\n", 12) != 12)
		sink++;
}

/* main waits in the kernel: its /proc state is S */
static int main_asleep(void)
{
	char path[64], buf[512];
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)getpid());
	if (!(f = fopen(path, "r")))
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	return p && (p = strrchr(buf, ')')) && p[2] == 'S';
}

static void *worker(void *arg)
{
	void *volatile held = alloc_worker(32), *volatile big = NULL;
	char c;

	(void)arg;
	if (!strcmp(mode, "api") || !strcmp(mode, "peak")) {
		struct timespec nap = { 0, 10000000 };

		do
			nanosleep(&nap, NULL);
		while (!dozing || !main_asleep());
		if (!strcmp(mode, "api")) {
			int rc = heapprof_snapshot(NULL);

			printf("snapshot %s\n", rc ? strerror(rc) : "0");
			fflush(stdout);
		} else {
			big = alloc_peak(1 << 20);
		}
	}
	while (read(go[0], &c, 1) < 0 && errno == EINTR)
		;
	sink += (size_t)held + (size_t)big;
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The sleep: 0 if the call said the whole time passed (its timeout, or nothing left) */
static int doze(const char *call, int secs)
{
	if (!strcmp(call, "nanosleep")) {
		struct timespec ts = { secs, 0 };

		return nanosleep(&ts, NULL);
	}
	if (!strcmp(call, "sleep"))
		return (int)sleep((unsigned)secs);
	if (!strcmp(call, "poll")) {
		struct pollfd pf = { .fd = go[0], .events = POLLIN };

		return poll(&pf, 1, secs * 1000);
	}
	if (!strcmp(call, "epoll")) {
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(0), rc;

		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, go[0], &ev) < 0)
			return -1;
		rc = epoll_wait(ep, &out, 1, secs * 1000);
		close(ep);
		return rc;
	}
	if (!strcmp(call, "select")) {
		struct timeval tv = { secs, 0 };
		fd_set r;

		FD_ZERO(&r);
		FD_SET(go[0], &r);
		return select(go[0] + 1, &r, NULL, NULL, &tv);
	}
	if (!strcmp(call, "ppoll") || !strcmp(call, "pselect") || !strcmp(call, "epoll_pwait")) {
		struct timespec ts = { secs, 0 };
		struct pollfd pf = { .fd = go[0], .events = POLLIN };
		struct epoll_event ev = { .events = EPOLLIN }, out;
		sigset_t none;
		fd_set r;
		int ep, rc;

		sigemptyset(&none);
		if (!strcmp(call, "ppoll"))
			return ppoll(&pf, 1, &ts, &none);
		if (!strcmp(call, "pselect")) {
			FD_ZERO(&r);
			FD_SET(go[0], &r);
			return pselect(go[0] + 1, &r, NULL, NULL, &ts, &none);
		}
		ep = epoll_create1(0);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, go[0], &ev) < 0)
			return -1;
		rc = epoll_pwait(ep, &out, 1, secs * 1000, &none);
		close(ep);
		return rc;
	}
	fprintf(stderr, "snaproots: unknown call %s\n", call);
	exit(64);
}

int main(int argc, char **argv)
{
	void *volatile held;
	pthread_t t;
	double t0, slept;
	int secs, rc, err, status = 0;
	pid_t child = -1;

	if (argc < 3)
		return 64;
	secs = atoi(argv[2]);
	mode = argc > 3 ? argv[3] : "";
	held = alloc_main(64);
	dead_frame();
	if (pipe(go) < 0 || pthread_create(&t, NULL, worker, NULL))
		return 1;
	if (!strcmp(mode, "block") || !strcmp(mode, "unblock")) {
		sigset_t s;

		sigemptyset(&s);
		sigaddset(&s, SIGUSR2);
		if (!strcmp(mode, "block"))
			pthread_sigmask(SIG_BLOCK, &s, NULL);
		else
			sigprocmask(SIG_SETMASK, (sigemptyset(&s), &s), NULL);
	}
	if (!strcmp(mode, "own")) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = own_handler;
		sigaction(SIGUSR2, &sa, NULL);
	}
	if (!strcmp(mode, "fork")) {
		fflush(stdout);
		if ((child = fork()) < 0)
			return 1;
		if (child > 0) {
			printf("child %d\n", (int)child);
			fflush(stdout);
		}
	}
	if (child != 0) {
		printf("ready\n");
		fflush(stdout);
	}
	if (getenv("SNAPROOTS_GO")) {
		struct timespec nap = { 0, 10000000 };

		while (access(getenv("SNAPROOTS_GO"), F_OK) < 0)
			nanosleep(&nap, NULL);
	}
	if (child != 0) {
		printf("sleeping\n");
		fflush(stdout);
	}
	dozing = 1;
	t0 = now();
	rc = doze(argv[1], secs);
	err = errno;
	slept = now() - t0;
	if (child == 0)	/* the child of fork: its sleep is its status */
		_exit(rc != 0 || slept < secs);
	if (child > 0 && (waitpid(child, &status, 0) != child || status != 0)) {
		printf("the child's sleep was cut short (status %d)\n", status);
		return 1;
	}
	if (write(go[1], "x", 1) != 1 || pthread_join(t, NULL))
		return 1;
	if (rc != 0 || slept < secs) {
		printf("%s returned %d (%s) after %.3f s of %d\n", argv[1], rc,
		       rc < 0 ? strerror(err) : "early", slept, secs);
		return 1;
	}
	printf("slept %s\n", argv[1]);
	return held ? 0 : 1;
}
