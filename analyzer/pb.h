/*
 * The few pieces of the protocol buffers wire format that profile.proto needs:
 * varints, keys, length-delimited fields, into a growing buffer. pprof.c says which
 * fields; this file knows nothing of profiles.
 */
#ifndef HP_PB_H
#define HP_PB_H

#include <stddef.h>
#include <stdint.h>

struct pb {
	unsigned char *p;	/* owned; NULL until the first byte */
	size_t len, cap;
};

enum { PB_VARINT = 0, PB_LEN = 2 };

/* Append v as a base-128 varint (1 to 10 bytes, low 7 bits first). */
void pb_varint(struct pb *b, uint64_t v);
/* Append field's key and v as a varint; nothing when v is 0 (proto3's default). */
void pb_uint(struct pb *b, unsigned field, uint64_t v);
/* Append field's key, len and the bytes: strings, bytes and nested messages. */
void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len);
/* Append values as one packed repeated varint field; nothing when n is 0. */
void pb_packed(struct pb *b, unsigned field, const uint64_t *values, size_t n);
/* Append raw bytes. Allocation failure ends the run (xrealloc). */
void pb_raw(struct pb *b, const void *data, size_t len);
void pb_free(struct pb *b);

#endif
