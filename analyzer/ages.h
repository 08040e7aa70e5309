/*
 * Block ages: --age (live bytes by age) and --older-than (only blocks made more than a
 * duration before the dump). A block's age is measured from when the dump was taken
 * where it says so (a heapprof snapshot's time note, as the join read it); a core from
 * gcore or the kernel does not, and there "now" is the newest live block's allocation
 * time. Format 2 blocks carry their time (1/128 precision); format 1 blocks their
 * birth in ns, always measured from the newest format 1 block.
 */
#ifndef HP_AGES_H
#define HP_AGES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "scan.h"

struct image;

#define AGE_BUCKETS 8

struct age_summary {
	uint64_t bytes[AGE_BUCKETS], blocks[AGE_BUCKETS];	/* as found, not weighted */
	uint64_t untimed_bytes, untimed_blocks;		/* no time recorded */
	uint64_t newest_ms;				/* v2: the newest block's time */
	uint64_t now_ms;				/* v2: ages count from it */
	bool taken;					/* now_ms is the snapshot's time,
							 * else newest_ms */
	int64_t older_than_ms;				/* -1: no filter */
	uint64_t kept_bytes, kept_blocks;		/* what --older-than kept */
};

/*
 * Age every block of scan (made by scan_image_blocks_with) into *sum; with older_than_ms
 * >= 0, replace scan->stacks by the stacks of the blocks at least that old, and mark
 * the others out (scan_block.out). keep_out: the blocks marked out already
 * (--focus=type:) stay out and are not aged; else every block is.
 */
void ages_apply(const struct image *img, struct scan_result *scan, int64_t older_than_ms,
		bool keep_out, struct age_summary *sum);

/* A block's time in ms (v2: since the process start; v1: monotonic), or false (v1 with
 * none recorded). */
struct hp_block;
bool ages_block_ms(const struct hp_block *b, uint64_t *ms);

/* Bucket k's name ("under 1 s", ..., "over 1 day"). */
const char *ages_bucket_name(unsigned k);

/* The report's section: the summary's lines (text), "ages" (JSON, the page). */
struct section_ops;
extern const struct section_ops ages_section;

#endif
