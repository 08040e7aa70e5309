/*
 * The block format written by hand for the tests (mkdump.c, unit/scan_test.c), from
 * docs/FORMAT.md rather than from the preload's writer, so that each checks the other.
 */
#ifndef HP_TEST_ENCODE_H
#define HP_TEST_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "heapprof_format.h"

struct target {
	unsigned wsize;		/* 4 or 8 */
	int big_endian;
};

/* n bytes of v at p in the target's byte order */
static inline void put(unsigned char *p, uint64_t v, unsigned n, int big_endian)
{
	for (unsigned i = 0; i < n; i++)
		p[big_endian ? n - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

/*
 * Store header h at hp (its 48 bytes end at the user pointer, target address user)
 * and npcs pcs right below it. The check value is computed here, then XORed with
 * check_xor (non-zero spoils it); h.check is ignored.
 */
static inline void encode_hdr(unsigned char *hp, struct hp_hdr h, uint64_t user,
			      const uint64_t *pcs, unsigned npcs, struct target t,
			      uint64_t check_xor)
{
	uint64_t x = hp_check_head(user, &h);

	for (unsigned i = 0; i < npcs; i++) {
		put(hp - (npcs - i) * t.wsize, pcs[i], t.wsize, t.big_endian);
		x = hp_mix(x, pcs[i]);
	}
	put(hp + 0, hp_check_final(x) ^ check_xor, 8, t.big_endian);
	put(hp + 8, h.size, 8, t.big_endian);
	put(hp + 16, h.birth, 8, t.big_endian);
	put(hp + 24, h.offset, 4, t.big_endian);
	put(hp + 28, h.tid, 4, t.big_endian);
	put(hp + 32, h.version, 2, t.big_endian);
	hp[34] = h.nframes;
	hp[35] = h.wsize;
	put(hp + 36, h.flags, 4, t.big_endian);
	put(hp + 40, h.magic, 8, t.big_endian);
}

/*
 * Version 2, from the comment block of heapprof_format.h. All words are 64-bit in the
 * target's byte order; pcs are target words. check_xor spoils a check as above.
 */

/* the v2 check over a record's checked words, as the comment says */
static inline uint64_t encode2_rec_check(uint64_t addr, const uint64_t *w, unsigned n)
{
	uint64_t x = hp_mix(HP2_SEED, addr);

	for (unsigned i = 0; i < n; i++)
		x = hp_mix(x, w[i]);
	return hp_check_final(x);
}

/*
 * A v2 block header for user pointer user: p points at the byte of user (so the info
 * word goes to p - 16, the tag to p - 8, a BIG size to p - 24). Sizes from 0xFFFFFFFF
 * up, or any with flag HP2_F_BIG, are stored BIG (a valid header then has shift >= 1).
 * Returns the tag.
 */
static inline uint64_t encode2_block(unsigned char *p, uint64_t user, uint64_t size,
				     uint32_t site, unsigned shift, unsigned flags,
				     unsigned time_code, struct target t, uint64_t check_xor)
{
	uint64_t info, tag, x;
	int big = size >= 0xFFFFFFFFu || (flags & HP2_F_BIG);

	if (big)
		flags |= HP2_F_BIG;
	info = (big ? 0xFFFFFFFFu : size) | (uint64_t)site << 32;
	tag = (uint64_t)(time_code & 0xFFF) << 27 | (uint64_t)(shift & 31) << 39 |
	      (uint64_t)(flags & 15) << 44 | (uint64_t)0xA3E1 << 48;
	x = hp_mix(HP2_SEED, user);
	x = hp_mix(x, info);
	x = hp_mix(x, tag);
	if (flags & HP2_F_BIG)
		x = hp_mix(x, size);
	tag |= ((hp_check_final(x) & ((1u << 27) - 1)) ^ check_xor) & ((1u << 27) - 1);
	put(p - 16, info, 8, t.big_endian);
	put(p - 8, tag, 8, t.big_endian);
	if (big)
		put(p - 24, size, 8, t.big_endian);
	return tag;
}

/* Bytes a stack record of n pcs takes. */
static inline size_t encode2_stack_len(unsigned n, struct target t)
{
	return (32 + (size_t)n * t.wsize + 7) & ~(size_t)7;
}

/* A stack record at p (target address addr); returns its length. */
static inline size_t encode2_stack(unsigned char *p, uint64_t addr, uint32_t id, unsigned flags,
				   const uint64_t *pcs, unsigned n, struct target t,
				   uint64_t check_xor)
{
	uint64_t w2 = id | (uint64_t)(n & 0xFFFF) << 32 | (uint64_t)(flags & 0xFF) << 48 |
		      (uint64_t)t.wsize << 56;
	uint64_t x = hp_mix(hp_mix(HP2_SEED, addr), w2);
	size_t len = encode2_stack_len(n, t);

	memset(p, 0, len);
	for (unsigned i = 0; i < n; i++) {
		put(p + 32 + i * t.wsize, pcs[i], t.wsize, t.big_endian);
		x = hp_mix(x, pcs[i]);
	}
	put(p, HP2_STACK_MAGIC, 8, t.big_endian);
	put(p + 8, hp_check_final(x) ^ check_xor, 8, t.big_endian);
	put(p + 16, w2, 8, t.big_endian);
	put(p + 24, 0x5555, 8, t.big_endian);	/* the writer's link: not checked */
	return len;
}

/* A part of stacks (flags HP2_STACK_PART: pcs[0..n-1], ref its outer part's id) or a
 * joined stack (HP2_STACK_JOINED: n words in all, ref its parts' ids, no words of its
 * own) at p; returns its length. */
static inline size_t encode2_stack_ref(unsigned char *p, uint64_t addr, uint32_t id,
				       unsigned flags, uint64_t ref, const uint64_t *pcs,
				       unsigned n, struct target t, uint64_t check_xor)
{
	unsigned own = flags & HP2_STACK_JOINED ? 0 : n;
	uint64_t w2 = id | (uint64_t)(n & 0xFFFF) << 32 | (uint64_t)(flags & 0xFF) << 48 |
		      (uint64_t)t.wsize << 56;
	uint64_t x = hp_mix(hp_mix(hp_mix(HP2_SEED, addr), w2), ref);
	size_t len = (40 + (size_t)own * t.wsize + 7) & ~(size_t)7;

	memset(p, 0, len);
	for (unsigned i = 0; i < own; i++) {
		put(p + 40 + i * t.wsize, pcs[i], t.wsize, t.big_endian);
		x = hp_mix(x, pcs[i]);
	}
	put(p, HP2_STACK_MAGIC, 8, t.big_endian);
	put(p + 8, hp_check_final(x) ^ check_xor, 8, t.big_endian);
	put(p + 16, w2, 8, t.big_endian);
	put(p + 24, 0x5555, 8, t.big_endian);	/* the writer's link: not checked */
	put(p + 32, ref, 8, t.big_endian);
	return len;
}

/* A site record (64 bytes) at p. */
static inline size_t encode2_site(unsigned char *p, uint64_t addr, uint32_t id, uint32_t stack,
				  uint32_t tid, unsigned entry, unsigned flags, struct target t,
				  uint64_t check_xor)
{
	uint64_t w[2] = { id | (uint64_t)stack << 32,
			  tid | (uint64_t)(entry & 0xFFFF) << 32 | (uint64_t)(flags & 0xFFFF) << 48 };

	memset(p, 0, 64);
	put(p, HP2_SITE_MAGIC, 8, t.big_endian);
	put(p + 8, encode2_rec_check(addr, w, 2) ^ check_xor, 8, t.big_endian);
	put(p + 16, w[0], 8, t.big_endian);
	put(p + 24, w[1], 8, t.big_endian);
	put(p + 32, 0x6666, 8, t.big_endian);	/* the writer's link: not checked */
	return 64;
}

/* A process record (64 bytes) at p; version is normally 2. */
static inline size_t encode2_proc(unsigned char *p, uint64_t addr, unsigned version,
				  uint32_t pid, uint64_t period, uint64_t mono_ns, uint64_t real_ns,
				  unsigned frame_limit, struct target t, uint64_t check_xor)
{
	uint64_t w[6] = { (version & 0xFFFF) | (uint64_t)t.wsize << 16 | (uint64_t)pid << 32,
			  period, mono_ns, real_ns, frame_limit, 0 };

	put(p, HP2_PROC_MAGIC, 8, t.big_endian);
	put(p + 8, encode2_rec_check(addr, w, 6) ^ check_xor, 8, t.big_endian);
	for (int i = 0; i < 6; i++)
		put(p + 16 + 8 * i, w[i], 8, t.big_endian);
	return 64;
}

/* A slab table's slot word for a live block, from the format's comment. */
static inline uint64_t encode2_slot(uint32_t site, uint64_t size, unsigned time_code, int sampled)
{
	return site | (size & 0xFFFF) << 32 | (uint64_t)(time_code & 0xFFF) << 48 |
	       (uint64_t)(sampled ? 1 : 0) << 60;
}

/* A slab table at p (target address addr): start, slot 0's offset from it, the stride
 * and n slot words; returns its length. */
static inline size_t encode2_slab(unsigned char *p, uint64_t addr, uint64_t start, unsigned offset,
				  unsigned stride, const uint64_t *slots, unsigned n, struct target t,
				  uint64_t check_xor)
{
	uint64_t w[2] = { start, (offset & 0xFFFF) | (uint64_t)(stride & 0xFFFF) << 16 |
				 (uint64_t)n << 32 };

	put(p, HP2_SLAB_MAGIC, 8, t.big_endian);
	put(p + 8, encode2_rec_check(addr, w, 2) ^ check_xor, 8, t.big_endian);
	put(p + 16, w[0], 8, t.big_endian);
	put(p + 24, w[1], 8, t.big_endian);
	for (unsigned i = 0; i < n; i++)
		put(p + 32 + 8 * (size_t)i, slots[i], 8, t.big_endian);
	return 32 + 8 * (size_t)n;
}

#endif
