/*
 * Escaped copies of text from the target (escape_name.h), and the one note per run
 * that names were escaped; the escaping itself is escape.c's.
 */
#include <stdatomic.h>
#include <string.h>

#include "escape.h"
#include "escape_name.h"
#include "util.h"

char *escape_dup(const char *s)
{
	size_t size = 4 * strlen(s) + 1;	/* each byte at most \xNN */
	char *e = xmalloc(size);

	escape_into(e, size, s);
	return e;
}

char *escape_name(const char *s)
{
	static atomic_bool said;
	char *e;

	if (!escape_needed(s))
		return NULL;
	e = escape_dup(s);
	if (!atomic_exchange(&said, true))
		warn("names hold control characters or bytes that are not UTF-8: shown as \\xNN "
		     "(the first: '%s')", e);
	return e;
}
