/*
 * Unit test of analyzer/sym_python.c: the --python rule on made-up frames (which native
 * frame each group of Python frames replaces, what is left over, each mode), and
 * sym_stack on stack words, good and bad, with names from a name record in a raw image.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "image.h"
#include "pyrecord.h"
#include "sym.h"
#include "tap.h"

#define EVAL "_PyEval_EvalFrameDefault"

static struct sym_frame fr[32];
static unsigned nfr;

/* A native frame of one function (or with inl, that function inlined into outer). */
static struct sym_pc nat(const char *func, const char *outer)
{
	struct sym_pc p = { .pc = 0x1000 + nfr, .nframes = outer ? 2 : 1, .frames = &fr[nfr] };

	fr[nfr++] = (struct sym_frame){ func, NULL, 0 };
	if (outer)
		fr[nfr++] = (struct sym_frame){ outer, NULL, 0 };
	return p;
}

static struct sym_pc pyf(const char *func)
{
	struct sym_pc p = { .pc = 0x7000 + nfr, .nframes = 1, .frames = &fr[nfr], .python = true,
			    .module = SYM_PYTHON_MODULE };

	fr[nfr++] = (struct sym_frame){ func, "a.py", 1 };
	return p;
}

/* out's functions, innermost first, as "a b c" ('+' after a cut frame) */
static const char *names(const struct sym_pc *v, unsigned n)
{
	static char buf[512];
	size_t k = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < v[i].nframes; j++)
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s%s", k ? " " : "",
					      v[i].frames[j].func ? v[i].frames[j].func : "?",
					      v[i].cut && j + 1 == v[i].nframes ? "+" : "");
	return buf;
}

static void expect(enum sym_python mode, const struct sym_pc *nv, unsigned nn,
		   const struct sym_pc *py, const bool *entry, unsigned np, const char *want,
		   const char *what)
{
	struct sym_pc out[32];
	unsigned n = sym_python_merge(mode, nv, nn, py, entry, np, out);

	ok(n <= nn + np && !strcmp(names(out, n), want), "%s: '%s' (got '%s')", what, want,
	   names(out, n));
}

static void merge_rule(void)
{
	struct sym_pc nv[] = { nat("PyByteArray_Resize", NULL), nat("_PyObject_MakeTpCall", NULL),
			       nat(EVAL, NULL), nat("PyObject_Call", NULL), nat(EVAL, NULL),
			       nat("main", NULL) };
	struct sym_pc py[] = { pyf("Cache.fill"), pyf("run"), pyf("<module>") };
	bool entry[] = { false, true, true };
	bool no_entry[] = { false, false, false };
	struct sym_pc inl[] = { nat("malloc_caller", NULL), nat("_PyObject_Vectorcall", EVAL),
				nat("main", NULL) };
	struct sym_pc cold[] = { nat("f", NULL), nat(EVAL ".cold", NULL), nat(EVAL "X", NULL),
				 nat("_PyEval_EvalFrame", NULL) };

	expect(SYM_PY_MERGED, nv, 6, py, entry, 3,
	       "PyByteArray_Resize _PyObject_MakeTpCall Cache.fill run PyObject_Call <module> main",
	       "merged: the n-th group replaces the n-th loop frame from the innermost");
	expect(SYM_PY_NATIVE, nv, 6, py, entry, 3,
	       "PyByteArray_Resize _PyObject_MakeTpCall " EVAL " PyObject_Call " EVAL " main",
	       "native: the native frames alone");
	expect(SYM_PY_PYTHON, nv, 6, py, entry, 3, "PyByteArray_Resize Cache.fill run <module>",
	       "python: the allocating frame, then the Python frames");
	expect(SYM_PY_PYTHON, nv, 6, py, entry, 0,
	       "PyByteArray_Resize _PyObject_MakeTpCall " EVAL " PyObject_Call " EVAL " main",
	       "python: a stack without Python frames stays whole");
	expect(SYM_PY_MERGED, nv, 6, py, entry, 0,
	       "PyByteArray_Resize _PyObject_MakeTpCall " EVAL " PyObject_Call " EVAL " main",
	       "merged: no Python frames, no change");
	expect(SYM_PY_MERGED, nv, 6, py, entry, 2,
	       "PyByteArray_Resize _PyObject_MakeTpCall Cache.fill run PyObject_Call " EVAL " main",
	       "merged: fewer groups than loop frames leave the outer loops native");
	expect(SYM_PY_MERGED, nv, 3, py, entry, 3,
	       "PyByteArray_Resize _PyObject_MakeTpCall Cache.fill run <module>",
	       "merged: groups beyond the loop frames (a cut stack) go outermost");
	expect(SYM_PY_MERGED, nv, 2, py, entry, 3,
	       "PyByteArray_Resize _PyObject_MakeTpCall Cache.fill run <module>",
	       "merged: no loop frame at all (no symbols): every Python frame outermost");
	expect(SYM_PY_MERGED, nv, 6, py, no_entry, 3,
	       "PyByteArray_Resize _PyObject_MakeTpCall Cache.fill run <module> PyObject_Call "
	       EVAL " main", "merged: a chain with no entry mark is one group");
	expect(SYM_PY_MERGED, inl, 3, py, entry, 3,
	       "malloc_caller _PyObject_Vectorcall+ Cache.fill run main <module>",
	       "merged: what the loop inlined stays, marked cut, before the group");
	expect(SYM_PY_MERGED, cold, 4, py, entry, 3,
	       "f Cache.fill run " EVAL "X _PyEval_EvalFrame <module>",
	       "merged: the loop's .cold part is the loop; look-alike names are not");
	expect(SYM_PY_MERGED, nv, 0, py, entry, 3, "Cache.fill run <module>",
	       "merged: no native frame at all");
	expect(SYM_PY_PYTHON, nv, 0, py, entry, 3, "Cache.fill run <module>",
	       "python: no native frame at all");
	ok(sym_python_is_eval(EVAL) && sym_python_is_eval(EVAL ".cold") &&
		   !sym_python_is_eval(NULL) && !sym_python_is_eval("_PyEval_EvalFrame") &&
		   !sym_python_is_eval(EVAL "Ex"), "the loop's names");
}

/* ---- sym_stack on words ------------------------------------------------------------ */

static const char *stack_names(struct sym *s, const uint64_t *w, unsigned n, unsigned *np)
{
	struct sym_pc *v;
	static char buf[512];

	*np = sym_stack(s, w, n, &v);
	snprintf(buf, sizeof(buf), "%s", names(v, *np));
	for (unsigned i = 0; i < *np; i++)
		if (v[i].python && v[i].frames[0].file)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " @%s:%d",
				 v[i].frames[0].file, v[i].frames[0].line);
	free(v);
	return buf;
}

static void words(void)
{
	uint64_t rec[2][32], e = hp2_pyframe_word(0, HP2_PYFRAME_ENTRY), a = hp2_pyframe_word(0, 0);
	char path[2][64], err[256];
	struct image img;
	struct sym_opts o;
	struct sym *s;
	unsigned n, bad = 0, seed = 7;
	const char *got;

	for (int i = 0; i < 2; i++) {
		FILE *f;
		size_t len = py_make_record(rec[i], 0x7000 + 0x1000 * (uint64_t)i, i ? "g" : "Cache.fill",
					 i ? "b.py" : "a.py");

		if (i)
			rec[i][1] ^= 1;	/* the second record's check is wrong */
		snprintf(path[i], sizeof(path[i]), "/tmp/pystack_test.%d.%d", (int)getpid(), i);
		f = fopen(path[i], "wb");
		fwrite(rec[i], 1, len, f);
		fclose(f);
	}
	memset(&img, 0, sizeof(img));
	image_init_raw(&img, 8, false, 62);
	ok(!image_add_raw(&img, path[0], 0x7000, err, sizeof(err)) &&
		   !image_add_raw(&img, path[1], 0x8000, err, sizeof(err)) &&
		   !image_sort_segs(&img, err, sizeof(err)), "a raw image of two name records");
	memset(&o, 0, sizeof(o));
	o.img = &img;
	o.quiet = true;
	s = sym_open(&o);
	{
		uint64_t w[] = { 0x401000, e, 0x7000, a, 0x8000 };

		got = stack_names(s, w, 5, &n);
		ok(!strcmp(got, "? Cache.fill unknown @a.py:4"),
		   "a pc and two pairs: Cache.fill a.py:4 from its record, unknown from a record "
		   "with a bad check (%s)", got);
	}
	{
		uint64_t w[] = { 0x401000, e, 0x7000 };

		got = stack_names(s, w, 3, &n);
		ok(n == 2 && strstr(got, "Cache.fill") && strstr(got, "@a.py:4"),
		   "merged, no loop frame: the Python frame after the native one (%s)", got);
	}
	{
		uint64_t w[] = { 0x401000, e, 0x7000, e, 0x7008 };

		got = stack_names(s, w, 5, &n);
		ok(n == 3 && strstr(got, "Cache.fill unknown"),
		   "a word B that is no record: unknown (%s)", got);
	}
	{
		uint64_t w[] = { 0x401000, e, 0x7000, e };

		got = stack_names(s, w, 4, &n);
		ok(n == 3 && strstr(got, "Cache.fill unknown"),
		   "an odd count of Python words: the lone word is unknown (%s)", got);
	}
	{
		uint64_t w[] = { 0x401000, e, 0x7000, 0x402000, 0x7000 };

		got = stack_names(s, w, 5, &n);
		ok(n == 3 && strstr(got, "Cache.fill unknown"),
		   "a pc among the pairs: unknown (%s)", got);
	}
	{
		uint64_t w[] = { 0x401000, hp2_pyframe_word(0, HP2_PYFRAME_RAW | HP2_PYFRAME_ENTRY),
				 0x7000 };

		got = stack_names(s, w, 3, &n);
		ok(n == 2 && strstr(got, "unknown"), "a code object that is none: unknown (%s)", got);
	}
	{
		uint64_t w[] = { 0, 0x401000, e, 0x7000 };

		sym_close(s);
		o.python = SYM_PY_NATIVE;
		s = sym_open(&o);
		got = stack_names(s, w, 4, &n);
		ok(n == 1 && !strstr(got, "Cache") && !strstr(got, "f17e"),
		   "native: Python words neither named nor looked up as pcs (%s)", got);
		sym_close(s);
		o.python = SYM_PY_PYTHON;
		s = sym_open(&o);
	}
	/* random words, some tagged, some pointing at the records: counts within bounds */
	for (int round = 0; round < 20000; round++) {
		uint64_t w[40];
		struct sym_pc *v;
		unsigned k = (unsigned)(round % 40);

		for (unsigned i = 0; i < k; i++) {
			seed = seed * 1103515245u + 12345u;
			w[i] = seed >> 16 & 1 ? hp2_pyframe_word(seed >> 4 & 0xFF, seed >> 12 & 3) :
			       seed >> 17 & 1 ? 0x7000 + (seed >> 8 & 0x1FFF) : seed;
		}
		n = sym_stack(s, w, k, &v);
		bad += n > k;
		for (unsigned i = 0; i < n; i++)
			bad += !v[i].nframes || (v[i].python && !v[i].frames[0].func);
		free(v);
		n = sym_stack(NULL, w, k, &v);
		bad += n > k;
		free(v);
	}
	ok(!bad, "20000 stacks of random words: no more frames than words, every Python frame named");
	sym_close(s);
	image_close(&img);
	for (int i = 0; i < 2; i++)
		unlink(path[i]);
}

int main(void)
{
	merge_rule();
	words();
	return tap_done();
}
