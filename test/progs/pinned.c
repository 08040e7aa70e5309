/*
 * Free memory pinned by a few live blocks, for t3013-pinned.sh: 40 MB of 1,000-byte
 * blocks from fill() in the main arena (8 MB in a thread's arena), 99 of every 100
 * freed; the survivors come from keep(). Prints mallinfo2() as "mallinfo2 arena=A
 * uordblks=U fordblks=F", then what forked copies saw: "trim arena_delta=A
 * rss_delta=R" and malloc_info()'s XML after malloc_trim(0), then "freed
 * arena_delta=A" when the main arena's survivors were freed before malloc_trim(0).
 * Then "ready", and it waits (for gcore).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")
#define BLOCK 1000
#define MAIN_BLOCKS 40000
#define THREAD_BLOCKS 8000

static void *g_main[MAIN_BLOCKS / 100], *g_thread[THREAD_BLOCKS / 100];
static pthread_barrier_t g_ready;

NOINLINE void *fill(void)
{
	void *p = malloc(BLOCK);

	memset(p, 1, BLOCK);
	ESCAPE(p);
	return p;
}

NOINLINE void *keep(void)
{
	void *p = malloc(BLOCK);

	memset(p, 2, BLOCK);
	ESCAPE(p);
	return p;
}

/* n blocks, every hundredth (the 50th of each hundred) kept in out, the rest freed */
NOINLINE static void layout(void **out, int n)
{
	void **v = calloc((size_t)n, sizeof(*v));

	for (int i = 0; i < n; i++)
		v[i] = i % 100 == 50 ? keep() : fill();
	for (int i = 0; i < n; i++)
		if (i % 100 == 50)
			out[i / 100] = v[i];
		else
			free(v[i]);
	free(v);
}

static void *thread_main(void *arg)
{
	(void)arg;
	layout(g_thread, THREAD_BLOCKS);
	pthread_barrier_wait(&g_ready);
	for (;;)
		pause();
	return NULL;
}

/* Resident anonymous bytes, from /proc/self/smaps_rollup: a walk of the page tables
 * (statm's counters lag by up to a few hundred pages), without the file pages a forked
 * copy faults in as it runs; no stdio (it would allocate). */
static long resident(void)
{
	char buf[4096], *rss;
	long kb = -1;
	int fd = open("/proc/self/smaps_rollup", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = 0;
		if ((rss = strstr(buf, "\nAnonymous:")))
			sscanf(rss + 11, "%ld", &kb);
	}
	return kb * 1024;
}

static void say(const char *line)
{
	size_t n = strlen(line);

	if (write(1, line, n) != (ssize_t)n)
		_exit(1);
}

/* In a copy of the process: free the main arena's survivors first (free_kept), then
 * malloc_trim(0); say what it gave back. */
static int trim_copy(int free_kept)
{
	char line[160];
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		size_t arena0 = mallinfo2().arena;
		long rss0 = resident();

		if (free_kept)
			for (size_t i = 0; i < sizeof(g_main) / sizeof(*g_main); i++)
				free(g_main[i]);
		malloc_trim(0);
		snprintf(line, sizeof(line), "%s arena_delta=%zu rss_delta=%ld\n",
			 free_kept ? "freed" : "trim", arena0 - mallinfo2().arena, rss0 - resident());
		say(line);
		if (!free_kept) {
			malloc_info(0, stdout);
			fflush(stdout);
		}
		_exit(0);
	}
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

int main(void)
{
	struct mallinfo2 mi;
	pthread_t t;
	char line[200];

	printf("start\n");		/* stdout's buffer: allocated before the layout */
	fflush(stdout);
	pthread_barrier_init(&g_ready, NULL, 2);
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_barrier_wait(&g_ready);
	layout(g_main, MAIN_BLOCKS);
	mi = mallinfo2();
	snprintf(line, sizeof(line), "mallinfo2 arena=%zu uordblks=%zu fordblks=%zu\n", mi.arena,
		 mi.uordblks, mi.fordblks);
	say(line);
	if (trim_copy(0) < 0 || trim_copy(1) < 0)
		return 1;
	say("ready\n");
	for (;;)
		pause();
	return 0;
}
