/*
 * The cfi unwinder (x86_64): one packed DWARF CFI rule per return address in a
 * lock-free cache, filled lazily from the object's tables (cfi_obj.c finds the object,
 * cfi_parse.c reads the rule), and the walk that follows the rules, on the thread's
 * stack or any other. Signal frames and code without tables are unwind_scan.c's;
 * stacks it cannot start go to the libgcc unwinder whole.
 */
#define _GNU_SOURCE
#include "heapprof_format.h"
#include "util.h"
#include "unwind_cfi.h"

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "cfi_parse.h"
#include "unwind_scan.h"
#include "unwind_int.h"

#if HP_CFI

/*
 * The cache: 64K slots of 16 bytes (1 MiB, touched lazily), in 64-byte buckets of four,
 * or 4K slots (64 KiB) when walks are rare (unwind_rare_walks(): sparse sampling): so few then
 * that a miss costs nothing measurable, while each bucket a walk fills is a page of the
 * process's memory (a Python server touched 588 KiB of the big one),
 * so a probe never leaves one cache line. The bucket comes from the low bits of the
 * return address, as in a set-associative CPU cache: no hash, since the bucket address
 * is on the walk's critical path (load return address, load rule, load the next return
 * address). A writer stores rule and check with two plain stores; check = pc ^
 * seal(rule) ^ gen_key(unwind_gen), so a reader that sees half of a concurrent update
 * finds a mismatch and takes it as a miss instead of using a torn entry, and so does a
 * reader after a dlclose(): a library loaded where the closed one was has other rules
 * at the same addresses. Collisions overwrite.
 */
#define CACHE_BITS 16
#define CACHE_BITS_SPARSE 12
#define BUCKET 4

struct slot {
	uint64_t check, rule;
};

static struct slot *cache;
static unsigned cache_bits = CACHE_BITS;
/* the bucket index's mask, in slots: ((1 << cache_bits) - BUCKET), read once per walk */
static uintptr_t cache_mask = ((uintptr_t)1 << CACHE_BITS) - BUCKET;

static inline uint64_t seal(uint64_t rule)
{
	return rule * 0x9e3779b97f4a7c15ull;
}

/* Odd multiplier: a bijection, so two generations never share a key. */
static inline uint64_t gen_key(unsigned gen)
{
	return (uint64_t)gen * 0xd6e8feb86659fd93ull;
}

static inline struct slot *bucket_of(struct slot *tab, uintptr_t mask, uintptr_t pc)
{
	return &tab[(pc * BUCKET) & mask];
}

static inline uint64_t cache_get(struct slot *tab, uintptr_t mask, uintptr_t pc, uint64_t key)
{
	struct slot *s = bucket_of(tab, mask, pc);

	for (unsigned i = 0; i < BUCKET; i++) {
		uint64_t rule = __atomic_load_n(&s[i].rule, __ATOMIC_RELAXED);
		uint64_t check = __atomic_load_n(&s[i].check, __ATOMIC_RELAXED);

		if (rule && (check ^ seal(rule) ^ key) == pc)
			return rule;
	}
	return 0;
}

static void cache_put(uintptr_t pc, uint64_t key, uint64_t rule)
{
	struct slot *s = bucket_of(cache, cache_mask, pc);
	/* bits above the bucket index pick the victim: spreads a hot bucket's evictions */
	struct slot *victim = &s[(pc >> (cache_bits - 2)) & (BUCKET - 1)];

	for (unsigned i = 0; i < BUCKET; i++) {
		uint64_t r = __atomic_load_n(&s[i].rule, __ATOMIC_RELAXED);

		if (!r || (__atomic_load_n(&s[i].check, __ATOMIC_RELAXED) ^ seal(r) ^ key) == pc) {
			victim = &s[i];
			break;
		}
	}
	__atomic_store_n(&victim->rule, rule, __ATOMIC_RELAXED);
	__atomic_store_n(&victim->check, pc ^ seal(rule) ^ key, __ATOMIC_RELAXED);
}

uint64_t cfi_rule_of(uintptr_t pc)
{
	struct cfi_obj o;
	uint64_t rule;

	if (!cfi_obj_find(pc - 1, &o))
		return CFI_NOINFO;	/* code outside every object (generated at run time) */
	rule = cfi_rule_in(&o, pc);
	/* glibc's trampoline has an 'S' CIE we do not parse, musl's none at all */
	if (CFI_RULE_KIND(rule) != CFI_FRAME && CFI_RULE_KIND(rule) != CFI_END &&
	    cfi_sigreturn_at(&o, pc))
		return CFI_SIGNAL;
	return rule;
}

/* ---- the walk ---- */


/*
 * A frame uses rbp. Most frames only restore it, so the word a saved rbp was read from
 * goes into the log when a frame first uses it: a program that keeps a changing value
 * in rbp (a loop counter, with -fomit-frame-pointer) does not spoil every replay.
 */
static inline uintptr_t use_fp(struct regs *r, struct walk_log *log)
{
	if (!r->fp_from)
		log->fp_used = true;
	else if (!r->fp_logged) {
		walk_log_read(log, r->fp_from, r->fp);
		r->fp_logged = true;
	}
	return r->fp;
}

/* The window goes by value: in registers, where stores to pcs[] cannot alias it. */
static inline bool win_load(struct stack_win w, uintptr_t a, uintptr_t *v)
{
	if (a < w.lo || a > w.hi - sizeof(*v))
		return false;
	memcpy(v, (const void *)a, sizeof(*v));
	return true;
}

/* A load of the next fp: logged when used (use_fp). */
static inline bool fp_load(struct stack_win w, uintptr_t a, struct regs *r)
{
	if (!win_load(w, a, &r->fp))
		return false;
	r->fp_from = a;
	r->fp_logged = false;
	return true;
}

#define STEP_FAIL 1	/* step(): no window would do */

/* The end of a word at a that a window w lacks, for step()'s answer. */
static inline uintptr_t short_of(struct stack_win w, uintptr_t a)
{
	return a < w.lo || a > UINTPTR_MAX - 8 ? STEP_FAIL : a + 8;
}

/*
 * One frame outwards: 0 when taken; STEP_FAIL if the rule leads backwards or nowhere;
 * else the end a window would need to take it (a larger one may: the caller retries
 * from its copy of r, since r may be changed halfway).
 */
static inline __attribute__((always_inline)) uintptr_t
step(struct stack_win w, uint64_t rule, struct regs *r, struct walk_log *log)
{
	int64_t off = rule_cfa_off(rule);
	uintptr_t cfa, a;

	switch (rule_cfa(rule)) {
	case CFA_RSP:
		cfa = r->sp + off;
		break;
	case CFA_RBP:
		if (!r->fp_ok)
			return STEP_FAIL;
		cfa = use_fp(r, log) + off;
		break;
	default:
		if (!r->fp_ok)
			return STEP_FAIL;
		a = use_fp(r, log) + off;
		if (!win_load(w, a, &cfa))
			return short_of(w, a);
		walk_log_read(log, a, cfa);
	}
	/*
	 * The return address sits above sp: a CFA at or below it is a loop or garbage.
	 * sp >= w.lo always holds, so [cfa - 8, cfa) needs only the upper check.
	 */
	if (cfa < r->sp + 8)
		return STEP_FAIL;
	if (cfa > w.hi)
		return cfa;
	memcpy(&r->pc, (const void *)(cfa - 8), sizeof(r->pc));
	r->pc_read = walk_log_read(log, cfa - 8, r->pc);
	switch (rule_fp(rule)) {
	case FP_SAME:
		break;
	case FP_AT_CFA:
		a = cfa + rule_fp_off(rule);
		if (!fp_load(w, a, r))
			return short_of(w, a);
		break;
	case FP_AT_RBP:
		if (!r->fp_ok)
			return STEP_FAIL;
		a = use_fp(r, log) + rule_fp_off(rule);
		if (!fp_load(w, a, r))
			return short_of(w, a);
		break;
	default:
		r->fp_ok = false;
	}
	r->sp = cfa;
	return 0;
}

static uint64_t rule_fill(uintptr_t pc, uint64_t key)
{
	uint64_t rule = cfi_rule_of(pc);

	cache_put(pc, key, rule);
	return rule;
}

uint64_t cfi_rule_cached(uintptr_t pc, uint64_t key)
{
	uint64_t rule = cache_get(cache, cache_mask, pc, key);

	if (__builtin_expect(!rule || CFI_RULE_KIND(rule) >= CFI_TEXT, 0))
		rule = rule_fill(pc, key);
	return rule;
}

static unsigned walk_grown(uintptr_t *pcs, unsigned max, struct regs r, struct stack_win win,
			   unsigned n, unsigned sigframes, uint64_t key, struct walk_log *log);

/*
 * The walk, from pcs[n - 1] = r.pc: store up to max - n further return addresses;
 * returns the count. Two copies: on the thread's stack (growable false; a window that
 * never grows, the path every walk there takes, which keeps r and win in registers) and
 * on any other (growable: a step the window is too short for is retried from a copy
 * of r once the window has grown). *fallback is set when not even the first frame could
 * be unwound (rules the cache cannot express): the whole stack should then go to
 * libgcc. log->cut says whether the walk stopped before the outermost frame.
 */
static inline __attribute__((always_inline)) unsigned
walk_loop(uintptr_t *pcs, unsigned max, struct regs r, struct stack_win win, unsigned n,
	  unsigned sigframes, uint64_t key, bool *fallback, struct walk_log *log, const bool growable)
{
	struct slot *tab = cache;
	uintptr_t mask = cache_mask;
	enum special sp;

	while (n < max) {
		uint64_t rule = cache_get(tab, mask, r.pc, key);

		if (__builtin_expect(!rule || CFI_RULE_KIND(rule) >= CFI_TEXT, 0))
			rule = rule_fill(r.pc, key);
		if (__builtin_expect(CFI_RULE_KIND(rule) == CFI_FRAME, 1)) {
			struct regs before = r;
			uintptr_t need = step(win, rule, &r, log);

			if (need) {
				if (!growable || need == STEP_FAIL) {
					log->cut = true;
					break;
				}
				walk_log_void(log);	/* a replay must not read past the first window */
				if (!unwind_win_grow(&win, need)) {
					log->cut = true;
					break;
				}
				r = before;
				continue;	/* the same frame again, in the grown window */
			}
		} else if (CFI_RULE_KIND(rule) == CFI_END) {
			break;
		} else if (n == 1 && CFI_RULE_KIND(rule) == CFI_STOP) {
			*fallback = true;
			break;
		} else {
			/* copies: the loop's r and win stay in registers */
			struct regs sr = r;
			struct stack_win sw = win;

			sp = cfi_special(rule, &sw, &sr, log, key, n, &sigframes);
			r = sr;
			win = sw;
			if (sp == SP_FRAME && CFI_RULE_KIND(rule) == CFI_SIGNAL)
				pcs[n - 1]++;	/* the trampoline is no return address either */
			if (sp == SP_DROP) {
				walk_log_unpc(log, r.pc_read);
				n--;
			}
			if (sp != SP_FRAME) {
				log->cut = sp == SP_CUT;
				break;
			}
			if (!growable && win.limit) {	/* a signal frame led off the thread's stack */
				pcs[n++] = r.pc;
				return walk_grown(pcs, max, r, win, n, sigframes, key, log);
			}
		}
		if (r.pc == 0)
			break;
		walk_log_pc(log, r.pc_read);
		pcs[n++] = r.pc;
	}
	return n;
}

/* The walk on a stack other than the thread's own, or once it has gone there. */
static __attribute__((noinline)) unsigned
walk_grown(uintptr_t *pcs, unsigned max, struct regs r, struct stack_win win, unsigned n,
	   unsigned sigframes, uint64_t key, struct walk_log *log)
{
	bool fallback = false;

	n = walk_loop(pcs, max, r, win, n, sigframes, key, &fallback, log, true);
	if (fallback)
		log->cut = true;	/* no libgcc after a first frame was found elsewhere */
	return n;
}

/* Walk outwards from pcs[0] (see walk_loop). */
static unsigned cfi_walk(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			 const struct stack_win *w, uint64_t key, bool *fallback,
			 struct walk_log *log)
{
	struct regs r = { pcs[0], st->sp, st->fp, true, false, 0, 0 };

	*fallback = false;	/* r.sp == w->lo: step() relies on sp >= w->lo */
	if (__builtin_expect(w->limit != 0, 0))
		return walk_grown(pcs, max, r, *w, 1, 0, key, log);
	return walk_loop(pcs, max, r, *w, 1, 0, key, fallback, log, false);
}

static unsigned cfi_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			    struct walk_log *log)
{
	uint64_t key = gen_key(__atomic_load_n(&unwind_gen, __ATOMIC_ACQUIRE));
	struct stack_win w;
	bool fallback;
	unsigned n;

	if (!unwind_stack_window(st, &w)) {
		log->cut = true;
		return 1;
	}
	n = cfi_walk(pcs, max, st, &w, key, &fallback, log);
	return fallback ? unwinder_libgcc.capture(pcs, max, st, log) : n;
}

/* ---- return-address check for the fp walk ---- */

bool cfi_is_text(uintptr_t ra, unsigned gen)
{
	uint64_t key = gen_key(gen), rule = cache_get(cache, cache_mask, ra, key);

	if (CFI_RULE_KIND(rule) != CFI_TEXT && CFI_RULE_KIND(rule) != CFI_NOTEXT) {
		rule = cfi_text_at(ra) ? CFI_TEXT : CFI_NOTEXT;
		cache_put(ra, key, rule);
	}
	return rule == CFI_TEXT;
}

static bool cfi_init(void)
{
	size_t size;

	if (!cache && unwind_walks_rare) {
		cache_bits = CACHE_BITS_SPARSE;
		cache_mask = ((uintptr_t)1 << cache_bits) - BUCKET;
	}
	size = ((size_t)1 << cache_bits) * sizeof(struct slot);
	if (cache) {
		memset(cache, 0, size);	/* rules from another mode must not answer */
		return true;
	}
	if (!cfi_obj_init())
		return false;
	cfi_scan_init();
	cache = hp_map(size, HP2_OWN_UNWIND, 0);
	if (cache == MAP_FAILED) {
		cache = NULL;
		return false;
	}
	return true;
}

#else /* not x86_64 */

static bool cfi_init(void)
{
	return false;
}

static unsigned cfi_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			    struct walk_log *log)
{
	(void)pcs, (void)max, (void)st, (void)log;
	return 1;
}

bool cfi_is_text(uintptr_t ra, unsigned gen)
{
	(void)ra, (void)gen;
	return false;
}

uint64_t cfi_rule_of(uintptr_t pc)
{
	(void)pc;
	return CFI_STOP;
}

#endif

const struct unwinder unwinder_cfi = { "cfi", cfi_init, cfi_capture };
