/*
 * The one way the analyzer reads bytes that came from a core or a dump: a cursor that
 * knows how much is left, converts the target's byte order, and fails instead of
 * reading past the end.
 */
#ifndef HP_RD_H
#define HP_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct rd {
	const unsigned char *p;
	size_t left;
	bool big_endian;	/* the target's byte order */
};

static inline bool host_big_endian(void)
{
	return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

static inline bool rd_bytes(struct rd *r, void *out, size_t n)
{
	if (r->left < n)
		return false;		/* truncated: the caller skips this candidate */
	memcpy(out, r->p, n);		/* raw dumps give no alignment promise */
	r->p += n;
	r->left -= n;
	return true;
}

static inline bool rd_u64(struct rd *r, uint64_t *v)
{
	if (!rd_bytes(r, v, sizeof(*v)))
		return false;
	if (r->big_endian != host_big_endian())
		*v = __builtin_bswap64(*v);
	return true;
}

static inline bool rd_u32(struct rd *r, uint32_t *v)
{
	if (!rd_bytes(r, v, sizeof(*v)))
		return false;
	if (r->big_endian != host_big_endian())
		*v = __builtin_bswap32(*v);
	return true;
}

static inline bool rd_u16(struct rd *r, uint16_t *v)
{
	if (!rd_bytes(r, v, sizeof(*v)))
		return false;
	if (r->big_endian != host_big_endian())
		*v = __builtin_bswap16(*v);
	return true;
}

static inline bool rd_u8(struct rd *r, uint8_t *v)
{
	return rd_bytes(r, v, 1);
}

/* A target word of wsize (4 or 8) bytes, zero-extended. */
static inline bool rd_word(struct rd *r, unsigned wsize, uint64_t *v)
{
	uint32_t w;

	if (wsize == 8)
		return rd_u64(r, v);
	if (!rd_u32(r, &w))
		return false;
	*v = w;
	return true;
}

#endif
