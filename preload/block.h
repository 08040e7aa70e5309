/*
 * Block headers of format v2 as heapprof.so writes and checks them (layout in
 * include/heapprof_format.h): 16 bytes right below the user pointer, so that free()
 * reads the cache line the allocator's own chunk header is in.
 */
#ifndef HP_BLOCK_H
#define HP_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapprof_format.h"

/* Header room in front of a block of size bytes from plain malloc: 16, or 32 for
 * sizes that need the BIG size word. As log2(offset / 16). */
static inline unsigned block_shift(size_t size)
{
	return (uint64_t)size >= HP2_SIZE_BIG ? 1 : 0;
}

/* Tag the block real, whose user data starts 16 << shift bytes in; returns user. */
static inline void *block_write(void *real, unsigned shift, uint64_t size, uint32_t site,
				unsigned flags, uint32_t time)
{
	unsigned char *user = (unsigned char *)real + ((size_t)16 << shift);
	uint64_t *w = (uint64_t *)user - 2;	/* w[0] info, w[1] tag */
	uint64_t info = (size >= HP2_SIZE_BIG ? HP2_SIZE_BIG : size) | (uint64_t)site << 32;
	uint64_t tag = hp2_tag_magic_bits() | (uint64_t)flags << HP2_FLAGS_SHIFT |
		       (uint64_t)shift << HP2_OFFSET_SHIFT | (uint64_t)time << HP2_TIME_SHIFT;

	if (size >= HP2_SIZE_BIG) {
		tag |= (uint64_t)HP2_F_BIG << HP2_FLAGS_SHIFT;
		w[-1] = size;
	}
	w[0] = info;
	w[1] = tag | hp2_block_check((uint64_t)(uintptr_t)user, info, tag, size);
	return user;
}

/* Whether the word below user carries the v2 magic: block_tag() then checks it whole. */
static inline bool block_has_magic(const void *user)
{
	return (((const uint64_t *)user)[-1] >> 48) == HP2_MAGIC16;
}

/*
 * The tag of a live header at user, or 0 if user carries none (a block from before
 * heapprof, from another allocator, or left out by sampling). Reads the 8 bytes
 * below user first, the only ones every allocator keeps readable, and the rest only
 * when they hold the magic.
 */
static inline uint64_t block_tag(const void *user)
{
	const uint64_t *w = (const uint64_t *)user - 2;
	uint64_t tag = w[1], big = 0;
	unsigned flags = (unsigned)(tag >> HP2_FLAGS_SHIFT) & HP2_FLAGS_MASK;
	unsigned shift = (unsigned)(tag >> HP2_OFFSET_SHIFT) & HP2_OFFSET_MASK;

	if (!block_has_magic(user) || shift > HP2_MAX_SHIFT || (flags & ~HP2_F_KNOWN))
		return 0;
	if (flags & HP2_F_BIG) {
		if (shift == 0)
			return 0;
		big = w[-1];
	}
	if (hp2_block_check((uint64_t)(uintptr_t)user, w[0], tag, big) != (tag & HP2_CHECK_MASK))
		return 0;
	return tag;
}

static inline size_t block_offset(uint64_t tag)
{
	return (size_t)16 << ((tag >> HP2_OFFSET_SHIFT) & HP2_OFFSET_MASK);
}

static inline unsigned block_flags(uint64_t tag)
{
	return (unsigned)(tag >> HP2_FLAGS_SHIFT) & HP2_FLAGS_MASK;
}

static inline uint64_t block_size(const void *user, uint64_t tag)
{
	const uint64_t *w = (const uint64_t *)user - 2;

	return block_flags(tag) & HP2_F_BIG ? w[-1] : (uint32_t)w[0];
}

/* Kill the header so that no scan counts the block: before the memory goes back. */
static inline void block_erase(void *user)
{
	*(volatile uint64_t *)((uint64_t *)user - 1) = 0;
}

/* Undo block_erase() on a block that stays live (a realloc that failed). */
static inline void block_revive(void *user, uint64_t tag)
{
	((uint64_t *)user)[-1] = tag;
}

#endif
