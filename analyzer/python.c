/*
 * Python frame names from untrusted memory: heapprof's name records (which keep a code
 * object's names and line table past its death) and live code objects of 3.11 to 3.13,
 * and the 3.11+ location table decoded by a linear scan.
 */
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "python.h"

#define MAX_TABLE (1u << 20)	/* a live object's line table read at most this long */

/* What naming reads of a code object and the strings in it, per minor version. */
struct py_code_layout {
	uint32_t minor;
	unsigned co_qualname, co_filename, co_linetable, co_firstlineno;
	unsigned str_state, str_length, str_ascii_size, str_compact_size;
	unsigned bytes_size, bytes_sval;
};

static const struct py_code_layout code_layouts[] = {
	{ 0x030B0000, 128, 112, 136, 72, 32, 16, 48, 72, 16, 32 },
	{ 0x030C0000, 128, 112, 136, 68, 32, 16, 40, 56, 16, 32 },
	{ 0x030D0000, 128, 112, 136, 68, 32, 16, 40, 56, 16, 32 },
};

static void set_unknown(struct py_name *out)
{
	strcpy(out->func, "unknown");
	strcpy(out->file, "unknown");
	out->line = 0;
	out->version = 0;
}

static bool rd(const struct py_mem *m, uint64_t addr, void *buf, size_t len)
{
	uint64_t end;

	if (__builtin_add_overflow(addr, (uint64_t)len, &end))
		return false;
	return m->read(m->ctx, addr, buf, len);
}

static bool rd_u64(const struct py_mem *m, uint64_t addr, uint64_t *v)
{
	return rd(m, addr, v, sizeof(*v));
}

/*
 * len bytes of text into dst (size cap, NUL-terminated), as they are: the symbolizer
 * escapes what is not printable (escape.h), as it does C names. A file name Python
 * could not decode holds its bytes as the lone surrogates U+DC80..U+DCFF
 * (surrogateescape), 3 bytes each here: they are those bytes again. A NUL would end
 * the text: '?'. An empty text is refused: the interpreter names every code object
 * and file.
 */
static bool put_text(char *dst, size_t cap, const unsigned char *src, size_t len)
{
	size_t n = 0;

	if (!len)
		return false;
	for (size_t i = 0; i < len && n < cap - 1; i++) {
		if (src[i] == 0xED && i + 2 < len && (src[i + 1] & 0xFE) == 0xB2 &&
		    (src[i + 2] & 0xC0) == 0x80) {
			dst[n++] = (char)(0x80 | (src[i + 1] & 1) << 6 | (src[i + 2] & 0x3F));
			i += 2;
		} else {
			dst[n++] = src[i] ? (char)src[i] : '?';
		}
	}
	dst[n] = 0;
	return true;
}

/* ---- the location table ---------------------------------------------------------- */

struct lt {
	const uint8_t *p, *end;
};

static bool lt_varint(struct lt *t, uint32_t *v)
{
	unsigned shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (t->p >= t->end || shift > 24)
			return false;
		b = *t->p++;
		*v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return true;
}

static bool lt_svarint(struct lt *t, int64_t *v)
{
	uint32_t u;

	if (!lt_varint(t, &u))
		return false;
	*v = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

int python_line(const uint8_t *table, size_t len, int firstlineno, uint32_t offset)
{
	struct lt t = { table, table + len };
	uint64_t unit = offset / 2, start = 0;
	int64_t line = firstlineno;

	while (t.p < t.end) {
		uint8_t first = *t.p++;
		unsigned code = first >> 3 & 15;
		int64_t delta = 0;

		if (!(first & 0x80))
			return 0;	/* not at an entry: a bad table */
		if (code == 13 || code == 14) {
			if (!lt_svarint(&t, &delta))
				return 0;
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
		}
		line += delta;
		if (line < -(int64_t)INT32_MAX || line > INT32_MAX)
			return 0;
		start += (first & 7) + 1;
		if (unit < start)
			return code == 15 || line <= 0 ? 0 : (int)line;
		while (t.p < t.end && !(*t.p & 0x80))
			t.p++;	/* the entry's column bytes */
	}
	return 0;
}

/* ---- name records ------------------------------------------------------------------ */

bool python_name_record(const struct py_mem *m, uint64_t rec, uint32_t offset,
			struct py_name *out)
{
	uint64_t head[HP2_PYCODE_WORDS], x;
	size_t nq, nf, nl, nwords;
	uint64_t *body = NULL;
	const unsigned char *bytes;
	bool ok = false;

	set_unknown(out);
	if (!rd(m, rec, head, sizeof(head)) || head[0] != HP2_PYCODE_MAGIC)
		return false;
	nq = head[4] & 0xFFFF;
	nf = head[4] >> 16 & 0xFFFF;
	nl = head[4] >> 32;
	if (nq > HP2_PYCODE_MAX_NAME || nf > HP2_PYCODE_MAX_FILE || nl > HP2_PYCODE_MAX_LINES)
		return false;
	nwords = (nq + nf + nl + 7) / 8;
	body = calloc(nwords + 1, 8);
	if (!body || (nwords && !rd(m, rec + sizeof(head), body, nwords * 8)))
		goto out;
	x = hp_mix(HP2_SEED, rec);
	for (unsigned i = 2; i < HP2_PYCODE_WORDS; i++)
		x = hp_mix(x, head[i]);
	for (size_t i = 0; i < nwords; i++)
		x = hp_mix(x, body[i]);	/* the writer's words, in its (our) byte order */
	if (hp_check_final(x) != head[1])
		goto out;
	bytes = (const unsigned char *)body;
	if (!put_text(out->func, sizeof(out->func), bytes, nq) ||
	    !put_text(out->file, sizeof(out->file), bytes + nq, nf)) {
		set_unknown(out);
		goto out;
	}
	out->version = (uint32_t)head[3];
	out->line = python_line(bytes + nq + nf, nl, (int)(uint32_t)(head[3] >> 32), offset);
	ok = true;
out:
	free(body);
	return ok;
}

/* ---- live code objects ----------------------------------------------------------- */

/* A compact str object at addr as UTF-8 into dst (cap bytes with the NUL). */
static bool read_str(const struct py_mem *m, const struct py_code_layout *l, uint64_t addr,
		     char *dst, size_t cap)
{
	uint32_t state, kind;
	uint64_t len, data;
	unsigned char buf[4 * 1024], utf8[1024 * 4];
	size_t n = 0;

	if (!rd(m, addr + l->str_state, &state, sizeof(state)) ||
	    !rd_u64(m, addr + l->str_length, &len))
		return false;
	kind = state >> 2 & 7;
	if (!(state & 0x20) || (kind != 1 && kind != 2 && kind != 4) || len == 0)
		return false;
	if (len > cap - 1)
		len = cap - 1;	/* a longer name is cut (at most cap - 1 characters read) */
	data = addr + (state & 0x40 ? l->str_ascii_size : l->str_compact_size);
	if (len * kind > sizeof(buf) || !rd(m, data, buf, len * kind))
		return false;
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? buf[i] : kind == 2 ? (uint32_t)buf[2 * i] | buf[2 * i + 1] << 8 :
			     (uint32_t)buf[4 * i] | (uint32_t)buf[4 * i + 1] << 8 |
				     (uint32_t)buf[4 * i + 2] << 16 | (uint32_t)buf[4 * i + 3] << 24;
		unsigned w = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

		if (c > 0x10FFFF || n + w > cap - 1)
			break;
		if (w == 1) {
			utf8[n] = (unsigned char)c;
		} else {
			static const uint8_t lead[5] = { 0, 0, 0xC0, 0xE0, 0xF0 };

			for (unsigned k = w - 1; k > 0; k--, c >>= 6)
				utf8[n + k] = (unsigned char)(0x80 | (c & 0x3F));
			utf8[n] = (unsigned char)(lead[w] | c);
		}
		n += w;
	}
	return put_text(dst, cap, utf8, n);
}

bool python_name_code(const struct py_mem *m, uint32_t version, uint64_t code, uint32_t offset,
		      struct py_name *out)
{
	const struct py_code_layout *l = NULL;
	uint64_t qual, file, lines, nl = 0;
	int32_t first;
	uint8_t *table = NULL;

	set_unknown(out);
	for (size_t i = 0; i < sizeof(code_layouts) / sizeof(code_layouts[0]); i++)
		if ((version & 0xFFFF0000u) == code_layouts[i].minor)
			l = &code_layouts[i];
	if (!l || !rd_u64(m, code + l->co_qualname, &qual) ||
	    !rd_u64(m, code + l->co_filename, &file) || !rd_u64(m, code + l->co_linetable, &lines) ||
	    !rd(m, code + l->co_firstlineno, &first, sizeof(first)))
		return false;
	if (!read_str(m, l, qual, out->func, sizeof(out->func)) ||
	    !read_str(m, l, file, out->file, sizeof(out->file))) {
		set_unknown(out);
		return false;
	}
	out->version = version;
	if (lines && rd_u64(m, lines + l->bytes_size, &nl) && nl > 0 && nl <= MAX_TABLE &&
	    (table = malloc(nl)) != NULL && rd(m, lines + l->bytes_sval, table, nl))
		out->line = python_line(table, nl, first, offset);
	free(table);
	return true;
}

bool python_name_frame(const struct py_mem *m, uint32_t version, uint64_t a, uint64_t b,
		       struct py_name *out)
{
	if (!hp2_is_pyframe_word(a)) {
		set_unknown(out);
		return false;
	}
	if (a >> 32 & HP2_PYFRAME_RAW)
		return python_name_code(m, version, b, (uint32_t)a, out);
	return python_name_record(m, b, (uint32_t)a, out);
}
