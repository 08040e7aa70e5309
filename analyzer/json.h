/*
 * JSON strings, written one way for every JSON heapprof-analyze prints: the -f json
 * report, --memory's object in it, and the data of the -f html page.
 */
#ifndef HP_JSON_H
#define HP_JSON_H

#include <stdbool.h>
#include <stdio.h>

/*
 * s as a JSON string, valid UTF-8 whatever its bytes: '"' and '\\' escaped, \n and \t
 * as such, other control characters (C0, DEL, C1) as \u00XX, a byte that is not part of
 * valid UTF-8 as the six characters \\xNN (JSON has no way to carry a byte; names come
 * escaped so already, escape.h), the rest as it is; NULL as null. in_html: '<' as
 * \u003c too, so that no string can end the page's script element.
 */
void json_str(const char *s, bool in_html, FILE *f);

#endif
