/*
 * The allocator interface (alloc.h): tries each allocator file on the dump and answers
 * lookups on what the one that recognised it found. Reads no chunk itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "alloc_int.h"

void alloc_open(struct alloc *a, const struct image *img, struct sym *sym,
		const struct scan_blocks *blocks, const char *sysroot)
{
	memset(a, 0, sizeof(*a));
	if (!alloc_glibc_open(a, img, sym, blocks, sysroot))
		a->known = false;
}

void alloc_close(struct alloc *a)
{
	free(a->chunks);
	free(a->nonroot);
	free(a->heaps);
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

const char *alloc_kind_name(enum alloc_kind k)
{
	static const char *const names[ALLOC_NKINDS] = {
		"in use, heapprof blocks", "in use, untagged", "free in tcache", "free in fastbins",
		"free in bins", "top", "fenceposts" };

	return k < ALLOC_NKINDS ? names[k] : "?";
}

const char *alloc_describe(const struct alloc *a, char *buf, size_t size)
{
	if (a->known)
		snprintf(buf, size, "%s", a->name);
	else
		snprintf(buf, size, "not recognised (%s)", a->reason);
	return buf;
}
