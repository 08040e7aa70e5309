/*
 * --by=type --stacks (types_stacks.c): each row of the types table's heaviest stacks,
 * the ones that made its blocks, named for the table's writers (types.c).
 */
#ifndef HP_TYPES_STACKS_H
#define HP_TYPES_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

struct session;

struct type_stack {
	uint64_t bytes, blocks;		/* the row's blocks it made (their own bytes) */
	uint64_t key;			/* report_stack_key(): previews find it in the report */
	const struct report_frame *frames;
	unsigned nframes;
};

struct type_stacks {
	struct type_stack *v;		/* row r's: v[start[r]] .. v[start[r + 1] - 1] */
	size_t n;
	size_t *start;			/* nrows + 1 */
	size_t *more;			/* each row's stacks not kept */
	struct report names;		/* owns --short-names' copies */
};

/*
 * The per_row heaviest stacks of each row: row_of[i] is block i's row of nrows (or
 * GRAPH_NONE: not counted). Symbolized with s's symbols and options.
 */
void types_stacks_make(struct session *s, const uint32_t *row_of, size_t nrows, unsigned per_row,
		       struct type_stacks *ts);
void types_stacks_free(struct type_stacks *ts);

#endif
