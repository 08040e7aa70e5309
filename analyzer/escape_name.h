/*
 * Escaped copies of text from the target (escape.h says how it is escaped).
 */
#ifndef HP_ESCAPE_NAME_H
#define HP_ESCAPE_NAME_H

/* s escaped, in a new string the caller frees (xmalloc: never NULL). */
char *escape_dup(const char *s);

/*
 * A name from the target on its way into a report: NULL when s (or NULL) needs nothing,
 * else escape_dup(s), after saying once per run on stderr (warn()) that names are
 * escaped, with this first one for an example. Thread-safe.
 */
char *escape_name(const char *s);

#endif
