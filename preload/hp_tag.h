/*
 * Portable tagging core: writes, finds and erases heapprof block headers around a
 * block that some allocator handed out. C99 and <string.h> only, so it builds into
 * firmware as well as heapprof.so; the caller supplies the memory and the stack.
 * docs/PORTING.md shows how to wrap a malloc/free pair with it.
 */
#ifndef HP_TAG_H
#define HP_TAG_H

#include <stddef.h>
#include <stdint.h>

#include "heapprof_format.h"

/*
 * Bytes to reserve in front of the user data for a header with up to max_frames pcs
 * (1..HP_MAX_FRAMES), rounded up to align (a power of two, at least 8): allocate
 * reserve + size bytes and pass reserve as offset to hp_tag_write().
 */
static inline size_t hp_tag_reserve(unsigned max_frames, size_t align)
{
	size_t need = HP_HDR_SIZE + (size_t)max_frames * sizeof(uintptr_t);

	return (need + align - 1) & ~(align - 1);
}

struct hp_tag_info {
	uint64_t size;		/* bytes the program asked for */
	uint64_t birth;		/* ns of a monotonic clock, or 0 */
	uint32_t tid;		/* thread id, or 0 */
	const uintptr_t *pcs;	/* pcs[0] innermost return address */
	unsigned nframes;	/* <= HP_MAX_FRAMES; more are cut */
};

/*
 * Write a live header for the block starting at real whose user data starts at
 * real + offset; returns that user pointer. offset must be a multiple of 8, at least
 * HP_HDR_SIZE + nframes * sizeof(uintptr_t), and below 4 GiB; nframes is cut to fit.
 */
void *hp_tag_write(void *real, size_t offset, const struct hp_tag_info *info);

/*
 * If user carries a live header, return the real block start, else NULL. Reads the
 * 8 bytes below user first, the only bytes below a block that every allocator keeps
 * readable, and the rest of the header only when they hold the magic.
 */
void *hp_tag_real(const void *user);

/* The size recorded in a live header (hp_tag_real(user) != NULL). */
static inline uint64_t hp_tag_size(const void *user)
{
	const struct hp_hdr *h = (const struct hp_hdr *)user - 1;

	return h->size;
}

/* Offset recorded in a live header: user pointer minus real block start. */
static inline size_t hp_tag_offset(const void *user)
{
	const struct hp_hdr *h = (const struct hp_hdr *)user - 1;

	return h->offset;
}

/* Kill the header so that no scan counts the block: call before the memory goes back. */
static inline void hp_tag_erase(void *user)
{
	struct hp_hdr *h = (struct hp_hdr *)user - 1;

	/* volatile: the compiler must not drop a store into memory about to be freed */
	*(volatile uint64_t *)&h->magic = 0;
}

/* Undo hp_tag_erase() on a block that stays live (a realloc that failed). */
static inline void hp_tag_revive(void *user)
{
	struct hp_hdr *h = (struct hp_hdr *)user - 1;

	h->magic = HP_MAGIC;
}

/* A callback that stores up to max return addresses, innermost first; returns the count. */
typedef unsigned (*hp_backtrace_fn)(uintptr_t *pcs, unsigned max, void *arg);

struct hp_tagger {
	unsigned max_frames;		/* 1..HP_MAX_FRAMES */
	hp_backtrace_fn backtrace;	/* NULL: no stacks (nframes = 0) */
	void *arg;			/* passed to backtrace */
	uint32_t (*thread_id)(void);	/* NULL: tid 0 */
	uint64_t (*now_ns)(void);	/* NULL: birth 0 */
};

/*
 * For ports: take a backtrace through t and tag the block real, whose user data
 * starts at real + offset (offset from hp_tag_reserve(t->max_frames, ...)).
 */
void *hp_tag_block(const struct hp_tagger *t, void *real, size_t offset, uint64_t size);

#endif
