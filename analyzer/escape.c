/*
 * Text from the target made safe to print (escape.h): one UTF-8 check, byte by byte,
 * that every writer and message shares. Below util.c, whose messages use it: copies
 * and the note that names were escaped are escape_name.c's.
 */
#include <stdint.h>
#include <string.h>

#include "escape.h"

/* The valid second bytes after a lead byte (Unicode's table 3-7: no overlong form, no
 * surrogate, nothing past U+10FFFF); later bytes are 0x80..0xBF. */
static bool second_ok(unsigned char lead, unsigned char b)
{
	switch (lead) {
	case 0xE0: return b >= 0xA0 && b <= 0xBF;
	case 0xED: return b >= 0x80 && b <= 0x9F;
	case 0xF0: return b >= 0x90 && b <= 0xBF;
	case 0xF4: return b >= 0x80 && b <= 0x8F;
	default: return b >= 0x80 && b <= 0xBF;
	}
}

size_t escape_char_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (*p < 0x80)
		return *p >= 0x20 && *p != 0x7F ? 1 : 0;
	if (*p >= 0xC2 && *p <= 0xDF)
		n = 2;
	else if (*p >= 0xE0 && *p <= 0xEF)
		n = 3;
	else if (*p >= 0xF0 && *p <= 0xF4)
		n = 4;
	else
		return 0;	/* a continuation byte alone, C0, C1, F5..FF */
	if (!second_ok(p[0], p[1]))
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	/* U+0080..U+009F: the C1 controls (0x9B is CSI to a terminal) */
	return p[0] == 0xC2 && p[1] <= 0x9F ? 0 : n;
}

bool escape_needed(const char *s)
{
	if (!s)
		return false;
	while (*s) {
		size_t n = escape_char_len(s);

		if (!n)
			return true;
		s += n;
	}
	return false;
}

/* Each piece of s in turn: a run of printable characters, or one byte as \xNN. */
static size_t escape_piece(const char *s, char *out, bool *escaped)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = escape_char_len(s);

	*escaped = !n;
	if (n) {
		memcpy(out, s, n);
		return n;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[(unsigned char)*s >> 4];
	out[3] = hex[(unsigned char)*s & 15];
	return 4;
}

size_t escape_into(char *buf, size_t size, const char *s)
{
	size_t len = 0;

	while (*s) {
		char piece[4];
		bool escaped;
		size_t n = escape_piece(s, piece, &escaped);

		if (len + n + 1 > size)
			break;
		memcpy(buf + len, piece, n);
		len += n;
		s += escaped ? 1 : n;
	}
	buf[len] = 0;
	return len;
}
