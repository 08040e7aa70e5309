/*
 * --why (why.c): the paths of pointers that keep blocks alive, as a report section.
 */
#ifndef HP_WHY_H
#define HP_WHY_H

struct section_ops;
extern const struct section_ops why_section;

#endif
