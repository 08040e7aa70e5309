/*
 * --by=type (types.c): the live blocks by what the dump says they are (a C++ class from
 * the vtable pointer a block starts with, a Python object's type), as a report section;
 * each block's type for the other analyses that pick blocks by it (--why=TYPE-REGEX,
 * --focus=type:, types_focus.c).
 */
#ifndef HP_TYPES_H
#define HP_TYPES_H

#include <stddef.h>
#include <stdint.h>

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

#endif
