/*
 * --by=type (types.c): the live blocks by the C++ class a vtable pointer at their
 * start names, as a report section.
 */
#ifndef HP_TYPES_H
#define HP_TYPES_H

struct section_ops;
extern const struct section_ops types_section;

#endif
