/*
 * --by (by.c): the bottom-up table of a report, as a report section.
 */
#ifndef HP_BY_H
#define HP_BY_H

struct section_ops;
extern const struct section_ops by_section;

#endif
