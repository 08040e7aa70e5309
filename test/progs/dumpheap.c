/*
 * Linked into sites-dump (sites.c plus this file): at exit, when SITES_DUMP=PREFIX is
 * set, the program writes its own heap (the mapping that holds the break) to PREFIX.heap,
 * every anonymous writable mapping (heapprof's stack table among them) to PREFIX.N,
 * and the heapprof-analyze options that describe them to PREFIX.args: --raw, --load-base
 * and a --module per shared object. This is how a target with neither a core nor a
 * debugger, here a qemu-user guest, hands over a raw image. It allocates nothing.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char maps[1 << 16];
static char args[1 << 14];
static size_t args_len;

__attribute__((format(printf, 1, 2))) static void add_arg(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(args + args_len, sizeof(args) - args_len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(args) - args_len)
		args_len += (size_t)n;
}

static void read_maps(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd >= 0) {
		while (len < sizeof(maps) - 1 &&
		       (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
			len += (size_t)n;
		close(fd);
	}
	maps[len] = '\0';
}

/*
 * The next mapping of /proc/self/maps (qemu-user lists the guest's) from *cursor:
 * its bounds, whether it is writable and private, and whether it is anonymous.
 */
static int next_mapping(char **cursor, uintptr_t *start, uintptr_t *end, int *anon_rw)
{
	while (*cursor && **cursor) {
		char *line = *cursor, *nl = strchr(line, '\n'), perms[8], path[8] = "";
		unsigned long a, b;
		int got;

		*cursor = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		got = sscanf(line, "%lx-%lx %7s %*s %*s %*s %7s", &a, &b, perms, path);
		if (nl)
			*nl = '\n';
		if (got < 3)
			continue;
		*start = a;
		*end = b;
		*anon_rw = !strcmp(perms, "rw-p") && got == 3;
		return 0;
	}
	return -1;
}

/* The executable comes first, with an empty name; then each shared object. */
static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (!*(int *)arg) {
		*(int *)arg = 1;
		add_arg(" --load-base=0x%lx", (unsigned long)info->dlpi_addr);
	} else if (info->dlpi_name && info->dlpi_name[0] == '/') {
		add_arg(" --module=%s@0x%lx", info->dlpi_name, (unsigned long)info->dlpi_addr);
	}
	return 0;
}

static int write_file(const char *prefix, const char *suffix, const void *p, size_t n)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s%s", prefix, suffix);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k <= 0) {
			close(fd);
			return -1;
		}
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return close(fd);
}

__attribute__((destructor)) static void dump_heap(void)
{
	const char *prefix = getenv("SITES_DUMP");
	uintptr_t brk = (uintptr_t)sbrk(0), start, end;
	int seen_exe = 0, anon_rw, n = 0, heap = 0;
	char *cursor, suffix[16];

	if (!prefix)
		return;
	read_maps();
	for (cursor = maps; next_mapping(&cursor, &start, &end, &anon_rw) == 0;) {
		if (start <= brk - 1 && brk - 1 < end) {
			heap = 1;
			snprintf(suffix, sizeof(suffix), ".heap");
		} else if (anon_rw && end - start <= ((uintptr_t)256 << 20)) {
			snprintf(suffix, sizeof(suffix), ".%d", n++);
		} else {
			continue;
		}
		add_arg("--raw=%s%s@0x%lx ", prefix, suffix, (unsigned long)start);
		if (write_file(prefix, suffix, (const void *)start, end - start) < 0) {
			fputs("sites-dump: cannot write the dump\n", stderr);
			_exit(3);
		}
	}
	if (!heap) {
		fputs("sites-dump: no mapping holds the break\n", stderr);
		_exit(3);
	}
	dl_iterate_phdr(add_module, &seen_exe);
	add_arg("\n");
	if (write_file(prefix, ".args", args, args_len) < 0) {
		fputs("sites-dump: cannot write the dump\n", stderr);
		_exit(3);
	}
}
