/*
 * Workloads for the stack table (block format v2), run under heapprof.so:
 *   stacktab deep N        N-frame-deep allocations from main and from a thread:
 *                          deep_leaf holds 4000 bytes under main, 8000 under the thread
 *   stacktab race T K      T threads released at once allocate through the same K
 *                          distinct stacks (recursion depths 1..K), 16 bytes each
 *                          at depth d in race_leaf; then the program checks its own
 *                          table: every stack record there is distinct
 *   stacktab sampled       a known heap for the sampling estimate: sampled_big holds
 *                          20,000 x 3,000 bytes, sampled_small 100,000 x 100 bytes,
 *                          sampled_grown 20,000 blocks made at 100 bytes and grown by
 *                          realloc to 3,000, sampled_shrunk 20,000 made at 3,000 and
 *                          shrunk to 300
 * Each prints "ready" and waits to be dumped, or exits with a message on failure.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_format.h"

#define NOINLINE __attribute__((noinline, noclone))

static volatile int sink;

/* ---- deep ----------------------------------------------------------------------- */

NOINLINE static void *deep_leaf(size_t size)
{
	void *p = malloc(size);

	sink += p != NULL;
	return p;
}

/* Recursion that neither the compiler nor a tail call can fold away. */
NOINLINE static void *deep_down(unsigned n, size_t size)
{
	void *p = n ? deep_down(n - 1, size) : deep_leaf(size);

	sink += (int)n;
	return p;
}

static unsigned deep_frames;

static void *deep_thread(void *arg)
{
	void *p = deep_down(deep_frames, 8000);

	sink += arg != NULL;	/* no tail call: deep_thread stays a frame */
	return p;
}

static int run_deep(unsigned n)
{
	pthread_t t;
	void *p;

	deep_frames = n;
	if (!deep_down(n, 4000) || pthread_create(&t, NULL, deep_thread, NULL) ||
	    pthread_join(t, &p) || !p)
		return 1;
	return 0;
}

/* ---- race ----------------------------------------------------------------------- */

static unsigned race_k;
static pthread_barrier_t race_go;

NOINLINE static void race_leaf(void)
{
	sink += malloc(16) != NULL;
}

NOINLINE static void race_down(unsigned n)
{
	if (n)
		race_down(n - 1);
	else
		race_leaf();
	sink += (int)n;
}

static void *race_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&race_go);
	for (unsigned d = 1; d <= race_k; d++)
		race_down(d);
	return NULL;
}

/* Stack records in this process's anonymous mappings, checked as a reader would:
 * whole stacks, parts (HP2_STACK_PART) and joined stacks (HP2_STACK_JOINED), the last
 * two with w4 before their words. */
struct rec {
	const uint64_t *w;
	unsigned n;		/* words it holds */
	uint64_t key, ref;	/* w2's bits 32..63 (nframes, flags), and w4 (0 if none) */
	const uintptr_t *pcs;
};

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->ref != y->ref)
		return x->ref < y->ref ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return memcmp(x->pcs, y->pcs, x->n * sizeof(uintptr_t));
}

static size_t table_bytes;	/* the records' bytes, each rounded up to 8 */

/* A valid stack record at w, below the end of its mapping b: 0 if not one. */
static int rec_at(const uint64_t *w, const char *b, struct rec *r)
{
	unsigned flags = (unsigned)(w[2] >> 48) & 0xFF, nf = (unsigned)(w[2] >> 32) & 0xFFFF;
	unsigned head = HP2_STACK_WORDS, own;
	uint64_t x = hp_mix(hp_mix(HP2_SEED, (uint64_t)(uintptr_t)w), w[2]);

	if (flags & (HP2_STACK_PART | HP2_STACK_JOINED)) {
		head = HP2_STACK_REF_WORDS;
		if ((const char *)(w + head) > b)
			return 0;
		x = hp_mix(x, w[4]);
	}
	own = flags & HP2_STACK_JOINED ? 0 : nf;
	if ((const char *)(w + head) + own * sizeof(uintptr_t) > b)
		return 0;
	for (unsigned i = 0; i < own; i++)
		x = hp_mix(x, ((const uintptr_t *)(w + head))[i]);
	if (hp_check_final(x) != w[1])
		return 0;
	*r = (struct rec){ w, own, w[2] >> 32, head > HP2_STACK_WORDS ? w[4] : 0,
			   (const uintptr_t *)(w + head) };
	table_bytes += (head * 8 + own * sizeof(uintptr_t) + 7) & ~(size_t)7;
	return 1;
}

static int check_table(unsigned *distinct)
{
	static struct rec recs[1 << 16];
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8];
	unsigned long a, b;
	size_t n = 0;

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		int off = 0;

		/* anonymous: nothing after the inode */
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &a, &b, perms, &off) < 3 ||
		    strcmp(perms, "rw-p") || !off || (line[off] && line[off] != '\n'))
			continue;
		for (const uint64_t *w = (const uint64_t *)a; w + HP2_STACK_WORDS <= (const uint64_t *)b; w++) {
			if (*w != HP2_STACK_MAGIC || w == (const uint64_t *)&recs ||
			    n == sizeof(recs) / sizeof(recs[0]))
				continue;
			n += rec_at(w, (const char *)b, &recs[n]);
		}
	}
	fclose(f);
	qsort(recs, n, sizeof(recs[0]), rec_cmp);
	for (size_t i = 1; i < n; i++) {
		if (!rec_cmp(&recs[i - 1], &recs[i])) {
			fprintf(stderr, "stacktab: a stack is in the table twice\n");
			return 1;
		}
	}
	*distinct = (unsigned)n;
	return 0;
}

static int run_race(unsigned t, unsigned k)
{
	pthread_t tids[64];
	unsigned distinct;

	if (t > 64)
		t = 64;
	race_k = k;
	pthread_barrier_init(&race_go, NULL, t);
	for (unsigned i = 0; i < t; i++)
		if (pthread_create(&tids[i], NULL, race_thread, NULL))
			return 1;
	for (unsigned i = 0; i < t; i++)
		pthread_join(tids[i], NULL);
	if (check_table(&distinct))
		return 1;
	fprintf(stderr, "stacktab: %u distinct stack records\n", distinct);
	printf("stack records: %zu bytes\n", table_bytes);
	return 0;
}

/* ---- sampled -------------------------------------------------------------------- */

NOINLINE static void sampled_big(void)
{
	for (int i = 0; i < 20000; i++)
		sink += malloc(3000) != NULL;
}

NOINLINE static void sampled_small(void)
{
	for (int i = 0; i < 100000; i++)
		sink += malloc(100) != NULL;
}

NOINLINE static void sampled_grown(void)
{
	static void *keep[20000];

	for (int i = 0; i < 20000; i++)
		keep[i] = malloc(100);
	for (int i = 0; i < 20000; i++)
		keep[i] = realloc(keep[i], 3000);
	sink += keep[0] != NULL;
}

NOINLINE static void sampled_shrunk(void)
{
	for (int i = 0; i < 20000; i++)
		sink += realloc(malloc(3000), 300) != NULL;
}

int main(int argc, char **argv)
{
	int rc = 2;

	if (argc >= 3 && !strcmp(argv[1], "deep"))
		rc = run_deep((unsigned)atoi(argv[2]));
	else if (argc >= 4 && !strcmp(argv[1], "race"))
		rc = run_race((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	else if (argc >= 2 && !strcmp(argv[1], "sampled"))
		sampled_big(), sampled_small(), sampled_grown(), sampled_shrunk(), rc = 0;
	if (rc) {
		fprintf(stderr, rc == 2 ? "usage: stacktab deep N | race T K | sampled\n"
					: "stacktab: failed\n");
		return rc;
	}
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
