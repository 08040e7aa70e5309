/*
 * Blocks in every leak class, each made by a function of its own with a size of its
 * own, for t3006-leaks.sh:
 *
 *   definitely lost   alloc_list_head 48, alloc_plain 2 x 88, alloc_cycle 24 (one of
 *                     a 3-cycle: memcheck calls the cycle's first block definite),
 *                     alloc_readonly 184 (only in a page made read-only: memcheck
 *                     scans no memory the program cannot write)
 *   indirectly lost   alloc_list_node 5 x 32 (the lost list's nodes), alloc_cycle 2 x 24
 *   possibly lost     alloc_interior 200 (only an interior pointer, in a global),
 *                     alloc_interior_child 56 (a start pointer from that block)
 *   still reachable   alloc_thread_stack 100 (a local of another thread), alloc_register
 *                     112 (only in rbx of a thread blocked in a raw syscall; x86_64),
 *                     alloc_global 120, alloc_tls 136 (a __thread variable of a
 *                     thread), alloc_mmap 152 (a word of an anonymous mapping),
 *                     alloc_untagged 168 (a word of a block from __libc_malloc, which
 *                     heapprof.so never sees: memory outside any heapprof block)
 *
 *   leaky          print "ready" and wait (for gcore)
 *   leaky memcheck under valgrind: run memcheck's leak check at the same point
 *                  (VALGRIND_DO_LEAK_CHECK) and exit
 *   leaky abort    abort() at that point instead (qemu-user writes the guest's core:
 *                  t5002-foreign-targets.sh); elsewhere than x86_64 alloc_register's
 *                  pointer never leaves its XORed form, so that block is definitely lost
 *   leaky dense N  hostile: N 64-byte blocks (alloc_dense) full of start and interior
 *                  pointers to random others (cycles, long chains), only the first
 *                  kept in a global; "ready" and wait
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define HAVE_MEMCHECK 1
#endif
#endif

#define NOINLINE __attribute__((noinline, noclone))

extern void *__libc_malloc(size_t);

struct node {
	struct node *next;
	char pad[24];
};

void *g_global, *g_interior, *g_untagged;
void **g_mmap, **g_readonly;
__thread void *t_tls;
static pthread_barrier_t ready;

/* Each its own frame: zero-filled, no tail call, no folding into a neighbour. */
#define ALLOC(name, type, n) NOINLINE type name(void) \
	{ void *p = malloc(n); memset(p, 0, n); __asm__ volatile("" : : "r"(p) : "memory"); return p; }
ALLOC(alloc_list_head, void **, 48)
ALLOC(alloc_list_node, struct node *, 32)
ALLOC(alloc_plain, void *, 88)
ALLOC(alloc_cycle, struct node *, 24)
ALLOC(alloc_interior, void **, 200)
ALLOC(alloc_interior_child, void *, 56)
ALLOC(alloc_thread_stack, void *, 100)
ALLOC(alloc_register, void *, 112)
ALLOC(alloc_global, void *, 120)
ALLOC(alloc_tls, void *, 136)
ALLOC(alloc_mmap, void *, 152)
ALLOC(alloc_untagged, void *, 168)
ALLOC(alloc_readonly, void *, 184)

/* The compiler may drop stores to memory it sees no one read: say someone does. */
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

/* Zero the dead stack below the caller, where stale copies of pointers lie. */
NOINLINE static void scrub(void)
{
	volatile char buf[16384];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

NOINLINE static void make_lost(void)
{
	void **head = alloc_list_head();
	struct node *n = NULL, *c[3];

	for (int i = 0; i < 5; i++) {
		struct node *x = alloc_list_node();

		x->next = n;
		ESCAPE(x);
		n = x;
	}
	head[0] = n;
	ESCAPE(head);
	for (int i = 0; i < 2; i++)
		alloc_plain();
	for (int i = 0; i < 3; i++)
		c[i] = alloc_cycle();
	for (int i = 0; i < 3; i++)
		c[i]->next = c[(i + 1) % 3];
	ESCAPE(c[0]);
	ESCAPE(c[1]);
	ESCAPE(c[2]);
}

NOINLINE static void make_reachable(void)
{
	void **in = alloc_interior();

	in[0] = alloc_interior_child();
	ESCAPE(in);
	g_interior = (char *)in + 40;
	g_global = alloc_global();
	g_mmap = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g_mmap == MAP_FAILED)
		abort();
	g_mmap[7] = alloc_mmap();
	g_readonly = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g_readonly == MAP_FAILED)
		abort();
	g_readonly[5] = alloc_readonly();
	if (mprotect(g_readonly, 4096, PROT_READ))
		abort();
	g_untagged = __libc_malloc(64);
	memset(g_untagged, 0, 64);
	((void **)g_untagged)[2] = alloc_untagged();
	ESCAPE(g_untagged);
}

static void block_forever(void)
{
	for (;;)
		pause();
}

static void *stack_thread(void *arg)
{
	void *volatile keep = alloc_thread_stack();

	(void)arg;
	scrub();
	pthread_barrier_wait(&ready);
	block_forever();
	return keep;
}

static void *tls_thread(void *arg)
{
	(void)arg;
	t_tls = alloc_tls();
	scrub();
	pthread_barrier_wait(&ready);
	block_forever();
	return NULL;
}

#define HIDE 0x5a5a5a5a5a5a5a5aULL

static void *register_thread(void *arg)
{
	/* the pointer exists only XORed (no pointer) until rbx gets it for the syscall */
	volatile uint64_t hidden = (uint64_t)(uintptr_t)alloc_register() ^ HIDE;

	(void)arg;
	scrub();
	pthread_barrier_wait(&ready);
	scrub();
#if defined(__x86_64__)
	for (;;) {
		uint64_t h = hidden, ret;

		__asm__ volatile("mov %1, %%rbx\n\txor %2, %%rbx\n\tsyscall"
				 : "=a"(ret)
				 : "r"(h), "r"((uint64_t)HIDE), "0"((uint64_t)SYS_pause)
				 : "rbx", "rcx", "r11", "memory");
	}
#else
	(void)hidden;	/* kept XORed: its block looks definitely lost here */
	block_forever();
#endif
	return NULL;
}

ALLOC(alloc_dense, void **, 64)

static int dense(unsigned long n)
{
	void ***v = malloc(n * sizeof(*v));
	uint64_t x = 88172645463325252ULL;

	for (unsigned long i = 0; i < n; i++)
		v[i] = alloc_dense();
	for (unsigned long i = 0; i < n; i++)
		for (int j = 0; j < 8; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v[i][j] = (char *)v[x % n] + (x >> 32) % 3 * 8 * (x >> 40 & 1);
		}
	g_global = v[0];
	free(v);
	scrub();
	printf("ready\n");
	fflush(stdout);
	block_forever();
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	int memcheck = argc > 1 && !strcmp(argv[1], "memcheck");

	if (argc > 2 && !strcmp(argv[1], "dense"))
		return dense(strtoul(argv[2], NULL, 0));
	pthread_barrier_init(&ready, NULL, 4);
	make_lost();
	make_reachable();
	scrub();
	pthread_create(&t[0], NULL, stack_thread, NULL);
	pthread_create(&t[1], NULL, tls_thread, NULL);
	pthread_create(&t[2], NULL, register_thread, NULL);
	pthread_barrier_wait(&ready);
	scrub();
	if (memcheck) {
		usleep(200000);	/* the register thread reaches its syscall */
#ifdef HAVE_MEMCHECK
		VALGRIND_DO_LEAK_CHECK;
#endif
		_exit(0);
	}
	if (argc > 1 && !strcmp(argv[1], "abort")) {
		usleep(200000);	/* the register thread reaches its syscall */
		abort();
	}
	printf("ready\n");
	fflush(stdout);
	block_forever();
	return 0;
}
