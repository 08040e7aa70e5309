/*
 * Blocks in memory the program made unreadable (t6005): a 1 MiB block (an mmapped
 * chunk of its own) holding the only pointer to a 48-byte one, fenced off with
 * mprotect(PROT_NONE) before exit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static __attribute__((noinline)) void *alloc_fenced(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call: the frame stays */
	return p;
}

static __attribute__((noinline)) void *alloc_inside(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void *volatile pool;

int main(void)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a;
	void **p = alloc_fenced(1 << 20);

	if (!p)
		return 1;
	p[1000] = alloc_inside(48);
	pool = p;
	/* the whole chunk, heapprof's header included: its pages from the first */
	a = (uintptr_t)p & ~(page - 1);
	if (mprotect((void *)a, ((uintptr_t)p + (1 << 20) - a) & ~(page - 1), PROT_NONE))
		return 1;
	exit(0);
}
