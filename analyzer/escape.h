/*
 * Text from the target made safe to print: function names, source files, module paths
 * and the dump's own path may hold any bytes. A control character (C0, DEL, the C1
 * controls U+0080..U+009F) or a byte that is not part of valid UTF-8 is written as the
 * four characters \xNN, one per byte (lowercase hex); everything else, a backslash
 * included, stays as it is. So the result is printable UTF-8, a name that needs nothing
 * comes back byte for byte, and escaping twice changes nothing more. Copies:
 * escape_name.h.
 */
#ifndef HP_ESCAPE_H
#define HP_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The bytes of the character s starts with, when it may be printed as it is: 1 to 4
 * for a valid UTF-8 character that is not a control character; 0 when *s is to be
 * escaped (a control character's first byte, a byte of a bad sequence: an overlong
 * form, a surrogate, past U+10FFFF, cut short) or is the final NUL.
 */
size_t escape_char_len(const char *s);

/* Whether s (NULL: no) holds anything escape_dup() would change. */
bool escape_needed(const char *s);

/* s escaped into buf of size bytes (at least 1), NUL-terminated; a result that does
 * not fit is cut between characters and escapes. Returns the length written. */
size_t escape_into(char *buf, size_t size, const char *s);

#endif
