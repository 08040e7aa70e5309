/*
 * The hot loop: find every heapprof header in an image, validate it, and add the live
 * block to the per-stack totals. Candidates that do not validate are counted by reason.
 */
#ifndef HP_SCAN_H
#define HP_SCAN_H

#include <stdint.h>

#include "stacks.h"

struct image;

enum scan_reject {
	REJ_TRUNCATED,	/* header or pcs not wholly in the image */
	REJ_VERSION,	/* a format version this analyzer does not know */
	REJ_LAYOUT,	/* wsize, nframes or offset impossible */
	REJ_FLAGS,	/* an incompatible flag this analyzer does not know */
	REJ_CHECK,	/* check value wrong: stale, copied or overwritten header */
	REJ_NREASONS
};

struct scan_result {
	struct stacks stacks;
	uint64_t candidates;	/* 8-aligned words equal to the magic */
	uint64_t blocks;	/* valid headers */
	uint64_t bytes;		/* their sizes, saturated at UINT64_MAX */
	uint64_t rejected[REJ_NREASONS];
	unsigned other_version;	/* last unknown version seen, for the message */
};

/* Scan every segment of img with nthreads threads (>= 1) into *out (initialized here). */
void scan_image(const struct image *img, unsigned nthreads, struct scan_result *out);

/* Reason text for a reject counter: "bad check value", ... */
const char *scan_reason(enum scan_reject r);

void scan_result_free(struct scan_result *r);

#endif
