/*
 * maps: anonymous mappings from named functions, then cut, moved and resized, for the
 * map table (t3030). What stays mapped, per function:
 *   map_ring      512 KiB: 256 KiB mapped, grown by mremap (which may move it)
 *   map_arena     3 MiB: 4 MiB mapped, a 1 MiB hole unmapped in its middle
 *   map_trimmed   768 KiB: 1 MiB mapped, its first 256 KiB unmapped
 *   map_shrunk    128 KiB: 512 KiB mapped, shrunk in place by mremap
 *   map_shared    128 KiB: MAP_SHARED | MAP_ANONYMOUS
 *   map_fixed     64 KiB: mapped over the middle of map_gone's mapping (MAP_FIXED)
 *   map_thread    256 KiB, from a thread of its own
 *   map_gone      nothing: 192 KiB mapped and unmapped, but for map_fixed's part
 *   map_raw       192 KiB through the raw system call: of no known origin
 *   map_file      a file mapping: not anonymous, not counted
 * and malloc(2 MiB), a chunk glibc maps itself: an mmapped chunk, not a mapping of
 * the program's. Every page is touched so that it is resident. Prints the mappings
 * ("name start end"), ready, and waits.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KiB 1024ul
#define NOINLINE __attribute__((noinline))

static void *anon(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("maps: mmap");
		exit(1);
	}
	memset(p, 1, len);
	return p;
}

static void show(const char *name, void *p, size_t len)
{
	printf("%s %#lx %#lx\n", name, (unsigned long)p, (unsigned long)p + len);
}

NOINLINE static void *map_ring(void)
{
	char *p = anon(256 * KiB, MAP_PRIVATE);

	p = mremap(p, 256 * KiB, 512 * KiB, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		exit(1);
	memset(p, 2, 512 * KiB);
	show("map_ring", p, 512 * KiB);
	return p;
}

NOINLINE static void *map_arena(void)
{
	char *p = anon(4096 * KiB, MAP_PRIVATE);

	munmap(p + 1024 * KiB, 1024 * KiB);
	show("map_arena", p, 1024 * KiB);
	show("map_arena", p + 2048 * KiB, 2048 * KiB);
	return p;
}

NOINLINE static void *map_trimmed(void)
{
	char *p = anon(1024 * KiB, MAP_PRIVATE);

	munmap(p, 256 * KiB);
	show("map_trimmed", p + 256 * KiB, 768 * KiB);
	return p + 256 * KiB;
}

NOINLINE static void *map_shrunk(void)
{
	char *p = anon(512 * KiB, MAP_PRIVATE);

	if (mremap(p, 512 * KiB, 128 * KiB, 0) != p)
		exit(1);
	show("map_shrunk", p, 128 * KiB);
	return p;
}

NOINLINE static void *map_shared(void)
{
	void *p = anon(128 * KiB, MAP_SHARED);

	show("map_shared", p, 128 * KiB);
	return p;
}

NOINLINE static void *map_fixed(char *at)
{
	void *p = mmap(at, 64 * KiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_FIXED, -1, 0);

	if (p != at)
		exit(1);
	memset(p, 3, 64 * KiB);
	show("map_fixed", p, 64 * KiB);
	return p;
}

NOINLINE static void map_gone(void)
{
	char *p = anon(192 * KiB, MAP_PRIVATE);

	map_fixed(p + 64 * KiB);
	munmap(p, 64 * KiB);
	munmap(p + 128 * KiB, 64 * KiB);
}

NOINLINE static void *map_raw(void)
{
	void *p = (void *)syscall(SYS_mmap, NULL, 192 * KiB, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	memset(p, 4, 192 * KiB);
	show("map_raw", p, 192 * KiB);
	return p;
}

NOINLINE static void *map_file(void)
{
	FILE *f = tmpfile();
	void *p;

	if (!f || ftruncate(fileno(f), 64 * KiB) != 0)
		exit(1);
	p = mmap(NULL, 64 * KiB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(f), 0);
	if (p == MAP_FAILED)
		exit(1);
	memset(p, 5, 64 * KiB);
	return p;
}

NOINLINE static void *map_thread(void *arg)
{
	(void)arg;
	show("map_thread", anon(256 * KiB, MAP_PRIVATE), 256 * KiB);
	return NULL;
}

static char *volatile big;	/* kept: a block the compiler cannot drop */

int main(void)
{
	pthread_t t;

	map_ring();
	map_arena();
	map_trimmed();
	map_shrunk();
	map_shared();
	map_gone();
	map_raw();
	map_file();
	if (pthread_create(&t, NULL, map_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	big = malloc(2048 * KiB);
	memset(big, 6, 2048 * KiB);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
