/*
 * The block format written by hand for the tests (mkdump.c, unit/scan_test.c), from
 * docs/FORMAT.md rather than from the preload's writer, so that each checks the other.
 */
#ifndef HP_TEST_ENCODE_H
#define HP_TEST_ENCODE_H

#include <stdint.h>

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

#endif
