/*
 * --by=type (types.c): the live blocks by what the dump says they are (a C++ class from
 * the vtable pointer a block starts with, a Python object's type), as a report section;
 * each block's type for the other analyses that pick blocks by it (--why=TYPE-REGEX,
 * --focus=type:, types_focus.c); and each type's stacks (types_stacks.c).
 */
#ifndef HP_TYPES_H
#define HP_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

struct pyobj;
struct section_ops;
struct session;
extern const struct section_ops types_section;

/* Each block's type, by its index in the session's block list. */
struct type_names {
	const char **of;		/* NULL: untyped; names live until types_names_free */
	size_t n;
	char **owned;			/* names made here (--short-names') */
	size_t nowned;
	struct pyobj *py;		/* Python's recognizer, whose names some are; NULL:
					 * no Python in the dump */
};

/*
 * Name the blocks of s->scan.list that want asks for (want[i] non-zero; NULL: every
 * block), each by the first of types.c's sources that knows it. Reads the blocks'
 * first words through image_read; a word no source knows leaves the block untyped.
 */
void types_name_blocks(struct session *s, const uint8_t *want, struct type_names *tn);
void types_names_free(struct type_names *tn);

/* --by=type --stacks (types_stacks.c): each row's heaviest stacks */
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
