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

/* Stack records in this process's anonymous mappings, checked as a reader would. */
struct rec {
	const uint64_t *w;
	unsigned n;
};

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return memcmp(x->w + HP2_STACK_WORDS, y->w + HP2_STACK_WORDS, x->n * sizeof(uintptr_t));
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
			unsigned nf;
			uint64_t x;

			if (*w != HP2_STACK_MAGIC || w == (const uint64_t *)&recs)
				continue;
			nf = (unsigned)(w[2] >> 32) & 0xFFFF;
			if ((const char *)(w + HP2_STACK_WORDS) + nf * sizeof(uintptr_t) > (const char *)b)
				continue;
			x = hp_mix(HP2_SEED, (uint64_t)(uintptr_t)w);
			x = hp_mix(x, w[2]);
			for (unsigned i = 0; i < nf; i++)
				x = hp_mix(x, ((const uintptr_t *)(w + HP2_STACK_WORDS))[i]);
			if (hp_check_final(x) != w[1] || n == sizeof(recs) / sizeof(recs[0]))
				continue;
			recs[n++] = (struct rec){ w, nf };
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
