/*
 * JSON strings (json.h): the one escaper of the JSON report, the HTML page's data and
 * --memory's object.
 */
#include "json.h"

void json_str(const char *s, bool in_html, FILE *f)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	putc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f || (in_html && *p == '<'))
			fprintf(f, "\\u%04x", *p);
		else
			putc(*p, f);
	}
	putc('"', f);
}
