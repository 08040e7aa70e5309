/*
 * LD_PRELOAD shim for t6003: every open() of a name ending in ".part" (a snapshot
 * being started) first sleeps 200 ms, so a snapshot holds heapprof's snapshot lock
 * long enough that a fork from another thread surely lands inside it. With
 * SLOWOPEN_GATE=FILE, a snapshot writer's open of /proc/PID/smaps waits until FILE
 * exists (60 s at most): the writer runs until the test lets it end.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	size_t n = strlen(path);
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	if (n > 5 && !strcmp(path + n - 5, ".part"))
		usleep(200000);
	if (n > 6 && !strcmp(path + n - 6, "/smaps") && getenv("SLOWOPEN_GATE"))
		for (int i = 0; i < 6000 && access(getenv("SLOWOPEN_GATE"), F_OK) != 0; i++)
			usleep(10000);
	return real(path, flags, mode);
}
