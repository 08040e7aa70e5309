/*
 * A Python name record (HP2_PYCODE_MAGIC, include/heapprof_format.h) made by hand, as
 * the unit tests feed it to the analyzer: function q in file f, first line 3, and a
 * line table whose first code unit is on line 4.
 */
#ifndef HP_TEST_PYRECORD_H
#define HP_TEST_PYRECORD_H

#include <stdint.h>
#include <string.h>

#include "heapprof_format.h"

/* The record as it would lie at target address at, into w; returns its bytes. */
static inline size_t py_make_record(uint64_t *w, uint64_t at, const char *q, const char *f)
{
	static const uint8_t lt[] = { 0xE8, 0x02 };	/* code unit 0: line 3 + 1 */
	size_t nq = strlen(q), nf = strlen(f), nb = nq + nf + sizeof(lt), nw = (nb + 7) / 8;
	uint64_t x;

	memset(w, 0, (HP2_PYCODE_WORDS + nw) * 8);
	w[0] = HP2_PYCODE_MAGIC;
	w[2] = 0x7f0000123450ULL;
	w[3] = 0x030C01F0u | (uint64_t)3 << 32;
	w[4] = nq | nf << 16 | (uint64_t)sizeof(lt) << 32;
	memcpy(w + HP2_PYCODE_WORDS, q, nq);
	memcpy((char *)(w + HP2_PYCODE_WORDS) + nq, f, nf);
	memcpy((char *)(w + HP2_PYCODE_WORDS) + nq + nf, lt, sizeof(lt));
	x = hp_mix(HP2_SEED, at);
	for (size_t i = 2; i < HP2_PYCODE_WORDS + nw; i++)
		x = hp_mix(x, w[i]);
	w[1] = hp_check_final(x);
	return (HP2_PYCODE_WORDS + nw) * 8;
}

#endif
