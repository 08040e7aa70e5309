/*
 * Test program for the life of a snapshot (t6003): how it ends, waits, and what
 * fork and exec do to it. Built with heapprof.h; MB is the live heap it holds, in
 * 1 MiB blocks written through, so a snapshot takes a while to write.
 *   snaplife exit PATH MB      heapprof_snapshot(PATH), then exit(0) at once
 *   snaplife wait PATH MB      heapprof_snapshot(PATH), heapprof_snapshot_wait(-1):
 *                              prints "complete" when PATH is there and PATH.part not
 *   snaplife forks N MB        a thread takes snapshots one after another while the
 *                              main thread forks N children that each take one and
 *                              wait for it; prints "hung K" (children not done in 5 s)
 *   snaplife exec N            heapprof_snapshot(NULL), waits, then execs itself with
 *                              N - 1 until 0: prints each call's result
 *   snaplife hold MB           prints "ready" and waits for signals
 *   snaplife quit MB           exits (HEAPPROF_AT_EXIT's snapshot, if any)
 *   snaplife peak PATH MB MORE heapprof_snapshot(PATH) and, while it is written, MORE
 *                              MiB more (for HEAPPROF_PEAK), all freed; then exits
 *   snaplife env               becomes env(1): the environment it passes on
 *   snaplife killed PATH MB    heapprof_snapshot(PATH), "ready", waits for a file
 *                              "go", then prints heapprof_snapshot_wait(5000)
 */
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heapprof.h"

#define NOINLINE __attribute__((noinline))

static volatile size_t sink;

NOINLINE static void *site_bulk(size_t n)
{
	void *p = malloc(n);

	memset(p, 0x5a, n);
	sink += (size_t)p;
	return p;
}

static void hold(int mb)
{
	for (int i = 0; i < mb; i++)
		site_bulk(1 << 20);
}

static const char *rc_name(int rc)
{
	return rc == 0 ? "0" : strerror(rc);
}

static int snap_wait(const char *path)
{
	char part[4096];
	int rc = heapprof_snapshot(path);

	printf("snapshot %s\n", rc_name(rc));
	rc = heapprof_snapshot_wait(-1);
	printf("wait %s\n", rc_name(rc));
	snprintf(part, sizeof(part), "%s.part", path);
	puts(access(path, F_OK) == 0 && access(part, F_OK) != 0 ? "complete" : "incomplete");
	return 0;
}

static volatile int stop;

static void *snapper(void *arg)
{
	(void)arg;
	while (!stop) {
		heapprof_snapshot(NULL);
		heapprof_snapshot_wait(-1);
	}
	return NULL;
}

/* Children forked while another thread snapshots must take their own and end. */
static int forks(int n)
{
	pthread_t t;
	int hung = 0;

	pthread_create(&t, NULL, snapper, NULL);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			int rc = heapprof_snapshot(NULL);

			if (rc == 0)
				rc = heapprof_snapshot_wait(10000);
			_exit(rc ? 1 : 0);
		}
		for (int ms = 0; waitpid(pid, &status, WNOHANG) == 0; ms += 10) {
			if (ms >= 5000) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				hung++;
				break;
			}
			usleep(10000);
		}
		usleep(50000);
	}
	stop = 1;
	pthread_join(t, NULL);
	heapprof_snapshot_wait(-1);
	printf("hung %d\n", hung);
	return 0;
}

static int exec_chain(const char *self, int n)
{
	char arg[16];
	int rc = heapprof_snapshot(NULL);

	if (rc == 0)
		rc = heapprof_snapshot_wait(-1);
	printf("snapshot %s\n", rc_name(rc));
	fflush(stdout);
	if (n <= 0)
		return 0;
	snprintf(arg, sizeof(arg), "%d", n - 1);
	execl(self, self, "exec", arg, (char *)NULL);
	perror("execl");
	return 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "exit")) {
		hold(atoi(argv[3]));
		printf("snapshot %s\n", rc_name(heapprof_snapshot(argv[2])));
		exit(0);
	}
	if (argc == 4 && !strcmp(argv[1], "wait")) {
		hold(atoi(argv[3]));
		return snap_wait(argv[2]);
	}
	if (argc == 4 && !strcmp(argv[1], "forks")) {
		hold(atoi(argv[3]));
		return forks(atoi(argv[2]));
	}
	if (argc == 3 && !strcmp(argv[1], "exec"))
		return exec_chain(argv[0], atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "peak")) {
		void *more[1024];
		int n = atoi(argv[4]) < 1024 ? atoi(argv[4]) : 1024;

		hold(atoi(argv[3]));
		printf("snapshot %s\n", rc_name(heapprof_snapshot(argv[2])));
		for (int i = 0; i < n; i++)
			more[i] = site_bulk(1 << 20);
		for (int i = 0; i < n; i++)
			free(more[i]);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "env")) {
		execl("/usr/bin/env", "env", (char *)NULL);
		return 127;
	}
	if (argc == 4 && !strcmp(argv[1], "killed")) {
		hold(atoi(argv[3]));
		printf("snapshot %s\n", rc_name(heapprof_snapshot(argv[2])));
		puts("ready");
		while (access("go", F_OK) != 0)
			usleep(10000);
		printf("wait %s\n", rc_name(heapprof_snapshot_wait(5000)));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "quit")) {
		hold(atoi(argv[2]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "hold")) {
		hold(atoi(argv[2]));
		puts("ready");
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: snaplife exit|wait PATH MB | forks N MB | exec N | hold|quit MB\n");
	return 64;
}
