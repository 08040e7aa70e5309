/* Protocol buffers wire format: varints and length-delimited fields into a buffer. */
#include <stdlib.h>
#include <string.h>

#include "pb.h"
#include "util.h"

void pb_raw(struct pb *b, const void *data, size_t len)
{
	if (len > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;

		while (len > cap - b->len)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
}

void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char out[10];
	size_t n = 0;

	do {
		out[n] = v & 0x7f;
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	pb_raw(b, out, n);
}

void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | PB_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | PB_LEN);
	pb_varint(b, len);
	pb_raw(b, data, len);
}

void pb_packed(struct pb *b, unsigned field, const uint64_t *values, size_t n)
{
	struct pb tmp = { 0 };

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		pb_varint(&tmp, values[i]);
	pb_bytes(b, field, tmp.p, tmp.len);
	pb_free(&tmp);
}

void pb_free(struct pb *b)
{
	free(b->p);
	*b = (struct pb){ 0 };
}
