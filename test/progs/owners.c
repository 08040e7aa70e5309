/*
 * A heap with a known ownership graph, for t3008-graph.sh (retained sizes and --why):
 *
 *   g_cache -> new_cache 64 -> new_entries 32 (4 pointers) -> 4 x new_entry 48, each
 *              -> its new_payload 1000
 *   g_owner_a, g_owner_b -> new_owner 40 each -> the same new_blob 500 (shared: neither
 *              owner retains it)
 *   a local of list_thread -> new_node 32 -> new_node 32 -> ... (5 nodes)
 *   t_block, a __thread variable of list_thread -> new_tls_block 72
 *   rbx of a thread waiting in a system call -> new_reg_block 16 (x86-64 only)
 *   nothing -> new_lost_head 24 -> new_lost_tail 56 (a definitely lost block and the
 *              indirectly lost one it holds)
 *
 * make_owners runs in heapprof region "owners". Arguments: "nocache" leaves the cache
 * out (a --base for a diff), "age" sleeps 2 s after making the cache (--older-than).
 * Prints "ready" and waits for gcore.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof.h"

#define NOINLINE __attribute__((noinline, noclone))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")
#define NENTRIES 4

struct entry { void *payload; char pad[40]; };		/* 48 */
struct cache { struct entry **entries; char pad[56]; };	/* 64 */
struct owner { char pad[16]; void *blob; char pad2[16]; };	/* 40 */
struct node { struct node *next; char pad[24]; };	/* 32 */
struct lost { void *tail; char pad[16]; };		/* 24 */

struct cache *g_cache;
struct owner *g_owner_a, *g_owner_b;
__thread void *t_block;
static pthread_barrier_t ready;

#define ALLOC(name, type, n) NOINLINE type name(void) \
	{ void *p = malloc(n); memset(p, 0, n); ESCAPE(p); return p; }
ALLOC(new_cache, struct cache *, 64)
ALLOC(new_entries, struct entry **, 8 * NENTRIES)
ALLOC(new_entry, struct entry *, 48)
ALLOC(new_payload, void *, 1000)
ALLOC(new_owner, struct owner *, 40)
ALLOC(new_blob, void *, 500)
ALLOC(new_node, struct node *, 32)
ALLOC(new_tls_block, void *, 72)
ALLOC(new_reg_block, void *, 16)
ALLOC(new_lost_head, struct lost *, 24)
ALLOC(new_lost_tail, void *, 56)

/* Zero the dead stack below the caller, where stale copies of pointers lie. */
NOINLINE static void scrub(void)
{
	volatile char buf[16384];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

NOINLINE static void make_cache(void)
{
	struct cache *c = new_cache();

	c->entries = new_entries();
	for (int i = 0; i < NENTRIES; i++) {
		c->entries[i] = new_entry();
		c->entries[i]->payload = new_payload();
	}
	g_cache = c;
	ESCAPE(g_cache);
}

NOINLINE static void make_owners(void)
{
	void *blob;
	struct owner **o[2] = { &g_owner_a, &g_owner_b };

	heapprof_region_begin("owners");
	blob = new_blob();
	for (int i = 0; i < 2; i++) {
		*o[i] = new_owner();
		(*o[i])->blob = blob;
	}
	heapprof_region_end();
	ESCAPE(g_owner_a);
}

NOINLINE static void make_lost(void)
{
	struct lost *h = new_lost_head();

	h->tail = new_lost_tail();
	ESCAPE(h);
}

NOINLINE static struct node *make_list(void)
{
	struct node *head = NULL;

	for (int i = 0; i < 5; i++) {
		struct node *n = new_node();

		n->next = head;
		head = n;
	}
	return head;
}

static void *list_thread(void *arg)
{
	struct node *volatile keep = make_list();

	(void)arg;
	t_block = new_tls_block();
	scrub();
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return keep;
}

#ifdef __x86_64__
#include <sys/syscall.h>

/* The block's only pointer is rbx, while the thread waits in pause(2) forever. */
NOINLINE static void *reg_thread(void *arg)
{
	void *p = new_reg_block();

	(void)arg;
	scrub();
	pthread_barrier_wait(&ready);
	for (;;) {
		long nr = SYS_pause;

		__asm__ volatile("syscall" : "+a"(nr) : "b"(p) : "rcx", "r11", "memory");
	}
	return NULL;
}
#define THREADS 3
#else
#define THREADS 2
#endif

int main(int argc, char **argv)
{
	pthread_t t;

	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_barrier_init(&ready, NULL, THREADS);
	if (argc < 2 || strcmp(argv[1], "nocache"))
		make_cache();
	if (argc > 1 && !strcmp(argv[1], "age"))
		sleep(2);
	make_owners();
	make_lost();
	scrub();
	pthread_create(&t, NULL, list_thread, NULL);
#ifdef __x86_64__
	pthread_create(&t, NULL, reg_thread, NULL);
#endif
	pthread_barrier_wait(&ready);
	scrub();
	printf("ready\n");
	for (;;)
		pause();
}
