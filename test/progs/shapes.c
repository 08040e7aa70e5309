/*
 * Heap shapes that have made graph analyses slow, for t3008-graph.sh and
 * bench/graph.sh (retained sizes and --why on them):
 *
 *   shapes backlist N   g_owner -> new_owner 32 -> N x new_backnode 16, a list whose
 *                       nodes each point to the next and back to the owner (a queue
 *                       or container with a back pointer): the owner has N + 1
 *                       predecessors, each node one more in the dominator tree
 *   shapes chain N      g_chain -> N x new_link 16, each pointing to the next, the last
 *                       to new_tail 64: one path N + 1 blocks long
 *
 * Prints "ready" and waits for gcore.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

struct owner { struct backnode *head; char pad[24]; };	/* 32 */
struct backnode { struct backnode *next; struct owner *owner; };	/* 16 */
struct link { void *next; char pad[8]; };		/* 16 */

struct owner *g_owner;
struct link *g_chain;

#define ALLOC(name, type, n) NOINLINE type name(void) \
	{ void *p = malloc(n); if (!p) exit(1); memset(p, 0, n); ESCAPE(p); return p; }
ALLOC(new_owner, struct owner *, 32)
ALLOC(new_backnode, struct backnode *, 16)
ALLOC(new_link, struct link *, 16)
ALLOC(new_tail, void *, 64)

NOINLINE static void make_backlist(long n)
{
	struct owner *o = new_owner();
	struct backnode **at = &o->head;

	for (long i = 0; i < n; i++) {
		struct backnode *b = new_backnode();

		b->owner = o;
		*at = b;
		at = &b->next;
	}
	g_owner = o;
}

/* built from the tail back: each new link points to the one made before it */
NOINLINE static void make_chain(long n)
{
	void *next = new_tail();

	for (long i = 0; i < n; i++) {
		struct link *l = new_link();

		l->next = next;
		next = l;
	}
	g_chain = next;
}

/* Zero the dead stack below the caller, where stale copies of pointers lie. */
NOINLINE static void scrub(void)
{
	volatile char buf[16384];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (argc != 3 || n < 1) {
		fprintf(stderr, "usage: shapes backlist|chain N\n");
		return 64;
	}
	if (!strcmp(argv[1], "backlist"))
		make_backlist(n);
	else if (!strcmp(argv[1], "chain"))
		make_chain(n);
	else
		return 64;
	scrub();
	ESCAPE(g_owner);
	ESCAPE(g_chain);
	if (write(1, "ready\n", 6) != 6)
		return 1;
	for (;;)
		pause();
	return 0;
}
