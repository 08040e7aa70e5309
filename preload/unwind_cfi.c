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
 * The cache: slots of 16 bytes in 128-byte buckets of eight. The bucket comes from the
 * low bits of the return address, as in a set-associative CPU cache: no hash, since the
 * bucket address is on the walk's critical path (load return address, load rule, load
 * the next return address). A writer stores rule and check with two plain stores;
 * check = pc ^ seal(rule) ^ gen_key(unwind_gen), so a reader that sees half of a
 * concurrent update finds a mismatch and takes it as a miss instead of using a torn
 * entry, and so does a reader after a dlclose(): a library loaded where the closed one
 * was has other rules at the same addresses. Collisions overwrite.
 *
 * Each return address a walk meets fills a bucket at random, so the table's pages are
 * resident as soon as it holds a few entries per page: it starts at 4K slots (64 KiB)
 * and grows fourfold, to 64K slots (1 MiB), when a quarter of its size in addresses
 * were added to it or evicted others (a Python server's 3,800 return addresses used all
 * of a 1 MiB table; they fit 256 KiB, where eight ways keep them from evicting each
 * other, and a walk finds them in a bucket's first slots).
 * The old table's entries move to the new one; its pages are given back, and a walk
 * still reading it finds zeros there (misses), within the bounds it read with it: the
 * table's address and its size are one word.
 */
#define CACHE_BITS_FIRST 12
#define CACHE_BITS_MAX 16
#define BUCKET_BITS 3
#define BUCKET (1u << BUCKET_BITS)

struct slot {
	uint64_t check, rule;
};

/* A table: its slots, 2^bits of them, and the bucket index's mask (in slots) */
struct cache_tab {
	struct slot *s;
	uintptr_t mask;
	unsigned bits;
};

static uintptr_t cache;		/* the table's address (page-aligned) | its bits */
static unsigned cache_added;	/* addresses added to the table, or evicting another's */
static bool cache_growing;

static inline uint64_t seal(uint64_t rule)
{
	return rule * 0x9e3779b97f4a7c15ull;
}

/* Odd multiplier: a bijection, so two generations never share a key. */
static inline uint64_t gen_key(unsigned gen)
{
	return (uint64_t)gen * 0xd6e8feb86659fd93ull;
}

static inline struct cache_tab cache_now(void)
{
	uintptr_t w = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
	unsigned bits = w & 63;

	return (struct cache_tab){ (struct slot *)(w & ~(uintptr_t)4095),
				   ((uintptr_t)1 << bits) - BUCKET, bits };
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

/* Put pc's rule in t; true if it took an empty slot or evicted the rule of another
 * address of this bucket (an entry of another generation, or torn, decodes to an
 * address elsewhere): one more address the table holds or would. */
static bool tab_put(const struct cache_tab *t, uintptr_t pc, uint64_t key, uint64_t rule)
{
	struct slot *s = bucket_of(t->s, t->mask, pc);
	/* bits above the bucket index pick the victim: spreads a hot bucket's evictions */
	struct slot *victim = &s[(pc >> (t->bits - BUCKET_BITS)) & (BUCKET - 1)];
	bool added = true;

	for (unsigned i = 0; i < BUCKET; i++) {
		uint64_t r = __atomic_load_n(&s[i].rule, __ATOMIC_RELAXED);

		if (!r || (__atomic_load_n(&s[i].check, __ATOMIC_RELAXED) ^ seal(r) ^ key) == pc) {
			victim = &s[i];
			added = !r;
			goto put;
		}
	}
	added = bucket_of(t->s, t->mask, __atomic_load_n(&victim->check, __ATOMIC_RELAXED) ^
					       seal(victim->rule) ^ key) == s;
put:
	__atomic_store_n(&victim->rule, rule, __ATOMIC_RELAXED);
	__atomic_store_n(&victim->check, pc ^ seal(rule) ^ key, __ATOMIC_RELAXED);
	return added;
}

/* A new table of 2^bits slots, as cache's word; 0 without memory */
static uintptr_t tab_map(unsigned bits)
{
	void *m = hp_map(((size_t)1 << bits) * sizeof(struct slot), HP2_OWN_UNWIND, 0);

	return m == MAP_FAILED ? 0 : (uintptr_t)m | bits;
}

/* The table fourfold, with old's entries of this generation (key); one thread grows it,
 * the others go on with the old one meanwhile. */
static void cache_grow(const struct cache_tab *old, uint64_t key)
{
	size_t n = (size_t)1 << old->bits;
	struct cache_tab t;
	uintptr_t w;

	if (old->bits >= CACHE_BITS_MAX || __atomic_exchange_n(&cache_growing, true, __ATOMIC_ACQUIRE))
		return;
	if (cache_now().s != old->s || !(w = tab_map(old->bits + 2)))
		goto out;	/* grown already; or no memory: go on with this one */
	t = (struct cache_tab){ (struct slot *)(w & ~(uintptr_t)4095),
				((uintptr_t)1 << (old->bits + 2)) - BUCKET, old->bits + 2 };
	for (size_t i = 0; i < n; i++) {
		uint64_t r = __atomic_load_n(&old->s[i].rule, __ATOMIC_RELAXED);
		uintptr_t pc = __atomic_load_n(&old->s[i].check, __ATOMIC_RELAXED) ^ seal(r) ^ key;

		if (r && bucket_of(old->s, old->mask, pc) == &old->s[i & ~(size_t)(BUCKET - 1)])
			tab_put(&t, pc, key, r);
	}
	__atomic_store_n(&cache_added, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cache, w, __ATOMIC_RELEASE);
	madvise(old->s, n * sizeof(struct slot), MADV_DONTNEED);
out:
	__atomic_store_n(&cache_growing, false, __ATOMIC_RELEASE);
}

static void cache_put(uintptr_t pc, uint64_t key, uint64_t rule)
{
	struct cache_tab t = cache_now();

	if (tab_put(&t, pc, key, rule) &&
	    __atomic_add_fetch(&cache_added, 1, __ATOMIC_RELAXED) >= (1u << t.bits) / 4)
		cache_grow(&t, key);
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
	struct cache_tab t = cache_now();
	uint64_t rule = cache_get(t.s, t.mask, pc, key);

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
	struct cache_tab t = cache_now();
	struct slot *tab = t.s;
	uintptr_t mask = t.mask;
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
	struct cache_tab t = cache_now();
	uint64_t key = gen_key(gen), rule = cache_get(t.s, t.mask, ra, key);

	if (CFI_RULE_KIND(rule) != CFI_TEXT && CFI_RULE_KIND(rule) != CFI_NOTEXT) {
		rule = cfi_text_at(ra) ? CFI_TEXT : CFI_NOTEXT;
		cache_put(ra, key, rule);
	}
	return rule == CFI_TEXT;
}

static bool cfi_init(void)
{
	uintptr_t w;

	if (cache) {
		struct cache_tab t = cache_now();

		/* rules from another mode must not answer */
		memset(t.s, 0, ((size_t)1 << t.bits) * sizeof(struct slot));
		return true;
	}
	if (!cfi_obj_init())
		return false;
	cfi_scan_init();
	w = tab_map(CACHE_BITS_FIRST);
	__atomic_store_n(&cache, w, __ATOMIC_RELEASE);
	return w != 0;
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
