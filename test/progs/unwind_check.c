/*
 * Checks preload/unwind*.c and cfi_*.c in every mode from known call chains, the way
 * the hooks use them: fake_malloc() expands UNWIND_START and calls unwind_capture().
 * Built twice (with and without frame pointers); prints ok / not ok lines and a total,
 * exits non-zero on any failure. Linked with -rdynamic so dladdr can name the frames.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "../../preload/unwind.h"
#include "../../preload/cfi_parse.h"
#include "../../preload/unwind_cfi.h"
#include "../../preload/unwind_int.h"
#include "../../preload/util.h"
#include "tap.h"

#define NOIPA __attribute__((noipa))
/* like the real hooks, which the preload builds with frame pointers */
#define HOOK NOIPA __attribute__((optimize("no-omit-frame-pointer")))

struct req;
struct hostile;

/* Not static: -rdynamic puts them in .dynsym, where dladdr finds them by name. */
unsigned fake_malloc(uintptr_t *pcs, unsigned max);
unsigned fake_malloc_hostile(uintptr_t *pcs, unsigned max, const struct hostile *h);
unsigned coro_leaf(unsigned depth);
void coro_entry(void);
unsigned chain_a(struct req *r);
unsigned chain_b(struct req *r);
unsigned chain_c(struct req *r);
unsigned chain_d(struct req *r);
unsigned run_chain(struct req *r);
unsigned capture_chain(uintptr_t *pcs, unsigned max);
unsigned rec(struct req *r, unsigned depth);
unsigned run_rec(struct req *r, unsigned depth);
void check_chain(int m);
void check_rec(int m);
void check_mode(int m);
void check_libc_paths(int m);
unsigned leaf_cap(uintptr_t *pcs, unsigned max);
unsigned via_x(uintptr_t *pcs, unsigned max, size_t pad);
unsigned via_y(uintptr_t *pcs, unsigned max);
unsigned outer_y(uintptr_t *pcs, unsigned max);
void check_replay(int m);
void *thread_main(void *p);
int sort_cmp(const void *a, const void *b);
void on_signal(int sig);

static unsigned n_warn;
/* unwind.c's replay of unchanged walks: on as in the preload, off with UNWIND_REPLAY=0 */
static bool replay = true;
static volatile unsigned sink;	/* keeps results alive; wraps freely */

/* util.c's hp_warn, reduced to what the test needs: count and show */
void hp_warn(const char *a, const char *b, const char *c)
{
	n_warn++;
	fprintf(stderr, "# heapprof: %s%s%s\n", a ? a : "", b ? b : "", c ? c : "");
}

/* util.c's hp_map: the unwinder's own memory, with no map table to name it in */
void *hp_map(size_t len, unsigned own, int extra)
{
	(void)own;
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);
}

/* ---- the call chains ---- */

struct req {
	uintptr_t *pcs;
	unsigned max, n, vla;
};

struct hostile {
	bool set_pc, set_sp, set_fp;
	uintptr_t pc, sp, fp;
};

static struct unwind_start last_st;	/* fake_malloc's last start */

HOOK unsigned fake_malloc(uintptr_t *pcs, unsigned max)
{
	struct unwind_start st;

	UNWIND_START(st);
	last_st = st;
	return unwind_capture(pcs, max, &st);
}

HOOK unsigned fake_malloc_hostile(uintptr_t *pcs, unsigned max, const struct hostile *h)
{
	struct unwind_start st;

	UNWIND_START(st);
	if (h->set_pc)
		st.pc = h->pc;
	if (h->set_sp)
		st.sp = h->sp;
	if (h->set_fp)
		st.fp = h->fp;
	return unwind_capture(pcs, max, &st);
}

NOIPA unsigned chain_d(struct req *r)
{
	unsigned n = fake_malloc(r->pcs, r->max);

	sink += n;
	return n;
}

/* over-aligned local and a VLA: gcc realigns through DRAP, so CFA = [rbp - 8] */
NOIPA unsigned chain_c(struct req *r)
{
	char buf[64] __attribute__((aligned(64)));
	char vla[r->vla];
	unsigned n;

	__asm__ volatile("" : : "r"(buf), "r"(vla) : "memory");
	n = chain_d(r);
	sink += buf[n & 63] + vla[n % r->vla];
	return n;
}

/* variable-length array: rbp-based CFA even without -fno-omit-frame-pointer */
NOIPA unsigned chain_b(struct req *r)
{
	char vla[r->vla];
	unsigned n;

	__asm__ volatile("" : : "r"(vla) : "memory");
	n = chain_c(r);
	sink += vla[n % r->vla];
	return n;
}

NOIPA unsigned chain_a(struct req *r)
{
	unsigned n = chain_b(r);

	sink += n;
	return n;
}

NOIPA unsigned run_chain(struct req *r)
{
	unsigned n = chain_a(r);

	sink += n;
	r->n = n;
	return n;
}

NOIPA unsigned rec(struct req *r, unsigned depth)
{
	unsigned n = depth ? rec(r, depth - 1) : fake_malloc(r->pcs, r->max);

	sink += n;
	return n;
}

NOIPA unsigned run_rec(struct req *r, unsigned depth)
{
	unsigned n = rec(r, depth);

	sink += n;
	r->n = n;
	return n;
}

NOIPA unsigned capture_chain(uintptr_t *pcs, unsigned max)
{
	struct req r = { pcs, max, 0, 32 };

	return run_chain(&r);
}

/* ---- naming frames ---- */

/* Function holding return address pc, or NULL if pc - 1 is in no sized symbol. */
static const char *fn_of(uintptr_t pc, const char **file)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	*file = "";
	if (pc < 2 || !dladdr1((void *)(pc - 1), &info, (void **)&sym, RTLD_DL_SYMENT))
		return NULL;
	*file = info.dli_fname ? info.dli_fname : "";
	if (!info.dli_sname || !sym || pc - 1 >= (uintptr_t)info.dli_saddr + sym->st_size)
		return NULL;
	return info.dli_sname;
}

static void dump(const char *what, const uintptr_t *pcs, unsigned n)
{
	fprintf(stderr, "# %s: %u frames\n", what, n);
	for (unsigned i = 0; i < n; i++) {
		const char *file, *fn = fn_of(pcs[i], &file);

		fprintf(stderr, "#   %2u %#lx %s (%s)\n", i, (unsigned long)pcs[i], fn ? fn : "?",
			strrchr(file, '/') ? strrchr(file, '/') + 1 : file);
	}
}

/* pcs[0..k) lie in the named functions, in order (fewer if n < k and short_ok). */
static bool names_are(const uintptr_t *pcs, unsigned n, const char *const *names, unsigned k)
{
	const char *file;

	if (n < k)
		return false;
	for (unsigned i = 0; i < k; i++) {
		const char *fn = fn_of(pcs[i], &file);

		if (!fn || strcmp(fn, names[i]) != 0)
			return false;
	}
	return true;
}

/*
 * Frames after main (or a thread's function) are glibc's start code, the last may be
 * `last` (_start). Cross targets: libc may lack unwind info there and _start a size, so
 * only "no frame outside libc and the program" is required.
 */
static bool tail_is_libc(const uintptr_t *pcs, unsigned from, unsigned n, const char *last)
{
	const char *file, *fn, *self = NULL;
	Dl_info me;

	if (dladdr((void *)tail_is_libc, &me))
		self = me.dli_fname;
	for (unsigned i = from; i < n; i++) {
		fn = fn_of(pcs[i], &file);
		if (strstr(file, "libc.so"))
			continue;
		if (i != n - 1 || !last || (HP_UNWIND_X86_64 ? !fn || strcmp(fn, last) != 0
							     : !self || strcmp(file, self) != 0))
			return false;
	}
	if (!HP_UNWIND_X86_64)
		return true;
	fn = fn_of(pcs[n - 1], &file);
	return n > from && (last == NULL || (fn && strcmp(fn, last) == 0));
}

/* a is b with frames left out, in order, starting with the same pc */
static bool subsequence(const uintptr_t *a, unsigned na, const uintptr_t *b, unsigned nb)
{
	unsigned j = 0;

	if (na == 0 || nb == 0 || a[0] != b[0])
		return false;
	for (unsigned i = 0; i < na; i++) {
		while (j < nb && b[j] != a[i])
			j++;
		if (j++ == nb)
			return false;
	}
	return true;
}

/*
 * The same stack, frame by frame, except that a frame in main may differ (each mode's
 * check runs from its own call site when gcc unrolls main's loop).
 */
static bool same_stack(const uintptr_t *a, unsigned na, const uintptr_t *b, unsigned nb,
		       unsigned upto)
{
	const char *file, *fa, *fb;

	if (na < upto || nb < upto || (upto == 0 && na != nb))
		return false;
	for (unsigned i = 0; i < (upto ? upto : na); i++) {
		if (a[i] == b[i])
			continue;
		fa = fn_of(a[i], &file);
		fb = fn_of(b[i], &file);
		if (!fa || !fb || strcmp(fa, "main") != 0 || strcmp(fb, "main") != 0)
			return false;
	}
	return true;
}

/* The same length, and each frame in the same function (or the same pc where no
 * symbol names it: glibc's local functions, the signal trampoline). */
static bool same_names(const uintptr_t *a, unsigned na, const uintptr_t *b, unsigned nb)
{
	const char *file, *fa, *fb;

	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++) {
		fa = fn_of(a[i], &file);
		fb = fn_of(b[i], &file);
		if (fa && fb ? strcmp(fa, fb) != 0 : a[i] != b[i])
			return false;
	}
	return true;
}

/* pcs with every address in main replaced by one marker */
static uintptr_t *no_main(uintptr_t *dst, const uintptr_t *pcs, unsigned n)
{
	const char *file, *fn;

	for (unsigned i = 0; i < n; i++) {
		fn = fn_of(pcs[i], &file);
		dst[i] = fn && strcmp(fn, "main") == 0 ? 1 : pcs[i];
	}
	return dst;
}

static const char *const chain_names[] = {
	"chain_d", "chain_c", "chain_b", "chain_a", "run_chain", "capture_chain", "check_chain",
	"check_mode", "main",
};
#define CHAIN_MAIN 9
#define CHAIN_SHARED 6	/* frames every caller of capture_chain() has in common */

/* ---- per mode ---- */

static const char *const modes[] = { "cfi", "fp", "libgcc" };
#define N_MODES 3

static bool fp_build;	/* the test's own code keeps frame pointers: see built_with_fp() */
static uintptr_t ref_chain[N_MODES][HP_UNWIND_MAX];
static unsigned ref_chain_n[N_MODES];
static uintptr_t ref_rec[N_MODES][HP_UNWIND_MAX];
static unsigned ref_rec_n[N_MODES];

NOIPA void check_chain(int m)
{
	uintptr_t pcs[HP_UNWIND_MAX + 1];
	unsigned n = capture_chain(pcs, HP_UNWIND_MAX);
	bool good;

	memcpy(ref_chain[m], pcs, sizeof(ref_chain[m]));
	ref_chain_n[m] = n;
	if (strcmp(modes[m], "fp") != 0) {
		good = names_are(pcs, n, chain_names, CHAIN_MAIN) &&
		     tail_is_libc(pcs, CHAIN_MAIN, n, "_start") && !unwind_cut;
		ok(good, "%s: chain main..d names every frame, then libc, ending at _start, not cut",
		       modes[m]);
	} else if (fp_build) {
		/* the walk has to reach main; after it, libc has no frame pointers */
		good = names_are(pcs, n, chain_names, CHAIN_MAIN);
		ok(good, "fp: chain main..d names every frame (frame-pointer build)");
	} else {
		good = n >= 1 && names_are(pcs, 1, chain_names, 1);
		ok(good, "fp: chain starts in chain_d (%u frames; no-frame-pointer build)", n);
	}
	if (!good)
		dump(modes[m], pcs, n);
}

static void check_max(int m)
{
	static uintptr_t pcs[HP_UNWIND_MAX + 3], full[HP_UNWIND_MAX + 2];
	static const unsigned maxes[] = { HP_UNWIND_MAX, 1, 2, 3, 5, 8, 16, 65, 1000,
					  HP_UNWIND_MAX + 1, HP_UNWIND_MAX + 2, 100000 };
	unsigned full_n = 0;
	bool good = true;

	/* one call site for all: the first (max HP_UNWIND_MAX) is the reference */
	for (unsigned i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		unsigned max = maxes[i], cap = max > HP_UNWIND_MAX + 1 ? HP_UNWIND_MAX + 1 : max;
		unsigned want = i == 0 || cap < full_n ? cap : full_n, n;

		for (unsigned j = 0; j < HP_UNWIND_MAX + 3; j++)
			pcs[j] = 0x5a5a5a5a;
		n = capture_chain(pcs, max);
		if (i == 0) {
			memcpy(full, pcs, sizeof(full));
			full_n = want = n;
		}
		if (pcs[cap] != 0x5a5a5a5a || n != want || memcmp(pcs, full, n * sizeof(*pcs)) != 0) {
			fprintf(stderr, "# %s: max %u gave %u frames, wanted %u\n", modes[m], max, n, want);
			good = false;
		}
	}
	ok(good, "%s: max is honoured (1, 2, 3, 5, 8, 16, 65, 1000, 1024, 1025; above: 1025)",
	   modes[m]);
	ok(capture_chain(pcs, 0) == 0, "%s: max 0 stores nothing", modes[m]);
}

NOIPA void check_rec(int m)
{
	uintptr_t pcs[HP_UNWIND_MAX];
	static const char *const rec16[16] = {
		"rec", "rec", "rec", "rec", "rec", "rec", "rec", "rec",
		"rec", "rec", "rec", "rec", "rec", "rec", "rec", "rec",
	};
	struct req r = { pcs, 16, 0, 32 };
	unsigned n = run_rec(&r, 40);
	bool good = n == 16 && names_are(pcs, n, rec16, 16);
	bool no_fp = strcmp(modes[m], "fp") == 0 && !fp_build;

	if (no_fp) {
		/* rec keeps no frame pointer: fp can only give pcs[0]; check_agreement judges */
		skip("fp: recursion 40 deep", "no frame pointers to follow");
	} else {
		ok(good, "%s: recursion 40 deep, max 16: 16 frames in rec", modes[m]);
		if (!good)
			dump(modes[m], pcs, n);
	}
	r.max = HP_UNWIND_MAX;
	n = run_rec(&r, 40);
	memcpy(ref_rec[m], pcs, sizeof(ref_rec[m]));
	ref_rec_n[m] = n;
	if (no_fp)
		return;
	good = n > 44;
	for (unsigned i = 0; i < 41 && good; i++)
		good = names_are(pcs + i, n - i, rec16, 1);
	if (good) {
		static const char *const outer[] = { "run_rec", "check_rec", "check_mode", "main" };

		good = names_are(pcs + 41, n - 41, outer, 4);
	}
	ok(good, "%s: recursion 40 deep, max 1024: 41 frames in rec, then run_rec..main", modes[m]);
	if (!good)
		dump(modes[m], pcs, n);
}

/*
 * Whole stacks: 1100 frames of rec give exactly max frames for max 1024 and 1025 (the
 * caller asks for one more than it keeps to see a cut); 1000 give the whole stack.
 */
static void check_deep(int m)
{
	static uintptr_t pcs[HP_UNWIND_MAX + 2];
	struct req r = { pcs, HP_UNWIND_MAX, 0, 32 };
	unsigned n1024, n1025, n_all;
	bool good = true;
	const char *file;

	if (strcmp(modes[m], "fp") == 0 && !fp_build) {
		skip("fp: 1100 frames deep", "no frame pointers to follow");
		return;
	}
	n1024 = run_rec(&r, 1100);
	for (unsigned i = 0; i < n1024 && good; i++)
		good = fn_of(pcs[i], &file) && !strcmp(fn_of(pcs[i], &file), "rec");
	r.max = HP_UNWIND_MAX + 1;
	pcs[HP_UNWIND_MAX + 1] = 0x5a5a5a5a;
	n1025 = run_rec(&r, 1100);
	good = good && n1024 == HP_UNWIND_MAX && n1025 == HP_UNWIND_MAX + 1 &&
	       pcs[HP_UNWIND_MAX + 1] == 0x5a5a5a5a;
	n_all = run_rec(&r, 1000);
	if (strcmp(modes[m], "fp") != 0)
		good = good && n_all > 1001 && n_all < HP_UNWIND_MAX &&
		       tail_is_libc(pcs, n_all - 1, n_all, "_start");
	else
		good = good && n_all > 1001 && n_all < HP_UNWIND_MAX;
	ok(good, "%s: 1100 frames deep: max 1024 gives 1024, max 1025 gives 1025; "
	   "1000 deep: all %u frames", modes[m], n_all);
	if (!good)
		fprintf(stderr, "# %u %u %u\n", n1024, n1025, n_all);
}

/* ---- threads ---- */

#define N_THREADS 4
#define N_ITER 100000

struct thread_arg {
	int mode;
	unsigned bad;
	uintptr_t first[HP_UNWIND_MAX];
	unsigned first_n;
};

void *thread_main(void *p)
{
	struct thread_arg *t = p;
	uintptr_t pcs[HP_UNWIND_MAX];

	/*
	 * Every capture must equal the first, except pcs[6] (the return address into
	 * this function), since gcc may peel the loop and call from two places.
	 */
	t->first_n = capture_chain(t->first, HP_UNWIND_MAX);
	for (unsigned i = 0; i < N_ITER; i++) {
		unsigned n = capture_chain(pcs, HP_UNWIND_MAX);

		if (n != t->first_n || (n > 6 && pcs[6] - t->first[6] + 4096 > 8192))
			t->bad++;
		else if (n > 6)
			pcs[6] = t->first[6];
		if (memcmp(pcs, t->first, n * sizeof(*pcs)) != 0)
			t->bad++;
	}
	return NULL;
}

static void check_threads(int m)
{
	static const char *const names[] = { "chain_d", "chain_c", "chain_b", "chain_a",
					     "run_chain", "capture_chain", "thread_main" };
	struct thread_arg t[N_THREADS];
	pthread_t tid[N_THREADS];
	bool good = true;
	unsigned want = strcmp(modes[m], "fp") == 0 && !fp_build ? 1 : 7;
	const char *file;

	memset(t, 0, sizeof(t));
	for (int i = 0; i < N_THREADS; i++) {
		t[i].mode = m;
		if (pthread_create(&tid[i], NULL, thread_main, &t[i]) != 0)
			good = false;
	}
	for (int i = 0; i < N_THREADS; i++) {
		pthread_join(tid[i], NULL);
		/* after thread_main: start_thread and clone3, both in libc */
		bool tail = want == 1 || !HP_UNWIND_X86_64 ||
			    (t[i].first_n > 7 && tail_is_libc(t[i].first, 7, t[i].first_n, NULL));

		if (t[i].bad || !tail || !names_are(t[i].first, t[i].first_n, names, want)) {
			fprintf(stderr, "# thread %d: %u bad captures\n", i, t[i].bad);
			dump(modes[m], t[i].first, t[i].first_n);
			good = false;
		}
	}
	(void)file;
	ok(good, "%s: %d threads x %d captures agree and name their frames", modes[m],
	       N_THREADS, N_ITER);
}

/* ---- hostile starts ---- */

static const uint64_t bad_values[] = {	/* truncated on 32-bit targets */
	0, 1, 8, 0xdeadbeef, 0x7fffffffffffull, 0x0000800000000000ull, 0xffff800000000000ull,
	0xffffffff81000000ull, 0xffffffffffffffffull, 0xfffffffffffffff8ull,
};
#define N_BAD (sizeof(bad_values) / sizeof(bad_values[0]))

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Every combination of bad sp / fp / pc, and sp/fp near real stack addresses. */
static void check_hostile_values(int m)
{
	uintptr_t pcs[HP_UNWIND_MAX];
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	struct hostile h;
	unsigned bad_sp_frames = 0;

	/* the last i keeps the real sp; the ones before it point into the live stack */
	for (unsigned i = 0; i < N_BAD + 5; i++) {
		for (unsigned j = 0; j < N_BAD + 4; j++) {
			uintptr_t a = i < N_BAD ? (uintptr_t)bad_values[i] : here + (i - N_BAD) * 4093;
			uintptr_t b = j < N_BAD ? (uintptr_t)bad_values[j] : here - 64 + (j - N_BAD) * 8;
			unsigned n;

			memset(&h, 0, sizeof(h));
			h.set_sp = i < N_BAD + 4, h.sp = a;
			h.set_fp = true, h.fp = b;
			n = fake_malloc_hostile(pcs, HP_UNWIND_MAX, &h);
			/* garbage sp outside the stack: only pcs[0] (sp is 0 on other targets) */
			if (HP_UNWIND_X86_64 && i < N_BAD && n != 1)
				bad_sp_frames++;
			h.set_pc = true, h.pc = (uintptr_t)bad_values[(i + j) % N_BAD];
			fake_malloc_hostile(pcs, HP_UNWIND_MAX, &h);
			h.set_sp = true, h.sp = b;
			fake_malloc_hostile(pcs, HP_UNWIND_MAX, &h);
		}
	}
	ok(bad_sp_frames == 0,
	       "%s: NULL, kernel, odd and stray sp/fp/pc never fault; sp off the stack gives 1 frame",
	       modes[m]);
}

/*
 * A frame full of garbage: random words, pointers back into itself, real return
 * addresses and addresses in code, walked from random starting points.
 */
NOIPA static void garbage_walks(unsigned rounds)
{
	uintptr_t junk[1024], pcs[HP_UNWIND_MAX];
	uintptr_t text[8] = { (uintptr_t)chain_a, (uintptr_t)chain_b + 17, (uintptr_t)rec + 9,
			      (uintptr_t)memcpy + 33, (uintptr_t)printf + 20, ref_chain[0][1],
			      ref_chain[0][6], ref_rec[0][3] };

	for (unsigned r = 0; r < rounds; r++) {
		struct hostile h = { true, true, true, 0, 0, 0 };

		for (unsigned i = 0; i < 1024; i++) {
			uint64_t x = rnd();

			switch (x & 7) {
			case 0: case 1:
				junk[i] = (uintptr_t)&junk[(x >> 8) % 1024] + (x >> 40 & 7);
				break;
			case 2: case 3:
				junk[i] = text[(x >> 8) & 7] + ((x >> 16) & 3);
				break;
			case 4:
				junk[i] = (uintptr_t)bad_values[(x >> 8) % N_BAD];
				break;
			default:
				junk[i] = x >> (x & 0x38);
			}
		}
		h.pc = rnd() & 1 ? text[rnd() & 7] : junk[rnd() % 1024];
		h.sp = (uintptr_t)&junk[rnd() % 1024] + (rnd() % 4 == 0 ? rnd() & 7 : 0);
		h.fp = rnd() & 1 ? (uintptr_t)&junk[rnd() % 1024] : junk[rnd() % 1024];
		fake_malloc_hostile(pcs, HP_UNWIND_MAX, &h);
	}
	sink += (unsigned)junk[rnd() % 1024];
}

/* ---- through libc (no frame pointers), signal frames, an alternate stack ---- */

static uintptr_t ref_sort[N_MODES][HP_UNWIND_MAX], ref_sig[N_MODES][HP_UNWIND_MAX];
static uintptr_t ref_alt[HP_UNWIND_MAX];
static unsigned ref_sort_n[N_MODES], cur_mode;
static bool sort_done;
/* volatile: glibc declares raise() leaf, so gcc assumes it cannot run our handler */
static volatile unsigned ref_sig_n[N_MODES], alt_n;
static volatile bool on_alt, alt_cut;

/* The first comparison qsort makes captures: libc's merge sort is several frames deep. */
int sort_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!sort_done) {
		sort_done = true;
		ref_sort_n[cur_mode] = fake_malloc(ref_sort[cur_mode], HP_UNWIND_MAX);
	}
	return (x > y) - (x < y);
}

void on_signal(int sig)
{
	(void)sig;
	if (on_alt) {
		alt_n = fake_malloc(ref_alt, HP_UNWIND_MAX);
		alt_cut = unwind_cut;
	} else
		ref_sig_n[cur_mode] = fake_malloc(ref_sig[cur_mode], HP_UNWIND_MAX);
}

NOIPA void check_libc_paths(int m)
{
	static int v[64];
	static char alt[65536] __attribute__((aligned(16)));
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) }, old;
	struct sigaction sa = { .sa_handler = on_signal }, prev;
	bool good;

	cur_mode = (unsigned)m;
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	sort_done = false;
	qsort(v, 64, sizeof(v[0]), sort_cmp);

	sigaction(SIGUSR1, &sa, &prev);
	on_alt = false;
	raise(SIGUSR1);
	/* on a sigaltstack: the same frames, through the signal frame to this function */
	sigaltstack(&ss, &old);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	on_alt = true;
	alt_n = 0;
	raise(SIGUSR1);
	sigaltstack(&old, NULL);
	sigaction(SIGUSR1, &prev, NULL);
	if (!HP_UNWIND_X86_64)
		return;
	if (strcmp(modes[m], "fp") == 0) {	/* a chain that meets a trampoline ends there */
		ok(alt_n >= 1, "fp: handler on a sigaltstack: %u frames, no fault", alt_n);
		return;
	}
	good = same_names(ref_alt, alt_n, ref_sig[m], ref_sig_n[m]) && alt_n > 6 &&
	       !(m == 0 && alt_cut);
	ok(good, "%s: handler on a sigaltstack: the frames of one on the thread's stack "
	   "(%u), through the signal frame%s", modes[m], alt_n, m == 0 ? ", not cut" : "");
	if (!good) {
		dump("sigaltstack", ref_alt, alt_n);
		dump("thread's stack", ref_sig[m], ref_sig_n[m]);
	}
}

/* ---- coroutine stacks (makecontext on the heap and in a guarded mapping) ---- */

#define CORO_STACK (256 * 1024)
#define CORO_DEEP 300	/* frames of 200 bytes and more: a walk of several pages */

static ucontext_t coro_main, coro_ctx;
static uintptr_t coro_pcs[HP_UNWIND_MAX];
static unsigned coro_n, coro_depth;
static bool coro_cut, coro_garbage;

NOIPA unsigned coro_leaf(unsigned depth)
{
	volatile char pad[200];
	unsigned n;

	pad[0] = (char)depth;
	n = depth ? coro_leaf(depth - 1) : fake_malloc(coro_pcs, HP_UNWIND_MAX);
	sink += n + pad[0];
	return n;
}

NOIPA void coro_entry(void)
{
	if (coro_garbage) {
		garbage_walks(2000);
	} else {
		coro_n = coro_leaf(coro_depth);
		coro_cut = unwind_cut;
	}
	swapcontext(&coro_ctx, &coro_main);
}

/* size bytes between two PROT_NONE pages: a read past either end faults */
static char *guarded(size_t size)
{
	char *p = mmap(NULL, size + 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + 4096, size, PROT_READ | PROT_WRITE) != 0)
		abort();
	return p + 4096;
}

static void run_coro(void *stack, unsigned depth, bool garbage)
{
	coro_depth = depth;
	coro_garbage = garbage;
	coro_n = 0;
	getcontext(&coro_ctx);
	coro_ctx.uc_stack.ss_sp = stack;
	coro_ctx.uc_stack.ss_size = CORO_STACK;
	coro_ctx.uc_link = &coro_main;
	makecontext(&coro_ctx, coro_entry, 0);
	swapcontext(&coro_main, &coro_ctx);
}

/* coro_leaf depth + 1 times, then coro_entry, and nothing after it (libgcc: or a
 * last frame in libc, glibc's __start_context) */
static bool coro_names(unsigned depth, bool libgcc)
{
	const char *file, *fn;

	if (coro_n != depth + 2 && !(libgcc && coro_n == depth + 3 &&
				     strstr((fn_of(coro_pcs[depth + 2], &file), file), "libc.so")))
		return false;
	for (unsigned i = 0; i < depth + 2; i++) {
		fn = fn_of(coro_pcs[i], &file);
		if (!fn || strcmp(fn, i <= depth ? "coro_leaf" : "coro_entry") != 0)
			return false;
	}
	return true;
}

/*
 * Captures on a coroutine's stack, off the thread's own: the whole coroutine, ending
 * in its entry function (glibc's __start_context is not a frame), for a shallow and a
 * deep one whose walk has to reach pages above the first.
 */
static void check_coroutines(int m)
{
	char *heap = malloc(CORO_STACK), *mapped = guarded(CORO_STACK);
	bool fp = strcmp(modes[m], "fp") == 0, good = true;

	for (unsigned k = 0; k < 4 && good; k++) {
		unsigned depth = k & 1 ? CORO_DEEP : 1;

		run_coro(k & 2 ? mapped : heap, depth, false);
		/* fp: the chain goes as far as the build keeps frame pointers */
		good = fp ? coro_n >= 1 && (!fp_build || coro_names(depth, false))
			  : coro_names(depth, m == 2) && (m != 0 || !coro_cut);
		if (!good)
			dump(k & 2 ? "mmap'd stack" : "malloc'd stack", coro_pcs, coro_n);
	}
	ok(good, "%s: on a coroutine's stack (malloc'd, mmap'd between guard pages; 3 and %u "
	   "frames): every frame up to its entry function%s", modes[m], CORO_DEEP + 2,
	   m == 0 ? ", not cut" : "");
	run_coro(mapped, 0, true);
	ok(true, "%s: random walks through garbage on a coroutine's stack between guard pages "
	   "never fault", modes[m]);
	free(heap);
	munmap(mapped - 4096, CORO_STACK + 8192);
}

/* ---- code without unwind tables: the caller found by a stack scan ---- */

#if HP_UNWIND_X86_64
unsigned nocfi_call(uintptr_t *pcs, unsigned max);
unsigned nocfi_clobber(uintptr_t *pcs, unsigned max);
unsigned nocfi_big(uintptr_t *pcs, unsigned max);
unsigned nocfi_stale(uintptr_t *pcs, unsigned max);
unsigned via_nocfi_stale(uintptr_t *pcs, unsigned max);
unsigned via_nocfi(uintptr_t *pcs, unsigned max);
unsigned via_nocfi_rbp(uintptr_t *pcs, unsigned max, size_t pad);
unsigned via_nocfi_big(uintptr_t *pcs, unsigned max);

/*
 * Functions without CFI, as musl's libc.a has them, calling fake_malloc: with a frame
 * of five zeroed words; the same after saving rbp and zeroing it (the caller's rbp is
 * then only in the saved slot); with an 8 KiB zeroed frame, larger than a scan; and
 * with a stale return address below the true one that stale_x's rules would confirm
 * (its CFA is the true return address's slot), but whose call went elsewhere.
 */
__asm__(".text\n"
	".globl nocfi_call\n"
	".type nocfi_call, @function\n"
	"nocfi_call:\n"
	"	pushq $0\n	pushq $0\n	pushq $0\n	pushq $0\n	pushq $0\n"
	"	call fake_malloc@PLT\n"
	"	addq $40, %rsp\n"
	"	ret\n"
	".size nocfi_call, .-nocfi_call\n"
	".globl nocfi_clobber\n"
	".type nocfi_clobber, @function\n"
	"nocfi_clobber:\n"
	"	pushq %rbp\n"
	"	xorl %ebp, %ebp\n"
	"	pushq $0\n	pushq $0\n	pushq $0\n	pushq $0\n	pushq $0\n	pushq $0\n"
	"	call fake_malloc@PLT\n"
	"	addq $48, %rsp\n"
	"	popq %rbp\n"
	"	ret\n"
	".size nocfi_clobber, .-nocfi_clobber\n"
	".globl nocfi_big\n"
	".type nocfi_big, @function\n"
	"nocfi_big:\n"
	"	subq $8200, %rsp\n"
	"	movq %rdi, %r8\n"
	"	movq %rsi, %r9\n"
	"	movq %rsp, %rdi\n"
	"	movl $1025, %ecx\n"
	"	xorl %eax, %eax\n"
	"	rep stosq\n"
	"	movq %r8, %rdi\n"
	"	movq %r9, %rsi\n"
	"	call fake_malloc@PLT\n"
	"	addq $8200, %rsp\n"
	"	ret\n"
	".size nocfi_big, .-nocfi_big\n"
	/* stale_x's return address is what a frame of it would have left behind */
	".type stale_x, @function\n"
	"stale_x:\n"
	".cfi_startproc\n"
	"	subq $24, %rsp\n"
	"	.cfi_def_cfa_offset 32\n"
	"	call stale_target\n"
	"stale_x_ret:\n"
	"	addq $24, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size stale_x, .-stale_x\n"
	".type stale_target, @function\n"
	"stale_target:\n"
	".cfi_startproc\n"
	"	ret\n"
	".cfi_endproc\n"
	".size stale_target, .-stale_target\n"
	".globl nocfi_stale\n"
	".type nocfi_stale, @function\n"
	"nocfi_stale:\n"
	"	pushq $0\n	pushq $0\n	pushq $0\n"
	"	leaq stale_x_ret(%rip), %rax\n"
	"	pushq %rax\n"
	"	pushq $0\n"
	"	call fake_malloc@PLT\n"
	"	addq $40, %rsp\n"
	"	ret\n"
	".size nocfi_stale, .-nocfi_stale\n");

NOIPA unsigned via_nocfi(uintptr_t *pcs, unsigned max)
{
	unsigned n = nocfi_call(pcs, max);

	sink += n;
	return n;
}

/* alloca: an rbp-based CFA, which the scan must confirm with the saved rbp */
NOIPA unsigned via_nocfi_rbp(uintptr_t *pcs, unsigned max, size_t pad)
{
	volatile char *p = __builtin_alloca(pad + 1);
	unsigned n;

	p[0] = 0;
	n = nocfi_clobber(pcs, max);
	sink += n + p[0];
	return n;
}

NOIPA unsigned via_nocfi_stale(uintptr_t *pcs, unsigned max)
{
	unsigned n = nocfi_stale(pcs, max);

	sink += n;
	return n;
}

NOIPA unsigned via_nocfi_big(uintptr_t *pcs, unsigned max)
{
	unsigned n = nocfi_big(pcs, max);

	sink += n;
	return n;
}

/* Each twice: the second may be a replay, which must say the same, cut or not. */
NOIPA void check_no_tables(void)
{
	static const char *const names[3][3] = { { "nocfi_call", "via_nocfi", "check_no_tables" },
						 { "nocfi_clobber", "via_nocfi_rbp",
						   "check_no_tables" },
						 { "nocfi_stale", "via_nocfi_stale",
						   "check_no_tables" } };
	uintptr_t pcs[HP_UNWIND_MAX];
	unsigned n;
	bool good = true, cut;

	unwind_init("cfi", replay);
	for (unsigned k = 0; k < 6 && good; k++) {
		n = k / 2 == 0 ? via_nocfi(pcs, HP_UNWIND_MAX)
		    : k / 2 == 1 ? via_nocfi_rbp(pcs, HP_UNWIND_MAX, 40)
		    : via_nocfi_stale(pcs, HP_UNWIND_MAX);
		good = !unwind_cut && names_are(pcs, n, names[k / 2], 3) &&
		       tail_is_libc(pcs, 4, n, "_start");
		if (!good)
			dump("cfi", pcs, n);
	}
	ok(good, "cfi: callers of code without unwind tables found on the stack, with rbp kept "
	   "or only saved, past a stale return address; on to _start, not cut");
	good = true;
	for (unsigned k = 0; k < 2; k++) {
		n = via_nocfi_big(pcs, HP_UNWIND_MAX);
		cut = unwind_cut;
		good = good && n == 1 && cut;
	}
	if (!good) dump("big", pcs, n);
	ok(good, "cfi: code without tables whose frame is larger than a scan: pcs[0], cut (%u)",
	   n);
}
#endif

/* ---- replay (unwind.c): the same start under other callers ---- */

NOIPA unsigned leaf_cap(uintptr_t *pcs, unsigned max)
{
	unsigned n = fake_malloc(pcs, max);

	sink += n;
	return n;
}

/* x: one frame padded with alloca (an rbp-based CFA) so that leaf_cap starts where y's does */
NOIPA unsigned via_x(uintptr_t *pcs, unsigned max, size_t pad)
{
	volatile char *p = __builtin_alloca(pad + 1);
	unsigned n;

	p[0] = 0;
	n = leaf_cap(pcs, max);
	sink += n + p[0];
	return n;
}

/* y: two ordinary frames */
NOIPA unsigned via_y(uintptr_t *pcs, unsigned max)
{
	unsigned n = leaf_cap(pcs, max);

	sink += n + 1;
	return n;
}

NOIPA unsigned outer_y(uintptr_t *pcs, unsigned max)
{
	volatile char buf[512];
	unsigned n;

	buf[0] = 1;
	n = via_y(pcs, max);
	sink += n + buf[0];
	return n;
}

/*
 * A replayed walk must notice a changed word and walk again: the return address in
 * leaf_cap's frame leads to frames of other shapes under x and y, so a replay of the
 * other's walk would read the wrong words. References come from walks without replay.
 */
NOIPA void check_replay(int m)
{
	static uintptr_t pcs[64], ref[2][64];
	unsigned nref[2] = { 0, 0 }, n;
	struct unwind_start sx, sy;
	size_t pad = 0;
	bool good = true;

	unwind_init(modes[m], false);
	outer_y(pcs, 64);
	sy = last_st;
	/* pad x until leaf_cap starts at y's sp (alloca may round) */
	for (unsigned try = 0; try < 4; try++) {
		via_x(pcs, 64, pad);
		sx = last_st;
		if (sx.sp <= sy.sp || sx.sp - sy.sp > 4096)
			break;
		pad += sx.sp - sy.sp;
	}
	if (sx.pc != sy.pc || sx.sp != sy.sp) {
		skip("replay under two callers", "the compiler gave the frames other sizes");
		unwind_init(modes[m], replay);
		return;
	}
	/* the first six without replay give the references, from the same call sites */
	for (unsigned i = 0; i < 206 && good; i++) {
		bool y = (i / 3) & 1;	/* runs of three: replays, and a changed word at each switch */

		if (i == 6)
			unwind_init(modes[m], replay);
		memset(pcs, 0, sizeof(pcs));
		n = y ? outer_y(pcs, 64) : via_x(pcs, 64, pad);
		if (i < 6) {
			memcpy(ref[y], pcs, sizeof(pcs));
			nref[y] = n;
			continue;
		}
		good = n == nref[y] && memcmp(pcs, ref[y], n * sizeof(*pcs)) == 0;
		if (!good) {
			dump(y ? "y" : "x", pcs, n);
			dump("without replay", ref[y], nref[y]);
		}
	}
	if (nref[0] < 4 || nref[1] < 4)
		skip("replay under two callers", "too few frames to tell (fp without frame pointers)");
	else
		ok(good, "%s: 200 captures from one pc and sp under callers of other shapes in "
		   "turn: each stack as without replay (%u and %u frames)", modes[m], nref[0],
		   nref[1]);
}

/* ---- per mode driver ---- */

NOIPA void check_mode(int m)
{
	unsigned w = n_warn;

	unwind_init(modes[m], replay);
	if (strcmp(unwind_name(), modes[m]) != 0 || n_warn != w) {
		ok(false, "%s: mode selected (got %s)", modes[m], unwind_name());
		return;
	}
	ok(true, "%s: mode selected without warnings", modes[m]);
	check_chain(m);
	check_max(m);
	check_rec(m);
	check_replay(m);
	check_deep(m);
	check_threads(m);
	check_libc_paths(m);
	check_coroutines(m);
	check_hostile_values(m);
	garbage_walks(strcmp(modes[m], "cfi") == 0 || strcmp(modes[m], "fp") == 0 ? 20000 : 2000);
	ok(true, "%s: random walks through a frame of garbage never fault", modes[m]);
}

static void check_agreement(void)
{
	/* 0 cfi, 1 fp, 2 libgcc */
	bool same = same_stack(ref_chain[0], ref_chain_n[0], ref_chain[2], ref_chain_n[2], 0) &&
		    same_stack(ref_rec[0], ref_rec_n[0], ref_rec[2], ref_rec_n[2], 0);

	ok(same, "cfi and libgcc give identical arrays (chain and recursion, max 1024)");
	same = ref_sort_n[0] > 4 &&
	       same_stack(ref_sort[0], ref_sort_n[0], ref_sort[2], ref_sort_n[2], 0);
	ok(same, "cfi and libgcc give identical arrays from inside qsort (%u frames)",
	       ref_sort_n[0]);
	if (!same) {
		dump("cfi", ref_sort[0], ref_sort_n[0]);
		dump("libgcc", ref_sort[2], ref_sort_n[2]);
	}
	/*
	 * Both go through the signal trampoline; cfi stores it and the interrupted pc,
	 * neither a return address, one byte on (unwind_cfi.c), libgcc as they are.
	 */
	uintptr_t moved[HP_UNWIND_MAX];
	unsigned tramp = 0;

	for (unsigned i = 0; i < ref_sig_n[2]; i++) {
		if (!tramp && CFI_RULE_KIND(cfi_rule_of(ref_sig[2][i])) == CFI_SIGNAL)
			tramp = i;
		moved[i] = ref_sig[2][i] + (tramp && i - tramp <= 1);
	}
	same = ref_sig_n[0] > 4 && same_stack(ref_sig[0], ref_sig_n[0], moved, ref_sig_n[2], 0);
	ok(same && tramp, "cfi in a signal handler: libgcc's stack, through the signal frame "
	   "(%u frames, the trampoline at %u)", ref_sig_n[0], tramp);
	if (!same) {
		dump("cfi", ref_sig[0], ref_sig_n[0]);
		dump("libgcc", ref_sig[2], ref_sig_n[2]);
	}
	/* and cfi got there by itself: every frame has a rule, no fallback to libgcc */
	unwind_init("cfi", replay);
	for (unsigned i = 0; i + 1 < ref_chain_n[0] && same; i++)
		same = CFI_RULE_KIND(cfi_rule_of(ref_chain[0][i])) == CFI_FRAME;
	ok(same && CFI_RULE_KIND(cfi_rule_of(ref_chain[0][ref_chain_n[0] - 1])) == CFI_END,
	       "cfi: each frame of the chain has a cacheable rule, _start ends the stack");
	if (!same) {
		dump("cfi", ref_chain[0], ref_chain_n[0]);
		dump("libgcc", ref_chain[2], ref_chain_n[2]);
	}
	uintptr_t fp[HP_UNWIND_MAX], gcc[HP_UNWIND_MAX];

	/* no garbage: each fp frame is one libgcc found, in order, frames left out at most */
	same = subsequence(no_main(fp, ref_chain[1], ref_chain_n[1]), ref_chain_n[1],
			   no_main(gcc, ref_chain[2], ref_chain_n[2]), ref_chain_n[2]);
	if (fp_build)
		same = same_stack(ref_chain[1], ref_chain_n[1], ref_chain[2], ref_chain_n[2],
				  CHAIN_MAIN);
	ok(same, "fp records only real frames, in order (%u of %u)", ref_chain_n[1],
	       ref_chain_n[2]);
	if (!same)
		dump("fp", ref_chain[1], ref_chain_n[1]);
}

#if HP_UNWIND_X86_64
unsigned asm_expr_caller(uintptr_t *pcs, unsigned max);
void check_fallback(void);

/*
 * A caller whose CFA is a DWARF expression (rsp + 16, written the hard way): the rule
 * cache cannot hold it, so cfi must hand the whole stack to libgcc, which can.
 */
__asm__(".text\n"
	".globl asm_expr_caller\n"
	".type asm_expr_caller, @function\n"
	"asm_expr_caller:\n"
	".cfi_startproc\n"
	"	subq $8, %rsp\n"
	"	.cfi_escape 0x0f, 0x02, 0x77, 0x10\n"	/* def_cfa_expression: breg7 +16 */
	"	call fake_malloc@PLT\n"
	"	addq $8, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size asm_expr_caller, .-asm_expr_caller\n");

NOIPA void check_fallback(void)
{
	uintptr_t pcs[2][HP_UNWIND_MAX], *a = pcs[0], *b = pcs[1];
	unsigned n[2], na, nb;
	bool good;

	/* one call site for both (a volatile count keeps gcc from unrolling) */
	for (volatile int i = 0; i < 2; i++) {
		unwind_init(i ? "libgcc" : "cfi", replay);
		n[i] = asm_expr_caller(pcs[i], HP_UNWIND_MAX);
	}
	na = n[0], nb = n[1];
	unwind_init("cfi", replay);
	good = CFI_RULE_KIND(cfi_rule_of(a[0])) == CFI_STOP && na > 3 && na == nb &&
	     !memcmp(a, b, na * sizeof(a[0]));
	ok(good, "cfi: a caller with a CFA expression falls back to libgcc (%u frames)", na);
	if (!good) {
		dump("cfi", a, na);
		dump("libgcc", b, nb);
	}
}
#endif

/* ---- a library unloaded, another loaded at the same address (decoy.S) ---- */

typedef unsigned (*decoy_fn)(uintptr_t *pcs, unsigned max);
unsigned run_decoy(decoy_fn f, uintptr_t *pcs);
void check_dlclose(int m);

NOIPA unsigned run_decoy(decoy_fn f, uintptr_t *pcs)
{
	unsigned n = f(pcs, HP_UNWIND_MAX);

	sink += n;
	return n;
}

/* The library beside this program: build/progs/libdecoyN.so. */
static void *decoy_open(unsigned which, decoy_fn *f)
{
	char path[4096];
	ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 32);
	void *h;

	if (len <= 0)
		return NULL;
	path[len] = 0;
	snprintf(strrchr(path, '/'), 32, "/libdecoy%u.so", which);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fprintf(stderr, "# %s\n", dlerror());
	*f = h ? (decoy_fn)dlsym(h, "f") : NULL;
	return h;
}

/* pcs[0] in f, no frame in decoy, and main among the frames */
static bool decoy_stack_ok(const uintptr_t *pcs, unsigned n)
{
	const char *file, *fn;
	bool in_main = false;

	if (n < 2 || !(fn = fn_of(pcs[0], &file)) || strcmp(fn, "f") != 0)
		return false;
	for (unsigned i = 1; i < n; i++) {
		fn = fn_of(pcs[i], &file);
		if (fn && !strcmp(fn, "decoy"))
			return false;
		in_main |= fn && !strcmp(fn, "main");
	}
	return in_main;
}

/* Issue 13: a rule cached for the first library must not walk the second one's code. */
NOIPA void check_dlclose(int m)
{
	static uintptr_t pcs[HP_UNWIND_MAX];
	decoy_fn f1, f2;
	void *h1, *h2;
	unsigned n;
	bool good;

	if (strcmp(modes[m], "fp") == 0 && !fp_build) {
		skip("fp: a library loaded where an unloaded one was", "no frame pointers to follow");
		return;
	}
	unwind_init(modes[m], replay);
	h1 = decoy_open(1, &f1);
	if (!h1 || !f1) {
		ok(false, "%s: libdecoy1.so loads", modes[m]);
		return;
	}
	n = run_decoy(f1, pcs);
	good = decoy_stack_ok(pcs, n);
	if (!good)
		dump(modes[m], pcs, n);
	dlclose(h1);
	h2 = decoy_open(2, &f2);
	if (!h2 || !f2) {
		ok(false, "%s: libdecoy2.so loads", modes[m]);
		return;
	}
	if (f2 != f1) {
		skip("a library loaded where an unloaded one was", "the loader put it elsewhere");
		dlclose(h2);
		return;
	}
	n = run_decoy(f2, pcs);
	if (!decoy_stack_ok(pcs, n)) {
		dump(modes[m], pcs, n);
		good = false;
	}
	dlclose(h2);
	ok(good, "%s: after dlclose, a library at the same address is unwound by its own "
	   "rules, to main (%u frames)", modes[m], n);
}

static void check_bad_names(void)
{
	unsigned w = n_warn;

	unwind_init("frobnicate", replay);
	ok(n_warn == w + 1 && strcmp(unwind_name(), "cfi") == 0,
	       "unknown HEAPPROF_UNWIND: one warning, default cfi (%s)", unwind_name());
	w = n_warn;
	unwind_init("", replay);
	ok(n_warn == w && strcmp(unwind_name(), "cfi") == 0, "empty HEAPPROF_UNWIND: cfi, quietly");
	unwind_init(NULL, replay);
	ok(n_warn == w && strcmp(unwind_name(), "cfi") == 0, "no HEAPPROF_UNWIND: cfi, quietly");
	unwind_init("libunwind", replay);
	ok(n_warn == w + 1 && strcmp(unwind_name(), "cfi") == 0,
	   "HEAPPROF_UNWIND=libunwind (dropped): one warning, default cfi (%s)", unwind_name());
}

/* ---- the parser on a copy of libc's tables, clean and corrupted ---- */

struct eh_region {
	uintptr_t hdr, hdr_end, seg_end, text, text_end;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *p)
{
	struct eh_region *e = p;

	(void)size;
	if (!strstr(info->dlpi_name, "libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME) {
			e->hdr = info->dlpi_addr + ph->p_vaddr;
			e->hdr_end = e->hdr + ph->p_memsz;
		}
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			e->text = info->dlpi_addr + ph->p_vaddr;
			e->text_end = e->text + ph->p_memsz;
		}
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && e->hdr >= s && e->hdr < s + ph->p_memsz)
			e->seg_end = s + ph->p_memsz;
	}
	return 1;
}

struct guarded {
	uint8_t *map, *data;
	size_t map_len;
};

/* The copy ends right at a PROT_NONE page (one guards the start too): reads past fault. */
static bool guarded_copy(const struct eh_region *e, size_t len, struct guarded *g)
{
	size_t pg = 4096, span = (len + pg - 1) / pg * pg;

	g->map_len = span + 2 * pg;
	g->map = mmap(NULL, g->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED || mprotect(g->map + pg, span, PROT_READ | PROT_WRITE) != 0)
		return false;
	g->data = g->map + pg + span - len;
	memcpy(g->data, (const void *)e->hdr, len);
	return true;
}

static void check_parser(void)
{
	struct eh_region e = { 0 };
	size_t len;
	uint8_t *copy;
	struct guarded g;
	Elf64_Phdr ph[2];
	struct cfi_obj o;
	unsigned same = 0, frames = 0, tries = 20000;

	dl_iterate_phdr(find_libc, &e);
	if (!e.hdr || !e.seg_end || !e.text) {
		ok(false, "parser: libc's .eh_frame_hdr found");
		return;
	}
	len = e.seg_end - e.hdr;
	copy = guarded_copy(&e, len, &g) ? g.data : NULL;
	if (!copy) {
		ok(false, "parser: guarded copy of libc's tables");
		return;
	}
	memset(ph, 0, sizeof(ph));
	ph[0].p_type = PT_LOAD, ph[0].p_flags = PF_R;
	ph[0].p_vaddr = (uintptr_t)copy, ph[0].p_memsz = len;
	ph[1].p_type = PT_GNU_EH_FRAME, ph[1].p_flags = PF_R;
	ph[1].p_vaddr = (uintptr_t)copy, ph[1].p_memsz = e.hdr_end - e.hdr;
	o = (struct cfi_obj){ ph, 2, 0, (uintptr_t)copy, (uintptr_t)copy + (e.hdr_end - e.hdr), 0 };

	/* pcrel and datarel fields move with the copy: pc + delta has the same rule */
	for (unsigned i = 0; i < tries; i++) {
		uintptr_t pc = e.text + 1 + rnd() % (e.text_end - e.text - 1);
		uint64_t a = cfi_rule_of(pc), b = cfi_rule_in(&o, pc + ((uintptr_t)copy - e.hdr));

		same += a == b;
		frames += CFI_RULE_KIND(a) == CFI_FRAME;
	}
	ok(same == tries && frames > tries / 2,
	       "parser: a moved copy of libc's tables gives the same rules (%u of %u, %u frames)",
	       same, tries, frames);

	/* corrupt 1..4096 random bytes per round, look up, restore */
	for (unsigned r = 0; r < 3000; r++) {
		unsigned flips = 1u << (r % 13);

		for (unsigned i = 0; i < flips; i++) {
			size_t at = r & 1 ? rnd() % (e.hdr_end - e.hdr) : rnd() % len;

			copy[at] = rnd() & 3 ? (uint8_t)rnd() : (rnd() & 1 ? 0xff : 0);
		}
		for (unsigned i = 0; i < 64; i++) {
			uintptr_t pc = e.text + rnd() % (e.text_end - e.text);

			sink += (unsigned)cfi_rule_in(&o, pc + ((uintptr_t)copy - e.hdr));
		}
		memcpy(copy, (const void *)e.hdr, len);
	}
	ok(true, "parser: 3000 rounds of corrupted tables never read outside them");

	/* truncated tables: the segment ends early, right at the guard page */
	for (unsigned r = 0; r < 2000; r++) {
		size_t cut = 1 + rnd() % len;
		struct guarded gt;
		uint8_t *t = guarded_copy(&e, cut, &gt) ? gt.data : NULL;
		struct cfi_obj ot = o;

		if (!t)
			break;
		ph[0].p_vaddr = (uintptr_t)t, ph[0].p_memsz = cut;
		ph[1].p_vaddr = (uintptr_t)t;
		ph[1].p_memsz = cut < e.hdr_end - e.hdr ? cut : e.hdr_end - e.hdr;
		ot.hdr = (uintptr_t)t, ot.hdr_end = (uintptr_t)t + ph[1].p_memsz;
		for (unsigned i = 0; i < 32; i++) {
			uintptr_t pc = e.text + rnd() % (e.text_end - e.text);

			sink += (unsigned)cfi_rule_in(&ot, pc + ((uintptr_t)t - e.hdr));
		}
		munmap(gt.map, gt.map_len);
	}
	ok(true, "parser: tables cut at 2000 random lengths never read past the cut");
}

/*
 * Built with frame pointers, this function's rbp points at its own frame record. Without,
 * rbp holds whatever main left there, so look only within a few words of our locals.
 */
NOIPA static bool built_with_fp(void)
{
#if HP_UNWIND_X86_64
	volatile uintptr_t local = 0;
	uintptr_t rbp;

	__asm__ volatile("mov %%rbp, %0" : "=r"(rbp));
	return rbp > (uintptr_t)&local && rbp - (uintptr_t)&local < 256 &&
	       ((const uintptr_t *)rbp)[1] == (uintptr_t)__builtin_return_address(0);
#else
	return false;
#endif
}

int main(void)
{
	const char *r = getenv("UNWIND_REPLAY");

	replay = !r || strcmp(r, "0") != 0;
	fp_build = built_with_fp();
	printf("# unwind_check: %s build, replay %s\n", fp_build ? "frame-pointer" : "no-frame-pointer",
	       replay ? "on" : "off");
	if (!HP_UNWIND_X86_64) {
		/* cross builds: libgcc is the only unwinder, the others warn and fall back */
		for (int m = 0; m < N_MODES; m++) {
			unsigned w = n_warn;

			if (m == 2)
				continue;
			unwind_init(modes[m], replay);
			ok(n_warn == w + 1 && strcmp(unwind_name(), "libgcc") == 0,
			       "%s: unavailable here, one warning, libgcc (%s)", modes[m], unwind_name());
		}
		check_mode(2);
		return tap_done();
	}
	for (int m = 0; m < N_MODES; m++)
		check_mode(m);
	check_agreement();
#if HP_UNWIND_X86_64
	check_fallback();
	check_no_tables();
#endif
	for (int m = 0; m < N_MODES; m++)
		check_dlclose(m);
	check_bad_names();
	unwind_init("cfi", replay);
	check_parser();
	return tap_done();
}
