/*
 * JSON strings, written one way for every JSON heapprof-analyze prints: the -f json
 * report, --memory's object in it, and the data of the -f html page.
 */
#ifndef HP_JSON_H
#define HP_JSON_H

#include <stdbool.h>
#include <stdio.h>

/*
 * s as a JSON string: '"' and '\\' escaped, \n and \t as such, other control bytes and
 * DEL as \u00XX, other bytes (UTF-8 included) as they are; NULL as null. in_html: '<'
 * as \u003c too, so that no string can end the page's script element.
 */
void json_str(const char *s, bool in_html, FILE *f);

#endif
