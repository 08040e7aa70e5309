/*
 * Python frames in a stack (--python): the word pairs after the native pcs named from
 * heapprof's name records or live code objects (python.c), each pair named once, and
 * put in place of the evaluation loop's native frames by the rule of sym_python_merge().
 */
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "python.h"
#include "sym.h"
#include "sym_dwfl.h"
#include "util.h"

/* One named pair: the cache's entry, its frame what sym_stack hands out. */
struct py_entry {
	uint64_t a, b;
	struct sym_pc res;
	struct sym_frame frame;
};

struct sym_py {
	struct py_entry **v;	/* open addressing, linear probing, at most half full */
	size_t cap, n;
	struct py_entry unknown; /* a pair that is no pair: a pc or a lone word */
	uint32_t version;	/* PY_VERSION_HEX for code objects (HP2_PYFRAME_RAW) */
	bool guessed;		/* version was looked for among the module names */
};

bool sym_python_is_eval(const char *func)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";
	size_t n = sizeof(eval) - 1;

	/* ".cold" and other parts GCC splits off are the same function's code */
	return func && !strncmp(func, eval, n) && (func[n] == 0 || func[n] == '.');
}

unsigned sym_python_merge(enum sym_python mode, const struct sym_pc *native, unsigned nn,
			  const struct sym_pc *py, const bool *entry, unsigned np,
			  struct sym_pc *out)
{
	unsigned k = 0, g = 0;

	if (mode == SYM_PY_NATIVE || !np) {
		memcpy(out, native, nn * sizeof(*out));
		return nn;
	}
	if (mode == SYM_PY_PYTHON) {
		if (nn)
			out[k++] = native[0];	/* the frame that called the allocator */
		memcpy(out + k, py, np * sizeof(*out));
		return k + np;
	}
	for (unsigned i = 0; i < nn; i++) {
		const struct sym_pc *p = &native[i];

		if (g == np || !sym_python_is_eval(p->frames[p->nframes - 1].func)) {
			out[k++] = *p;
			continue;
		}
		if (p->nframes > 1) {	/* what the loop inlined stays, innermost */
			out[k] = *p;
			out[k].nframes--;
			out[k++].cut = true;
		}
		do	/* the next group: up to its frame with HP2_PYFRAME_ENTRY */
			out[k++] = py[g];
		while (!entry[g++] && g < np);
	}
	/*
	 * More groups than evaluation loop frames: the native stack was cut at the frame
	 * limit before the outer loops, or the loop's function has no name (no symbols).
	 * The groups left are outer Python frames: they go outermost, after the native
	 * frames, in their order, rather than be lost. Fewer groups than loops (a chain
	 * the preload cut short) leave the outer loops as the native frames they are.
	 */
	while (g < np)
		out[k++] = py[g++];
	return k;
}

/* ---- naming pairs, once each ------------------------------------------------------ */

static struct sym_py *state(struct sym *s)
{
	if (!s->py) {
		s->py = xcalloc(1, sizeof(*s->py));
		s->py->unknown.frame.func = "unknown";
		s->py->unknown.res = (struct sym_pc){ .module = SYM_PYTHON_MODULE, .nframes = 1,
						      .frames = &s->py->unknown.frame,
						      .python = true };
	}
	return s->py;
}

static uint64_t pair_hash(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ b;

	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

static struct py_entry **slot_of(struct sym_py *t, uint64_t a, uint64_t b)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct py_entry **v = xcalloc(cap, sizeof(*v));

		for (size_t k = 0; k < t->cap; k++) {
			if (!t->v[k])
				continue;
			for (i = pair_hash(t->v[k]->a, t->v[k]->b) & (cap - 1); v[i];
			     i = (i + 1) & (cap - 1))
				;
			v[i] = t->v[k];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	for (i = pair_hash(a, b) & (t->cap - 1); t->v[i] && (t->v[i]->a != a || t->v[i]->b != b);
	     i = (i + 1) & (t->cap - 1))
		;
	return &t->v[i];
}

/* "python3.12", "libpython3.13.so.1.0": the minor version a module's name says, else 0 */
static uint32_t name_version(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned minor = 0;

	base = base ? base + 1 : path;
	if (strncmp(base, "lib", 3) == 0)
		base += 3;
	if (strncmp(base, "python3.", 8))
		return 0;
	for (p = base + 8; *p >= '0' && *p <= '9' && minor < 1000; p++)
		minor = minor * 10 + (unsigned)(*p - '0');
	if (p == base + 8 || (*p && *p != '.' && *p != 'd' && *p != 't'))
		return 0;
	return 0x03000000u | minor << 16;
}

/*
 * The version a code object (HP2_PYFRAME_RAW) is read as: the one the first name record
 * named carried, else the one the interpreter's module name says (python3.N or
 * libpython3.N), else 0 (the frame stays "unknown").
 */
static uint32_t raw_version(struct sym *s)
{
	struct sym_py *t = state(s);
	struct sym_module_info *m;
	size_t n;

	if (t->version || t->guessed)
		return t->version;
	t->guessed = true;
	m = sym_modules(s, &n);
	for (size_t i = 0; i < n && !t->version; i++)
		t->version = name_version(m[i].path);
	free(m);
	return t->version;
}

static const struct sym_pc *name_pair(struct sym *s, uint64_t a, uint64_t b)
{
	struct sym_py *t = state(s);
	struct py_entry **slot = slot_of(t, a, b), *e;
	struct py_name name;
	struct py_mem m;
	bool named = false;

	if (*slot)
		return &(*slot)->res;
	e = xcalloc(1, sizeof(*e));
	e->a = a;
	e->b = b;
	if (s->img) {
		m = python_mem_image(s->img);
		named = python_name_frame(&m, a >> 32 & HP2_PYFRAME_RAW ? raw_version(s) : 0, a, b,
					  &name);
	}
	if (named && !(a >> 32 & HP2_PYFRAME_RAW) && !t->version)
		t->version = name.version;	/* the first name record met */
	e->frame = (struct sym_frame){ named ? sym_intern(s, name.func) : "unknown",
				       named ? sym_intern(s, name.file) : NULL,
				       named ? name.line : 0 };
	e->res = (struct sym_pc){ .pc = b, .module = SYM_PYTHON_MODULE,
				  .module_offset = (uint32_t)a, .nframes = 1,
				  .frames = &e->frame, .python = true };
	*slot = e;
	t->n++;
	return &e->res;
}

void sym_python_free(struct sym *s)
{
	if (!s->py)
		return;
	for (size_t i = 0; i < s->py->cap; i++)
		free(s->py->v[i]);
	free(s->py->v);
	free(s->py);
	s->py = NULL;
}

/* ---- a stack --------------------------------------------------------------------- */

/* Name the pairs from words[first..n): a whole pair has a tagged word A; a pc among the
 * pairs, or a lone last word, is an unknown frame. Records before code objects, so that
 * a stack's own records give the code objects their version. */
static unsigned python_frames(struct sym *s, const uint64_t *w, unsigned first, unsigned n,
			      struct sym_pc *py, bool *entry)
{
	static const struct sym_frame unknown = { "unknown", NULL, 0 };
	static const struct sym_pc no_sym = { .module = SYM_PYTHON_MODULE, .nframes = 1,
					      .frames = &unknown, .python = true };
	unsigned np = 0;

	for (int raw = 0; raw < 2; raw++) {
		np = 0;
		for (unsigned i = first; i < n; i += 2, np++) {
			uint64_t a = w[i];
			bool tagged = hp2_is_pyframe_word(a), whole = tagged && i + 1 < n;

			entry[np] = tagged && (a >> 32 & HP2_PYFRAME_ENTRY);
			if (!s || !whole)
				py[np] = s ? state(s)->unknown.res : no_sym;
			else if (!!(a >> 32 & HP2_PYFRAME_RAW) == raw)
				py[np] = *name_pair(s, a, w[i + 1]);
		}
	}
	return np;
}

unsigned sym_stack(struct sym *s, const uint64_t *w, unsigned n, struct sym_pc **out)
{
	enum sym_python mode = s ? s->python : SYM_PY_MERGED;
	unsigned first = 0, nn = 0, np = 0, k;
	struct sym_pc *native, *py, *res;
	bool *entry;

	while (first < n && !hp2_is_pyframe_word(w[first]))
		first++;
	native = xcalloc(first + 1, sizeof(*native));
	py = xcalloc((n - first) / 2 + 2, sizeof(*py));
	entry = xcalloc((n - first) / 2 + 2, sizeof(*entry));
	for (unsigned i = 0; i < first; i++)
		if (w[i])	/* a null return address ends the stack on some ABIs */
			native[nn++] = *sym_lookup(s, w[i], true);
	if (mode != SYM_PY_NATIVE)
		np = python_frames(s, w, first, n, py, entry);
	res = xcalloc(nn + np + 1, sizeof(*res));
	k = sym_python_merge(mode, native, nn, py, entry, np, res);
	free(native);
	free(py);
	free(entry);
	*out = res;
	return k;
}
