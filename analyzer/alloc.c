/*
 * The allocator interface (alloc.h): tries each reader of the table on the dump and
 * answers lookups on what the one that knew it found. Reads no chunk itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "alloc_int.h"

/* Every allocator heapprof-analyze reads, tried in order. */
static const struct alloc_reader *const readers[] = {
	&alloc_glibc_reader,
};
#define N_READERS (sizeof(readers) / sizeof(readers[0]))

void alloc_open(struct alloc *a, const struct image *img, struct sym *sym,
		const struct scan_blocks *blocks, const char *sysroot)
{
	char name[sizeof(a->name)] = "", reason[sizeof(a->reason)] = "";

	for (size_t i = 0; i < N_READERS; i++) {
		void *state = NULL;

		memset(a, 0, sizeof(*a));
		if (readers[i]->probe(a, img, sym, sysroot, &state)) {
			a->known = true;
			a->reader = readers[i];
			readers[i]->walk(a, img, blocks, state);
			return;
		}
		if (!i) {	/* the first reader's reason, when none knows it */
			memcpy(name, a->name, sizeof(name));
			memcpy(reason, a->reason, sizeof(reason));
		}
	}
	memcpy(a->name, name, sizeof(name));
	memcpy(a->reason, reason, sizeof(reason));
}

void alloc_close(struct alloc *a)
{
	free(a->chunks);
	free(a->nonroot);
	free(a->heaps);
	free(a->spans);
	memset(a, 0, sizeof(*a));
}

void alloc_drop_chunks(struct alloc *a)
{
	free(a->chunks);
	a->chunks = NULL;
	a->nchunks = 0;
}

void alloc_drop_nonroot(struct alloc *a)
{
	free(a->nonroot);
	a->nonroot = NULL;
	a->nnonroot = 0;
}

const struct alloc_chunk *alloc_find(const struct alloc *a, uint64_t p)
{
	size_t lo = 0, hi = a->nchunks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->chunks[mid].addr <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || p - a->chunks[lo - 1].addr >= a->chunks[lo - 1].size)
		return NULL;
	return &a->chunks[lo - 1];
}

size_t alloc_nonroot_from(const struct alloc *a, uint64_t p)
{
	size_t lo = 0, hi = a->nnonroot;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->nonroot[mid].end <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t alloc_run_release(const struct alloc *a, uint64_t start, uint64_t end)
{
	return a->reader ? a->reader->run_release(start, end) : 0;
}

bool alloc_usable(const struct alloc *a, const struct alloc_chunk *c, uint64_t *mem,
		  uint64_t *size)
{
	if (!a->reader)
		return false;
	a->reader->usable(c, mem, size);
	return true;
}

/* an unknown allocator's chunks are never listed: these only stand in */
static const char *const neutral_names[ALLOC_NKINDS] = {
	"in use, heapprof blocks", "in use, untagged", "free, cached", "free, unjoined", "free",
	"top", "fences" };
static const char *const neutral_keys[ALLOC_NKINDS] = {
	"tagged", "untagged", "cached", "unjoined", "free", "top", "fences" };

const char *alloc_kind_name(const struct alloc *a, enum alloc_kind k)
{
	if (k >= ALLOC_NKINDS)
		return "?";
	return a->reader ? a->reader->kind_names[k] : neutral_names[k];
}

const char *alloc_kind_key(const struct alloc *a, enum alloc_kind k)
{
	if (k >= ALLOC_NKINDS)
		return "?";
	return a->reader ? a->reader->kind_keys[k] : neutral_keys[k];
}

const char *alloc_describe(const struct alloc *a, char *buf, size_t size)
{
	if (a->known)
		snprintf(buf, size, "%s", a->name);
	else
		snprintf(buf, size, "not recognised (%s)", a->reason);
	return buf;
}
