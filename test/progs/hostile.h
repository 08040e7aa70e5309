/*
 * The hostile names of t4011-hostile-names.sh's sites (hostile_sites.c), as symbol
 * names: an escape sequence that would recolour a terminal and ring its bell, Latin-1
 * bytes (not UTF-8), the C1 control CSI written in UTF-8, and names of 2- and 3-byte
 * UTF-8 characters long enough that an SVG label is cut inside them. The assembler
 * takes them quoted.
 */
#include <stddef.h>

#define WIDE "\xc3\xa9\xe2\x82\xac\xe6\xbc\xa2"	/* "é€漢": 2, 3 and 3 bytes */
#define WIDE5 WIDE WIDE WIDE WIDE WIDE

#define SITE_LABELS(X)                                 \
	X(esc_site, "esc_\x1b[31mred\x1b[0m\x07")       \
	X(latin_site, "latin_caf\xe9_\x9b" "2J")        \
	X(c1_site, "c1_\xc2\x9b" "2J")                  \
	X(wide_a, "wide_a_" WIDE5 WIDE5 WIDE5 WIDE5)    \
	X(wide_bb, "wide_bb_" WIDE5 WIDE5 WIDE5 WIDE5)

#define DECLARE_SITE(fn, label) void *fn(size_t n) __asm__("\"" label "\"");
SITE_LABELS(DECLARE_SITE)
