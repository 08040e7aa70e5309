/*
 * CPython's frames from inside the process, without the Python API: the interpreter's
 * layout chosen once from its version (3.13's from its own _Py_DebugOffsets), then
 * plain loads along tstate -> current frame -> previous. Names of code objects are
 * copied into name records; the stack table and the hooks decide what to keep.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "heapprof_format.h"
#include "interp_python.h"
#include "table.h"
#include "util.h"

#define OWNED_BY_GENERATOR 1
#define OWNED_BY_CSTACK 3		/* 3.12+: the loop's entry (shim) frame */
#define NO_FIELD ((size_t)-1)
#define MAX_WALK 4096			/* frames looked at, shim and unstarted included */

/* Where things are, in bytes from the start of their object. */
struct py_layout {
	uint32_t minor;			/* PY_VERSION_HEX's major and minor (0x030B0000) */
	size_t runtime_size;		/* sizeof(_PyRuntimeState): the symbol's st_size */
	size_t tss_key;			/* _PyRuntime's autoTSSkey (a Py_tss_t) */
	size_t ts_thread_id;		/* PyThreadState.thread_id: pthread_self() */
	size_t ts_cframe;		/* ->cframe (3.11, 3.12), else NO_FIELD */
	size_t cf_frame;		/* _PyCFrame.current_frame */
	size_t ts_frame;		/* ->current_frame (3.13+), else NO_FIELD */
	size_t fr_previous, fr_code, fr_instr, fr_owner;
	size_t fr_is_entry;		/* 3.11's is_entry, else NO_FIELD */
	size_t ob_type;
	size_t co_qualname, co_filename, co_linetable, co_firstlineno, co_code;
	size_t co_firsttraceable;
	size_t str_state, str_length, str_ascii_size, str_compact_size;
	size_t bytes_size, bytes_sval;
};

/*
 * Offsets from each version's internal headers (offsetof under Py_BUILD_CORE; all
 * pointers and ints, so the same on every 64-bit Linux target) and the same for every
 * release of a minor version. The runtime's size, checked against the _PyRuntime
 * symbol, catches a release that moved things after all.
 */
static const struct py_layout layouts[] = {
	{ 0x030B0000, 166688, 592, 152, 56, 8, NO_FIELD, 48, 32, 56, 69, 68, 8,
	  128, 112, 136, 72, 184, 168, 32, 16, 48, 72, 16, 32 },
	{ 0x030C0000, 459944, 1544, 136, 56, 0, NO_FIELD, 8, 0, 56, 70, NO_FIELD, 8,
	  128, 112, 136, 68, 192, 176, 32, 16, 40, 56, 16, 32 },
	/* 3.13: most of this is overwritten from its _Py_DebugOffsets */
	{ 0x030D0000, 283320, 2160, 152, NO_FIELD, 0, 72, 8, 0, 56, 70, NO_FIELD, 8,
	  128, 112, 136, 68, 200, 184, 32, 16, 40, 56, 16, 32 },
};
#define CODE_SIZE_313 208	/* sizeof(PyCodeObject) in 3.13, as its offsets say */

static struct {
	int state;			/* 0 not looked, 1 ready, -1 nothing to do */
	uint32_t version;		/* Py_Version */
	uintptr_t runtime;		/* &_PyRuntime */
	uintptr_t code_type;		/* &PyCode_Type */
	struct py_layout l;
} py;

static inline uintptr_t ld_ptr(uintptr_t base, size_t off)
{
	return *(const uintptr_t *)(base + off);
}

static inline int ld_int(uintptr_t base, size_t off)
{
	return *(const int *)(base + off);
}

static inline uint8_t ld_u8(uintptr_t base, size_t off)
{
	return *(const uint8_t *)(base + off);
}

/* ---- finding the interpreter -------------------------------------------------- */

/* One line on stderr: "python 3.10 in /usr/lib/libpython3.10.so WHY". */
static void say_unknown(const char *why, uint32_t version, const void *sym)
{
	char v[400], *p = v;
	Dl_info info;
	const char *where = "the executable";
	size_t len;

	if (sym && dladdr(sym, &info) && info.dli_fname && info.dli_fname[0])
		where = info.dli_fname;
	if (version) {
		p = hp_utoa(p, version >> 24 & 0xFF);
		*p++ = '.';
		p = hp_utoa(p, version >> 16 & 0xFF);
	} else {
		memcpy(p, "before 3.11", 11);
		p += 11;
	}
	memcpy(p, " in ", 4);
	p += 4;
	len = strlen(where);
	if (len > sizeof(v) - 1 - (size_t)(p - v))
		len = sizeof(v) - 1 - (size_t)(p - v);
	memcpy(p, where, len);
	p[len] = 0;
	hp_warn("python ", v, why);
}

/* 3.13+: the layout the interpreter gives of itself, where it agrees with ours. */
static bool layout_from_debug_offsets(const uint64_t *d)
{
	struct py_layout *l = &py.l;

	/* cookie "xdebugpy", version, free_threaded; then sizes and offsets, a word each */
	if (memcmp(d, "xdebugpy", 8) != 0 || d[1] != py.version || d[2] != 0)
		return false;
	if (d[3] != l->runtime_size || d[34] != CODE_SIZE_313)
		return false;	/* what we take on trust (the key, _co_firsttraceable)
				 * must sit where 3.13.0 put it */
	l->ts_frame = d[23];
	l->ts_thread_id = d[24];
	l->fr_previous = d[29];
	l->fr_code = d[30];
	l->fr_instr = d[31];
	l->fr_owner = d[33];
	l->co_filename = d[35];
	l->co_qualname = d[37];
	l->co_linetable = d[38];
	l->co_firstlineno = d[39];
	l->co_code = d[43];
	l->ob_type = d[45];
	l->bytes_size = d[65];
	l->bytes_sval = d[66];
	l->str_state = d[68];
	l->str_length = d[69];
	l->str_ascii_size = d[70];
	return true;
}

/* The symbol's st_size; 0 where the libc has no dladdr1 (musl; glibc's RTLD_DL_SYMENT
 * is an enum, not a macro): then no layout is trusted, since nothing checks that this
 * build of the version is the one we know. */
static size_t symbol_size(const void *sym)
{
#ifdef __GLIBC__
	Dl_info info;
	const ElfW(Sym) *s = NULL;

	if (dladdr1(sym, &info, (void **)&s, RTLD_DL_SYMENT) && s)
		return s->st_size;
#else
	(void)sym;
#endif
	return 0;
}

static int resolve(void)
{
	const void *rt = dlsym(RTLD_DEFAULT, "_PyRuntime");
	const uint32_t *ver = dlsym(RTLD_DEFAULT, "Py_Version");
	const void *code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	const void *any = dlsym(RTLD_DEFAULT, "Py_Initialize");
	const struct py_layout *l = NULL;

	if (!any)
		return 0;	/* no Python yet: a later call, after a dlopen, looks again */
	if (!rt || !ver || !code_type) {
		say_unknown(" is not supported (heapprof knows 3.11 to 3.13): native stacks only", 0, any);
		return -1;
	}
	py.version = *ver;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if ((py.version & 0xFFFF0000u) == layouts[i].minor)
			l = &layouts[i];
	if (!l || sizeof(void *) != 8) {
		say_unknown(" is not supported (heapprof knows 3.11 to 3.13): native stacks only",
			    py.version, rt);
		return -1;
	}
	py.l = *l;
	if (symbol_size(rt) != l->runtime_size ||
	    (l->minor >= 0x030D0000 && !layout_from_debug_offsets(rt))) {
		say_unknown(" has a layout heapprof does not know (another build?): native stacks only",
			    py.version, rt);
		return -1;
	}
	py.runtime = (uintptr_t)rt;
	py.code_type = (uintptr_t)code_type;
	return 1;
}

uint32_t python_init(void)
{
	int s = __atomic_load_n(&py.state, __ATOMIC_ACQUIRE);

	if (!s) {
		s = resolve();
		__atomic_store_n(&py.state, s, __ATOMIC_RELEASE);
	}
	return s > 0 ? py.version : 0;
}

/* ---- capture ------------------------------------------------------------------- */

/* The calling thread's PyThreadState, 0 if it has none (or Python is not running). */
static uintptr_t current_tstate(void)
{
	uintptr_t key = py.runtime + py.l.tss_key;	/* Py_tss_t { int init; key } */
	uintptr_t ts;

	if (ld_int(key, 0) != 1)
		return 0;
	ts = (uintptr_t)pthread_getspecific(*(const pthread_key_t *)(key + sizeof(int)));
	/* a state of another thread would be a bug of ours or theirs: give nothing */
	if (!ts || ld_ptr(ts, py.l.ts_thread_id) != (uintptr_t)pthread_self())
		return 0;
	return ts;
}

static uintptr_t first_frame(uintptr_t ts)
{
	uintptr_t cf;

	if (py.l.ts_frame != NO_FIELD)
		return ld_ptr(ts, py.l.ts_frame);
	cf = ld_ptr(ts, py.l.ts_cframe);
	return cf ? ld_ptr(cf, py.l.cf_frame) : 0;
}

unsigned python_capture(struct interp_frame *out, unsigned max)
{
	const struct py_layout *l = &py.l;
	uintptr_t ts, f;
	unsigned n = 0, walked = 0;

	if (__atomic_load_n(&py.state, __ATOMIC_ACQUIRE) <= 0 || !max || !(ts = current_tstate()))
		return 0;
	for (f = first_frame(ts); f && n < max && walked++ < MAX_WALK; f = ld_ptr(f, l->fr_previous)) {
		uintptr_t code = ld_ptr(f, l->fr_code);
		uint8_t owner = ld_u8(f, l->fr_owner);
		intptr_t off;

		if (owner == OWNED_BY_CSTACK && l->minor >= 0x030C0000) {
			/* a loop's entry frame: the one inside it began that call */
			if (n)
				out[n - 1].flags |= PYTHON_F_ENTRY;
			continue;
		}
		if (!code || ld_ptr(code, l->ob_type) != py.code_type)
			continue;	/* 3.13's f_executable may be None */
		off = (intptr_t)(ld_ptr(f, l->fr_instr) - (code + l->co_code));
		/* not started yet (CPython's _PyFrame_IsIncomplete): no line to give */
		if (owner != OWNED_BY_GENERATOR && off < 2 * (intptr_t)ld_int(code, l->co_firsttraceable))
			continue;
		if (off < 0 || (uint64_t)off > UINT32_MAX)
			continue;
		out[n].code = code;
		out[n].offset = (uint32_t)off;
		out[n].flags = l->fr_is_entry != NO_FIELD && ld_u8(f, l->fr_is_entry) ? PYTHON_F_ENTRY : 0;
		n++;
	}
	if (n && !f)
		out[n - 1].flags |= PYTHON_F_ENTRY;	/* the outermost began the first call */
	return n;
}

/* ---- names that survive -------------------------------------------------------- */

/*
 * str (a compact PyUnicodeObject) as UTF-8 into dst[0..cap-1], or only measured when
 * dst is NULL; cut at a character. *cut says it did not fit. Interpreter-made names are
 * always compact; anything else gives "".
 */
static size_t str_utf8(uintptr_t str, char *dst, size_t cap, bool *cut)
{
	const struct py_layout *l = &py.l;
	unsigned state, kind;
	intptr_t len;
	uintptr_t data;
	size_t n = 0;

	*cut = false;
	if (!str)
		return 0;
	state = (unsigned)ld_int(str, l->str_state);
	kind = state >> 2 & 7;
	len = (intptr_t)ld_ptr(str, l->str_length);
	if (!(state & 0x20) || len < 0 || (kind != 1 && kind != 2 && kind != 4))
		return 0;
	data = str + (state & 0x40 ? l->str_ascii_size : l->str_compact_size);
	for (intptr_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? ((const uint8_t *)data)[i] :
			     kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
		unsigned w = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

		if (n + w > cap) {
			*cut = true;
			break;
		}
		if (dst) {
			static const uint8_t lead[5] = { 0, 0, 0xC0, 0xE0, 0xF0 };

			if (w == 1) {
				dst[n] = (char)c;
			} else {
				for (unsigned k = w - 1; k > 0; k--, c >>= 6)
					dst[n + k] = (char)(0x80 | (c & 0x3F));
				dst[n] = (char)(lead[w] | c);
			}
		}
		n += w;
	}
	return n;
}

/*
 * Code objects already named: key = identity hash, rec = its record (NULL while being
 * made). Slots are claimed by compare-and-swap. Each key lands on a page at random, so
 * the table is as small as its keys allow: 256 slots (4 KiB) at first, doubled when
 * half full, its named keys moved over and the old pages given back (a Python server
 * names some 900 code objects; a fixed table of 16K slots had all its 256 KiB
 * resident). The table's address and size are one word: a lookup still in an old
 * table finds zeros there, within its bounds, and names its code again, a duplicate
 * record, as when a key's probes find no free slot.
 */
#define SEEN_BITS_FIRST 8
#define SEEN_BITS_MAX 20
#define SEEN_PROBES 64
struct seen_slot {
	uint64_t key;
	const void *rec;
};
static uintptr_t seen;		/* the table (page-aligned) | its bits; 0 before the first */
static unsigned seen_used;	/* keys claimed in it */
static bool seen_growing;

static uintptr_t seen_map(unsigned bits)
{
	void *m = hp_map(sizeof(struct seen_slot) << bits, HP2_OWN_NAMES, 0);

	return m == MAP_FAILED ? 0 : (uintptr_t)m | bits;
}

static inline struct seen_slot *seen_tab(uintptr_t w)
{
	return (struct seen_slot *)(w & ~(uintptr_t)4095);
}

/* The table, the first one mapped if need be; 0 without memory. */
static uintptr_t seen_now(void)
{
	uintptr_t w = __atomic_load_n(&seen, __ATOMIC_ACQUIRE), fresh, none = 0;

	if (w)
		return w;
	if (!(fresh = seen_map(SEEN_BITS_FIRST)))
		return 0;
	if (__atomic_compare_exchange_n(&seen, &none, fresh, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return fresh;
	munmap(seen_tab(fresh), sizeof(struct seen_slot) << SEEN_BITS_FIRST);
	return none;	/* another thread's first table */
}

/* Table w doubled, with the keys whose records are made; one thread grows it. */
static void seen_grow(uintptr_t w)
{
	unsigned bits = w & 63, used = 0;
	struct seen_slot *old = seen_tab(w), *t;
	uintptr_t fresh;

	if (bits >= SEEN_BITS_MAX || __atomic_exchange_n(&seen_growing, true, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_load_n(&seen, __ATOMIC_ACQUIRE) != w || !(fresh = seen_map(bits + 1)))
		goto out;	/* grown already; or no memory: this one fills up */
	t = seen_tab(fresh);
	for (size_t i = 0; i < (size_t)1 << bits; i++) {
		uint64_t key = __atomic_load_n(&old[i].key, __ATOMIC_ACQUIRE);
		const void *rec = __atomic_load_n(&old[i].rec, __ATOMIC_ACQUIRE);

		for (unsigned j = 0; key && rec && j < SEEN_PROBES; j++) {
			struct seen_slot *s = &t[(key + j) & (((size_t)2 << bits) - 1)];

			if (!s->key) {
				s->key = key, s->rec = rec, used++;
				break;
			}
		}
	}
	__atomic_store_n(&seen_used, used, __ATOMIC_RELAXED);
	__atomic_store_n(&seen, fresh, __ATOMIC_RELEASE);
	madvise(old, sizeof(*old) << bits, MADV_DONTNEED);
out:
	__atomic_store_n(&seen_growing, false, __ATOMIC_RELEASE);
}

static uint64_t identity(uintptr_t code, uintptr_t qual, uintptr_t file, uintptr_t lines,
			 int first)
{
	uint64_t h = hp_mix(HP_CHECK_SEED, code);

	h = hp_mix(h, qual);
	h = hp_mix(h, file);
	h = hp_mix(h, lines);
	h = hp_mix(h, (uint64_t)(uint32_t)first);
	return hp_check_final(h) | 1;	/* 0 marks a free slot */
}

static const void *make_record(uintptr_t code, uintptr_t qual, uintptr_t file, uintptr_t lines,
			       int first)
{
	const struct py_layout *l = &py.l;
	bool qcut, fcut, lcut = false;
	size_t nq = str_utf8(qual, NULL, HP2_PYCODE_MAX_NAME, &qcut);
	size_t nf = str_utf8(file, NULL, HP2_PYCODE_MAX_FILE, &fcut);
	intptr_t nl = lines ? (intptr_t)ld_ptr(lines, l->bytes_size) : 0;
	size_t nbytes, nwords;
	uint64_t *w;

	if (nl < 0)
		nl = 0;
	if (nl > HP2_PYCODE_MAX_LINES) {
		nl = HP2_PYCODE_MAX_LINES;
		lcut = true;
	}
	nbytes = nq + nf + (size_t)nl;
	nwords = (nbytes + 7) / 8;
	w = table_alloc_record((HP2_PYCODE_WORDS + nwords) * 8, HP2_OWN_NAMES);
	if (!w)
		return NULL;
	if (nwords)
		w[HP2_PYCODE_WORDS + nwords - 1] = 0;	/* the last word's padding */
	str_utf8(qual, (char *)(w + HP2_PYCODE_WORDS), nq, &qcut);
	str_utf8(file, (char *)(w + HP2_PYCODE_WORDS) + nq, nf, &fcut);
	if (nl)
		memcpy((char *)(w + HP2_PYCODE_WORDS) + nq + nf, (const void *)(lines + l->bytes_sval),
		       (size_t)nl);
	w[2] = code;
	w[3] = (uint64_t)py.version | (uint64_t)(uint32_t)first << 32;
	w[4] = (uint64_t)nq | (uint64_t)nf << 16 | (uint64_t)nl << 32;
	w[5] = (qcut ? HP2_PYCODE_NAME_CUT : 0) | (fcut ? HP2_PYCODE_FILE_CUT : 0) |
	       (lcut ? HP2_PYCODE_LINES_CUT : 0);
	w[1] = table_record_check(w, w + 2, 4 + (unsigned)nwords);
	/* the magic last: a scan that sees it sees a whole record */
	__atomic_store_n(&w[0], HP2_PYCODE_MAGIC, __ATOMIC_RELEASE);
	return w;
}

const void *python_remember(uintptr_t code)
{
	const struct py_layout *l = &py.l;
	uintptr_t qual, file, lines, w;
	struct seen_slot *tab;
	size_t mask;
	int first;
	uint64_t key;
	const void *rec;

	if (__atomic_load_n(&py.state, __ATOMIC_ACQUIRE) <= 0 || !code ||
	    ld_ptr(code, l->ob_type) != py.code_type)
		return NULL;
	qual = ld_ptr(code, l->co_qualname);
	file = ld_ptr(code, l->co_filename);
	lines = ld_ptr(code, l->co_linetable);
	first = ld_int(code, l->co_firstlineno);
	key = identity(code, qual, file, lines, first);
	if (!(w = seen_now()))
		return make_record(code, qual, file, lines, first);
	tab = seen_tab(w);
	mask = ((size_t)1 << (w & 63)) - 1;
	for (unsigned i = 0; i < SEEN_PROBES; i++) {
		struct seen_slot *s = &tab[(key + i) & mask];
		uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);

		if (!k && __atomic_compare_exchange_n(&s->key, &k, key, false, __ATOMIC_ACQ_REL,
						      __ATOMIC_ACQUIRE)) {
			rec = make_record(code, qual, file, lines, first);
			__atomic_store_n(&s->rec, rec, __ATOMIC_RELEASE);
			if (__atomic_add_fetch(&seen_used, 1, __ATOMIC_RELAXED) > (mask + 1) / 2)
				seen_grow(w);
			return rec;
		}
		if (k == key)
			return __atomic_load_n(&s->rec, __ATOMIC_ACQUIRE);
	}
	seen_grow(w);	/* no free slot in reach: a bigger table for the next ones */
	return make_record(code, qual, file, lines, first);	/* a duplicate */
}

const struct interp python_interp = {
	.name = "python",
	.init = python_init,
	.capture = python_capture,
	.remember = python_remember,
};
