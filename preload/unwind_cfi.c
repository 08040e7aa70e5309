/*
 * The cfi unwinder (x86_64): one packed DWARF CFI rule per return address in a
 * lock-free cache, filled lazily from the object's tables (cfi_obj.c finds the object,
 * cfi_parse.c reads the rule), and the walk that follows the rules. Stacks it cannot
 * start go to the libgcc unwinder whole.
 */
#define _GNU_SOURCE
#include "unwind_cfi.h"

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "cfi_parse.h"
#include "unwinder.h"

#if HP_CFI

/*
 * The cache: 64K slots of 16 bytes (1 MiB, touched lazily), in 64-byte buckets of four,
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
#define CACHE_SLOTS (1u << CACHE_BITS)
#define BUCKET 4

struct slot {
	uint64_t check, rule;
};

static struct slot *cache;

static inline uint64_t seal(uint64_t rule)
{
	return rule * 0x9e3779b97f4a7c15ull;
}

/* Odd multiplier: a bijection, so two generations never share a key. */
static inline uint64_t gen_key(unsigned gen)
{
	return (uint64_t)gen * 0xd6e8feb86659fd93ull;
}

static inline struct slot *bucket_of(struct slot *tab, uintptr_t pc)
{
	return &tab[(pc * BUCKET) & (CACHE_SLOTS - BUCKET)];
}

static inline uint64_t cache_get(struct slot *tab, uintptr_t pc, uint64_t key)
{
	struct slot *s = bucket_of(tab, pc);

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
	struct slot *s = bucket_of(cache, pc);
	/* bits above the bucket index pick the victim: spreads a hot bucket's evictions */
	struct slot *victim = &s[(pc >> (CACHE_BITS - 2)) & (BUCKET - 1)];

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

	if (!cfi_obj_find(pc - 1, &o))
		return CFI_STOP;
	return cfi_rule_in(&o, pc);
}

/* ---- the walk ---- */

struct regs {
	uintptr_t pc, sp, fp;
	bool fp_ok;	/* false once a frame lost track of rbp */
	bool fp_logged;	/* the read that gave fp is in the log */
	uintptr_t fp_from;	/* where fp was read, 0: the fp the walk started with */
	unsigned pc_read;	/* the log's index of the read that gave pc */
};

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

/* One frame outwards; false if the rule leads outside the stack or backwards. */
static inline bool step(struct stack_win w, uint64_t rule, struct regs *r, struct walk_log *log)
{
	int64_t off = rule_cfa_off(rule);
	uintptr_t cfa;

	switch (rule_cfa(rule)) {
	case CFA_RSP:
		cfa = r->sp + off;
		break;
	case CFA_RBP:
		if (!r->fp_ok)
			return false;
		cfa = use_fp(r, log) + off;
		break;
	default:
		if (!r->fp_ok || !win_load(w, use_fp(r, log) + off, &cfa))
			return false;
		walk_log_read(log, r->fp + off, cfa);
	}
	/*
	 * The return address sits above sp: a CFA at or below it is a loop or garbage.
	 * sp >= w.lo always holds, so [cfa - 8, cfa) needs only the upper check.
	 */
	if (cfa < r->sp + 8 || cfa > w.hi)
		return false;
	memcpy(&r->pc, (const void *)(cfa - 8), sizeof(r->pc));
	r->pc_read = walk_log_read(log, cfa - 8, r->pc);
	switch (rule_fp(rule)) {
	case FP_SAME:
		break;
	case FP_AT_CFA:
		if (!fp_load(w, cfa + rule_fp_off(rule), r))
			return false;
		break;
	case FP_AT_RBP:
		if (!r->fp_ok || !fp_load(w, use_fp(r, log) + rule_fp_off(rule), r))
			return false;
		break;
	default:
		r->fp_ok = false;
	}
	r->sp = cfa;
	return true;
}

static uint64_t rule_fill(uintptr_t pc, uint64_t key)
{
	uint64_t rule = cfi_rule_of(pc);

	cache_put(pc, key, rule);
	return rule;
}

/*
 * Walk outwards from pcs[0]; store up to max - 1 further return addresses. *fallback
 * is set when not even the first frame could be unwound (no unwind info, or rules the
 * cache cannot express): the whole stack should then go to libgcc.
 */
static unsigned cfi_walk(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			 const struct stack_win *w, uint64_t key, bool *fallback,
			 struct walk_log *log)
{
	struct regs r = { pcs[0], st->sp, st->fp, true, false, 0, 0 };
	struct stack_win win = *w;
	struct slot *tab = cache;
	unsigned n = 1;

	*fallback = false;	/* r.sp == win.lo: step() relies on sp >= win.lo */
	while (n < max) {
		uint64_t rule = cache_get(tab, r.pc, key);

		if (__builtin_expect(!rule || CFI_RULE_KIND(rule) >= CFI_TEXT, 0))
			rule = rule_fill(r.pc, key);
		if (CFI_RULE_KIND(rule) != CFI_FRAME) {
			*fallback = n == 1 && CFI_RULE_KIND(rule) != CFI_END;
			break;
		}
		if (!step(win, rule, &r, log) || r.pc == 0)
			break;
		walk_log_pc(log, r.pc_read);
		pcs[n++] = r.pc;
	}
	return n;
}

static unsigned cfi_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			    struct walk_log *log)
{
	uint64_t key = gen_key(__atomic_load_n(&unwind_gen, __ATOMIC_ACQUIRE));
	struct stack_win w;
	bool fallback;
	unsigned n;

	if (!unwind_stack_window(st, &w))
		return 1;
	n = cfi_walk(pcs, max, st, &w, key, &fallback, log);
	return fallback ? unwinder_libgcc.capture(pcs, max, st, log) : n;
}

/* ---- return-address check for the fp walk ---- */

bool cfi_is_text(uintptr_t ra, unsigned gen)
{
	uint64_t key = gen_key(gen), rule = cache_get(cache, ra, key);

	if (CFI_RULE_KIND(rule) != CFI_TEXT && CFI_RULE_KIND(rule) != CFI_NOTEXT) {
		rule = cfi_text_at(ra) ? CFI_TEXT : CFI_NOTEXT;
		cache_put(ra, key, rule);
	}
	return rule == CFI_TEXT;
}

static bool cfi_init(void)
{
	size_t size = CACHE_SLOTS * sizeof(struct slot);

	if (cache) {
		memset(cache, 0, size);	/* rules from another mode must not answer */
		return true;
	}
	if (!cfi_obj_init())
		return false;
	cache = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
