/*
 * What glibc's malloc says of itself, as the arena test programs (arenas.c, pinned.c)
 * print it for the tests to check the analyzer's figures against: mallinfo2(), and
 * what malloc_trim(0) gave back in a forked copy. No stdio: it would allocate.
 */
#ifndef HP_TEST_MALLINFO_H
#define HP_TEST_MALLINFO_H

#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* line to stdout, or exit 1 */
static void say(const char *line)
{
	size_t n = strlen(line);

	if (write(1, line, n) != (ssize_t)n)
		_exit(1);
}

/* "mallinfo2 arena=A uordblks=U fordblks=F hblks=N hblkhd=H" */
static void say_mallinfo2(void)
{
	struct mallinfo2 mi = mallinfo2();
	char line[256];

	snprintf(line, sizeof(line), "mallinfo2 arena=%zu uordblks=%zu fordblks=%zu hblks=%zu "
		 "hblkhd=%zu\n", mi.arena, mi.uordblks, mi.fordblks, mi.hblks, mi.hblkhd);
	say(line);
}

/* Resident anonymous bytes, from /proc/self/smaps_rollup: a walk of the page tables
 * (statm's counters lag by up to a few hundred pages), without the file pages a forked
 * copy faults in as it runs. */
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

/*
 * In a forked copy of the process: first() (when given), malloc_trim(0), then say
 * "WHAT arena_delta=A rss_delta=R" (the main arena's sbrk shrink, and the resident
 * bytes given back since before first()), then after() (when given). 0, or -1 when
 * the copy failed.
 */
__attribute__((unused)) static int trim_in_copy(const char *what, void (*first)(void),
						void (*after)(void))
{
	char line[160];
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		size_t arena0 = mallinfo2().arena;
		long rss0 = resident();

		if (first)
			first();
		malloc_trim(0);
		snprintf(line, sizeof(line), "%s arena_delta=%zu rss_delta=%ld\n", what,
			 arena0 - mallinfo2().arena, rss0 - resident());
		say(line);
		if (after)
			after();
		_exit(0);
	}
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

#endif
