/*
 * heapprof block format, version 1: the only contract between what writes block
 * headers (heapprof.so, a firmware port of preload/hp_tag.c) and heapprof-analyze.
 * docs/FORMAT.md describes the same bytes for porters. C99, no dependencies.
 *
 *   | pad | pc[0] pc[1] .. pc[nframes-1] | struct hp_hdr (48 bytes) | user bytes ...
 *   ^ real block start                                             ^ user pointer
 *   |<----------------------------- offset ----------------------->|
 *
 * Every field is stored in the target's byte order. A pc[] entry is one target word
 * (wsize = 4 or 8 bytes). pc[0] is the innermost frame, the return address into the
 * function that called malloc; pc[nframes-1] is the outermost caller recorded.
 * The magic is the last field, at user - 8, and that address is a multiple of 8: a
 * scanner finds every header by testing each 8-aligned 64-bit word of memory.
 */
#ifndef HEAPPROF_FORMAT_H
#define HEAPPROF_FORMAT_H

#include <stdint.h>

#define HP_FORMAT_VERSION 1
#define HP_MAGIC 0xA3E1F7C95B0D6E4BULL	/* live block; free() stores 0 over it */
#define HP_HDR_SIZE 48			/* sizeof(struct hp_hdr), same on every target */
#define HP_MAX_FRAMES 64		/* nframes never exceeds this */

/*
 * Flags. The low 16 bits are compatible: an analyzer that does not know one may
 * ignore it. The high 16 bits change how the block must be read: an analyzer must
 * reject a block carrying one it does not know. Version 1 defines none of either;
 * writers store 0. (Reserved for sampling weights, leak marks, and so on.)
 */
#define HP_FLAGS_INCOMPAT_MASK 0xFFFF0000u
#define HP_FLAGS_KNOWN 0u

struct hp_hdr {
	uint64_t check;		/* hp_check() of everything below and the pcs: binds the
				 * header to its address, so a copy or a stale header
				 * left in reused memory does not validate */
	uint64_t size;		/* bytes the program asked for */
	uint64_t birth;		/* allocation time, ns of a monotonic clock; 0 = unknown */
	uint32_t offset;	/* user pointer minus real block start, bytes;
				 * >= HP_HDR_SIZE + nframes * wsize */
	uint32_t tid;		/* allocating thread (Linux: gettid()); 0 = unknown */
	uint16_t version;	/* HP_FORMAT_VERSION */
	uint8_t nframes;	/* pcs stored below this header; 0 if no stack was taken */
	uint8_t wsize;		/* bytes per pc: 4 or 8 (the target's pointer size) */
	uint32_t flags;		/* HP_FLAGS_*, 0 in version 1 */
	uint64_t magic;		/* HP_MAGIC while the block is live */
};

_Static_assert(sizeof(struct hp_hdr) == HP_HDR_SIZE, "hp_hdr layout");

/*
 * The check value. Every input is taken as a number (after byte-order conversion),
 * so a big-endian target and a little-endian analyzer compute the same value:
 *
 *   h = HP_CHECK_SEED
 *   h = hp_mix(h, user)                 user pointer, zero-extended to 64 bits
 *   h = hp_mix(h, size)
 *   h = hp_mix(h, birth)
 *   h = hp_mix(h, offset | tid << 32)
 *   h = hp_mix(h, version | nframes << 16 | wsize << 24 | flags << 32)
 *   h = hp_mix(h, pc[i])                for i = 0 .. nframes-1, zero-extended
 *   check = h ^ (h >> 31)
 */
#define HP_CHECK_SEED 0x6A09E667F3BCC909ULL
#define HP_CHECK_MUL 0x9E3779B97F4A7C15ULL

static inline uint64_t hp_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= HP_CHECK_MUL;
	return h ^ (h >> 29);
}

static inline uint64_t hp_check_head(uint64_t user, const struct hp_hdr *h)
{
	uint64_t x = HP_CHECK_SEED;

	x = hp_mix(x, user);
	x = hp_mix(x, h->size);
	x = hp_mix(x, h->birth);
	x = hp_mix(x, (uint64_t)h->offset | (uint64_t)h->tid << 32);
	x = hp_mix(x, (uint64_t)h->version | (uint64_t)h->nframes << 16 |
			      (uint64_t)h->wsize << 24 | (uint64_t)h->flags << 32);
	return x;
}

static inline uint64_t hp_check_final(uint64_t x)
{
	return x ^ (x >> 31);
}

#endif
