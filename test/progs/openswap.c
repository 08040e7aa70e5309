/*
 * LD_PRELOAD shim for the analyzer (t2002): plays the file swapped for a FIFO between
 * a check and a reopen. Each blocking open() of the file HP_SWAP_PATH is logged to
 * HP_SWAP_LOG; the second one first replaces the file by a FIFO, as another process
 * could have at any moment. An open with O_NONBLOCK is logged and left alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int plain_opens;

static void seen(const char *path, int flags)
{
	const char *want = getenv("HP_SWAP_PATH"), *log = getenv("HP_SWAP_LOG");
	FILE *f;

	if (!want || !path || strcmp(path, want))
		return;
	if (log && (f = fopen(log, "a"))) {
		fprintf(f, "%s\n", flags & O_NONBLOCK ? "nonblock" : "plain");
		fclose(f);
	}
	if (!(flags & O_NONBLOCK) && ++plain_opens == 2 && unlink(path) == 0)
		mkfifo(path, 0600);
}

static mode_t mode_of(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

int open(const char *path, int flags, ...)
{
	static open_fn real;
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	if (!real)
		real = (open_fn)dlsym(RTLD_NEXT, "open");
	seen(path, flags);
	return real(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	static open_fn real;
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	if (!real)
		real = (open_fn)dlsym(RTLD_NEXT, "open64");
	seen(path, flags);
	return real(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static openat_fn real;
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	if (!real)
		real = (openat_fn)dlsym(RTLD_NEXT, "openat");
	seen(path, flags);
	return real(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	static openat_fn real;
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	if (!real)
		real = (openat_fn)dlsym(RTLD_NEXT, "openat64");
	seen(path, flags);
	return real(dirfd, path, flags, mode);
}
