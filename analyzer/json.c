/*
 * JSON strings (json.h): the one escaper of the JSON report, the HTML page's data and
 * --memory's object.
 */
#include "escape.h"
#include "json.h"

void json_str(const char *s, bool in_html, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		fputs("null", f);
		return;
	}
	putc('"', f);
	while (*p) {
		size_t n = escape_char_len((const char *)p);	/* 0: not printable as it is */
		bool c1 = p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;	/* U+0080..U+009F */

		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (in_html && *p == '<')
			fputs("\\u003c", f);
		else if (n)
			fwrite(p, 1, n, f);
		else if (c1)
			fprintf(f, "\\u%04x", p[1]);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fprintf(f, "\\\\x%02x", *p);	/* not UTF-8: JSON has no bytes */
		p += n ? n : c1 ? 2 : 1;
	}
	putc('"', f);
}
