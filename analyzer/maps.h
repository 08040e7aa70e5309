/*
 * Anonymous mappings by origin, from the dump's map table (include/heapprof_format.h):
 * which of the process's mappings the program made and with what stack, and which are
 * heapprof's own. --memory splits its bytes with it and lists mapped bytes per stack.
 * Reads through the image; writes its own part of the MEMORY section.
 */
#ifndef HP_MAPS_H
#define HP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heapprof_format.h"

struct image;
struct report_frame;
struct scan_result;
struct sym;

struct maps_entry {
	uint64_t start, end;
	uint32_t stack;		/* stack record id, 0: none */
	unsigned origin;	/* HP2_MAP_* */
	unsigned flags;		/* HP2_MAPF_* */
};

struct maps_stack {
	uint64_t bytes;		/* mapped: the entries' lengths */
	uint64_t mappings;	/* entries */
	uint32_t id;		/* stack record id, 0: none */
	bool unknown;		/* the id names no readable stack record */
	bool truncated;		/* HP2_STACK_TRUNCATED */
	struct report_frame *frames; /* innermost first; owned */
	unsigned nframes;
	uint64_t key;		/* report_stack_key() of its pcs */
};

struct maps {
	bool found;		/* a map table was read */
	uint64_t addr;		/* where */
	struct maps_entry *v;	/* valid entries, sorted, not overlapping */
	size_t n;
	uint64_t bad;		/* entries skipped: empty, unaligned, overlapping, cut off */
	uint64_t lost;		/* calls the process could not record (w5) */
	bool changing;		/* a change was under way: one entry may be off */
	unsigned tables;	/* map tables found (1 expected) */
	uint64_t program_bytes, heapprof_bytes;
	uint64_t allocator_bytes;	/* mapped by the allocator behind heapprof itself */
	uint64_t own[HP2_OWN_KINDS];	/* heapprof_bytes by what they hold (HP2_OWN_*;
					 * a kind not known here counts as 0) */
	size_t program_n;	/* entries of the program's */
	struct maps_stack *stacks;	/* shown: bytes descending, then id */
	size_t nstacks, all;	/* shown, distinct */
	uint64_t rest_bytes, rest_mappings;	/* of the stacks not shown */
};

/*
 * Read the dump's map table into *m (zeroed first; none: m->found false), and sum its
 * program entries per stack, the top (0: all) largest symbolized with sym (NULL: not
 * symbolized, no frames). Bad entries
 * are skipped and counted, never trusted: the table's size is bounded by what the dump
 * holds.
 */
void maps_apply(struct maps *m, const struct image *img, const struct scan_result *scan,
		struct sym *sym, size_t top);
void maps_free(struct maps *m);

/* Bytes of [a, b) in entries of origin (HP2_MAP_*); m may be NULL or empty. */
uint64_t maps_bytes_in(const struct maps *m, uint64_t a, uint64_t b, unsigned origin);

/* The MEMORY section's lines on the table, and the JSON members "mapped_bytes" ... and
 * "mapped": [...] (each preceded by ",\n"); frame as memory_write_json's. */
struct report;
void maps_write_text(const struct report *r, const struct maps *m, FILE *f);
void maps_write_json(const struct report *r, const struct maps *m, FILE *f,
		     void (*frame)(const struct report_frame *fr, FILE *f));

#endif
