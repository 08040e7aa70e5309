/*
 * Stack capture for heapprof.so: picks one unwinder (struct unwinder, unwind_int.h) once
 * by HEAPPROF_UNWIND, and keeps unwind_gen, moved by every dlclose() (exports.c calls
 * unwind_unloaded), so that unwinders which cache what they read from a library can
 * tell it may be gone.
 */
#define _GNU_SOURCE
#include "heapprof_format.h"
#include "unwind_int.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

/* The unwinders HEAPPROF_UNWIND can name. The default is unwind_init's choice (cfi
 * where it works, else libgcc, which works everywhere); fp is taken only when named. */
static const struct unwinder *const unwinders[] = { &unwinder_cfi, &unwinder_fp, &unwinder_libgcc };
#define N_UNWINDERS (sizeof(unwinders) / sizeof(unwinders[0]))

/* Written while the library boots, before any thread can capture. NULL: pcs[0] only. */
static const struct unwinder *chosen;

unsigned unwind_gen;
__thread bool unwind_cut;

/* ---- replay: a walk not walked again while the words it read stay the same ---- */

/*
 * A program allocates from the same place at the same depth again and again (a loop,
 * a request handler), and each time the walk reads the same stack words and finds
 * the same stack. So each thread keeps its last walks, one per (pc, sp) slot, with
 * every word each one read (struct walk_log). When a capture starts from the same pc,
 * sp, window and (if the walk used it) fp, in the same unwind_gen, and every one of
 * those words still holds its value, the walk would read exactly what it read before
 * and follow the same rules to the same end: its frames are taken from the log, read
 * back from the stack, with one independent load per word instead of a chain of
 * dependent look-ups per frame. A word that changed sends the capture to the walker.
 * Exact, not a guess: nothing is taken that the walk would not find.
 */
#define REPLAY_SET_BITS 6	/* 64 sets of four slots: 280 KiB per thread, touched as used */
#define REPLAY_SETS (1u << REPLAY_SET_BITS)
#define REPLAY_WAYS 4
_Static_assert(REPLAY_SETS * REPLAY_WAYS <= 256, "a walk id names its slot in 8 bits");

struct replay {
	uintptr_t fp, hi;	/* the start's fp (hidden: walk_log_hide), the window's top (its
				 * bottom is the start's sp, the slot's key) */
	uint64_t genmax;	/* unwind_gen | max << 32 */
	unsigned nread, n;
	bool fp_used;
	bool paired;	/* the reads come in pairs of adjacent words (fp: saved fp, pc) */
	uint64_t id;	/* the walk's id (unwind_capture_walk): a new one per log */
	uint64_t pcs;	/* the walk's log: which reads became pcs, */
	/* where, and what (hidden); 16-aligned, for replay_holds_paired */
	uintptr_t addr[WALK_LOG_MAX] __attribute__((aligned(16)));
	uintptr_t val[WALK_LOG_MAX] __attribute__((aligned(16)));
};

/* The start pc and sp of each slot in one cache line: a probe reads it alone. */
struct replay_set {
	uintptr_t pc[REPLAY_WAYS], sp[REPLAY_WAYS];	/* pc 0: the slot is empty */
	unsigned next;	/* the slot a walk that fits none logs into, if none is empty */
	struct replay way[REPLAY_WAYS];
} __attribute__((aligned(64)));	/* every set's pc[] and sp[] in a line of their own */

static bool replay_on;
static pthread_key_t replay_key;
/* logs made by this thread so far: walk ids are (count << 9 | cut << 8 | slot), never
 * reused (cut: unwind_walk_cut) */
static __thread uint64_t walk_seq HP_TLS_MODEL;
/* this thread's sets: NULL until its first walk, REPLAY_NONE when it has none */
static __thread struct replay_set *replays HP_TLS_MODEL;
#define REPLAY_NONE ((struct replay_set *)1)
#define REPLAY_SIZE (REPLAY_SETS * sizeof(struct replay_set))

/* The thread exits: its sets go, and a later walk in its destructors keeps none. */
static void replay_release(void *p)
{
	replays = REPLAY_NONE;
	munmap(p, REPLAY_SIZE);
}

static struct replay_set *replay_sets(void)
{
	struct replay_set *r = replays;

	if (__builtin_expect(r != NULL, 1))
		return r == REPLAY_NONE ? NULL : r;
	replays = REPLAY_NONE;
	r = hp_map(REPLAY_SIZE, HP2_OWN_REPLAY, 0);
	if (r == MAP_FAILED)
		return NULL;
	if (pthread_setspecific(replay_key, r) != 0) {
		munmap(r, REPLAY_SIZE);
		return NULL;
	}
	replays = r;
	return r;
}

static inline uintptr_t word_at(uintptr_t a)
{
	return *(const volatile uintptr_t *)a;
}

/* Whether every logged word still holds its value: four independent loads a step,
 * an add and an or each (word + its negation is 0). */
static inline bool replay_holds_words(const struct replay *e)
{
	const uintptr_t *a = e->addr, *v = e->val, *end = a + e->nread;
	const uintptr_t *quads = a + (e->nread & ~3u);
	uintptr_t d = 0;

	for (; a != quads; a += 4, v += 4) {
		d |= (word_at(a[0]) + v[0]) | (word_at(a[1]) + v[1]) |
		     (word_at(a[2]) + v[2]) | (word_at(a[3]) + v[3]);
		if (d)
			return false;	/* a walk that went elsewhere is given up early */
	}
	for (; a < end; a++, v++)
		d |= word_at(*a) + *v;
	return d == 0;
}

/*
 * The same for a log of adjacent pairs (every fp walk, many cfi ones): one 16-byte
 * load a pair. No early exit: every address lies in the window the walk read, so
 * all are readable, and a changed word sends the capture to the walker anyway.
 */
typedef uint64_t replay_v2 __attribute__((vector_size(16)));

static inline replay_v2 pair_at(uintptr_t a)
{
	replay_v2 x;

	memcpy(&x, (const void *)a, sizeof(x));
	return x;
}

static inline bool replay_holds_paired(const struct replay *e)
{
	const uintptr_t *a = e->addr, *end = a + e->nread;
	const uintptr_t *quads = a + (e->nread & ~3u);
	const replay_v2 *v = (const replay_v2 *)e->val;
	replay_v2 d = { 0, 0 };

	for (; a != quads; a += 4, v += 2)
		d |= (pair_at(a[0]) + v[0]) | (pair_at(a[2]) + v[1]);
	if (a < end)
		d |= pair_at(a[0]) + v[0];
	return (d[0] | d[1]) == 0;
}

static inline bool replay_holds(const struct replay *e)
{
	return e->paired ? replay_holds_paired(e) : replay_holds_words(e);
}

/* Whether the n reads logged at a come in pairs of adjacent words. */
static bool log_paired(const uintptr_t *a, unsigned n)
{
	if (n % 2)
		return false;
	for (unsigned i = 0; i < n; i += 2)
		if (a[i + 1] != a[i] + sizeof(uintptr_t))
			return false;
	return true;
}

/* The logged walk's frames into pcs[1..]: the words marked as pcs. */
static void replay_frames(const struct replay *e, uintptr_t *pcs)
{
	unsigned k = 1;

	for (uint64_t m = e->pcs; m; m &= m - 1)
		pcs[k++] = walk_log_show(e->val[__builtin_ctzll(m)]);
}

/* The slot's other inputs of the walk the same: one branch for them all. */
static inline bool replay_fits(const struct replay *e, const struct unwind_start *st,
			       uint64_t genmax, const struct stack_win *w)
{
	return ((e->hi ^ w->hi) | (e->genmax ^ genmax) |
		(e->fp_used ? e->fp + st->fp : 0)) == 0;
}

static unsigned walk_unlogged(uintptr_t *pcs, unsigned max, const struct unwind_start *st)
{
	struct walk_log log = { .n = WALK_LOG_MAX + 1 };	/* logs nothing */
	unsigned n = chosen->capture(pcs, max, st, &log);

	unwind_cut = log.cut;
	return n;
}

/*
 * A start may be kept in either of two sets (h's top bits, and those XOR a nonzero
 * distance): with two choices a set rarely has more starts than slots, where with one
 * five starts of one set evict each other on every call.
 */
static inline uint64_t replay_hash(const struct unwind_start *st)
{
	return (st->pc ^ st->sp * 0x9E3779B97F4A7C15ull) * 0xC2B2AE3D27D4EB4Full;
}

static inline unsigned replay_set1(uint64_t h)
{
	return (unsigned)(h >> (64 - REPLAY_SET_BITS));
}

static inline unsigned replay_set2(uint64_t h)
{
	return replay_set1(h) ^ ((unsigned)(h >> (64 - 2 * REPLAY_SET_BITS)) | 1) % REPLAY_SETS;
}

/* The slot of set that holds the start st, or REPLAY_WAYS (at most one holds it). */
static inline unsigned replay_find(const struct replay_set *set, const struct unwind_start *st)
{
	unsigned i;

	for (i = 0; i < REPLAY_WAYS; i++)
		if (set->pc[i] == st->pc && set->sp[i] == st->sp)
			break;
	return i;
}

static unsigned replay_empty(const struct replay_set *set)
{
	unsigned i;

	for (i = 0; i < REPLAY_WAYS && set->pc[i]; i++)
		;
	return i;
}

/* No logged walk fits or holds: walk, logging into slot i of set (a start not kept
 * yet: set is the table, and the slot an empty one of its two sets, or the next in
 * turn of the first), and keep the log if the walk could be logged whole. */
static __attribute__((noinline)) unsigned
replay_miss(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
	    uint64_t *walk, struct replay_set *set, unsigned i, uint64_t genmax,
	    const struct stack_win *w)
{
	struct replay *e;
	struct walk_log log;
	unsigned n;

	if (i == REPLAY_WAYS) {
		struct replay_set *tab = set;
		uint64_t h = replay_hash(st);

		set = &tab[replay_set1(h)];
		i = replay_empty(set);
		if (i == REPLAY_WAYS) {
			set = &tab[replay_set2(h)];
			i = replay_empty(set);
		}
		if (i == REPLAY_WAYS) {
			set = &tab[replay_set1(h)];
			i = set->next % REPLAY_WAYS;
			set->next = i + 1;
		}
	}
	e = &set->way[i];
	set->pc[i] = 0;	/* the walk logs into its slot */
	log = (struct walk_log){ .addr = e->addr, .val = e->val };
	n = chosen->capture(pcs, max, st, &log);
	unwind_cut = log.cut;
	if (log.n <= WALK_LOG_MAX) {
		set->pc[i] = st->pc;
		set->sp[i] = st->sp;
		e->fp = walk_log_hide(st->fp);
		e->hi = w->hi;
		e->genmax = genmax;
		e->nread = log.n;
		e->n = n;
		e->fp_used = log.fp_used;
		e->paired = log_paired(e->addr, log.n);
		e->pcs = log.pcs;
		e->id = ++walk_seq << 9 | (uint64_t)log.cut << 8 |
			(uint64_t)((set - replays) * REPLAY_WAYS + i);
		*walk = e->id;
	}
	return n;
}

/* The thread's first capture, or one without sets: map them, or walk unlogged. */
static __attribute__((noinline)) unsigned
replay_first(uintptr_t *pcs, unsigned max, const struct unwind_start *st)
{
	replay_sets();
	return walk_unlogged(pcs, max, st);
}

/* Inline in unwind_capture_walk: a replay that holds is this and replay_holds. Its
 * frames are left in the log until the caller asks (unwind_walk_frames). */
static inline __attribute__((always_inline)) unsigned
capture_replayed(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
		 uint64_t *walk)
{
	struct replay_set *tab = replays, *set;
	uint64_t genmax = __atomic_load_n(&unwind_gen, __ATOMIC_ACQUIRE) | (uint64_t)max << 32;
	struct stack_win w;
	struct replay *e;
	uint64_t h;
	unsigned i;

	if (__builtin_expect(tab == NULL || tab == REPLAY_NONE, 0))
		return replay_first(pcs, max, st);
	if (__builtin_expect(!unwind_stack_window(st, &w), 0))
		return walk_unlogged(pcs, max, st);	/* no caller's sp: pcs[0], cut */
	h = replay_hash(st);
	set = &tab[replay_set1(h)];
	i = replay_find(set, st);
	if (i == REPLAY_WAYS) {
		set = &tab[replay_set2(h)];
		i = replay_find(set, st);
		if (i == REPLAY_WAYS)
			return replay_miss(pcs, max, st, walk, tab, i, genmax, &w);
	}
	e = &set->way[i];
	if (__builtin_expect(!replay_fits(e, st, genmax, &w) || !replay_holds(e), 0))
		return replay_miss(pcs, max, st, walk, set, i, genmax, &w);	/* log anew here */
	*walk = e->id;
	return e->n;
}

static const struct unwinder *by_name(const char *name)
{
	for (unsigned i = 0; i < N_UNWINDERS; i++)
		if (strcmp(name, unwinders[i]->name) == 0)
			return unwinders[i];
	return NULL;
}

void unwind_init(const char *name, bool replay)
{
	const struct unwinder *want;
	static bool key_made;

	unwind_stack_init();
	if (replay && !key_made)
		key_made = pthread_key_create(&replay_key, replay_release) == 0;
	replay_on = replay && key_made && HP_UNWIND_X86_64;
	/* walks logged in another mode (tests switch) must not be replayed */
	__atomic_add_fetch(&unwind_gen, 1, __ATOMIC_RELEASE);
	if (name && *name) {
		want = by_name(name);
		if (!strcmp(name, "libunwind"))
			/* docs/INTERNALS.md: its pipe of its own, syscalls while unwinding; the
			 * README's table links there */
			hp_warn("HEAPPROF_UNWIND=libunwind: dropped (unsafe in a preload, see the "
				"README); using the default", NULL, NULL);
		else if (!want)
			hp_warn("HEAPPROF_UNWIND=", name, ": unknown unwinder, using the default");
		else if (!want->init())
			hp_warn("HEAPPROF_UNWIND=", name, ": not available here, using the default");
		else {
			chosen = want;
			return;
		}
	}
	/* the default: cfi where it works (x86_64, glibc >= 2.35), else libgcc */
	chosen = unwinder_cfi.init() ? &unwinder_cfi : &unwinder_libgcc;
}

void unwind_unloaded(void)
{
	__atomic_add_fetch(&unwind_gen, 1, __ATOMIC_RELEASE);
}

const char *unwind_name(void)
{
	return chosen ? chosen->name : "none";
}

unsigned unwind_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st)
{
	uint64_t walk;
	unsigned n = unwind_capture_walk(pcs, max, st, &walk);

	if (walk) {
		unwind_walk_frames(walk, pcs);
		unwind_cut = unwind_walk_cut(walk);
	}
	return n;
}

/* The slot that logged walk id is the one it names: no capture has come since. */
void unwind_walk_frames(uint64_t id, uintptr_t *pcs)
{
	unsigned slot = (unsigned)(id & 0xff);

	replay_frames(&replays[slot / REPLAY_WAYS].way[slot % REPLAY_WAYS], pcs);
}

unsigned unwind_capture_walk(uintptr_t *pcs, unsigned max, const struct unwind_start *st,
			     uint64_t *walk)
{
	*walk = 0;
	if (__builtin_expect(max <= 1 || !chosen, 0)) {
		unwind_cut = max > 1;	/* no unwinder yet: every stack ends at pcs[0] */
		if (max == 0)
			return 0;
		pcs[0] = st->pc;
		return 1;
	}
	if (max > HP_UNWIND_MAX + 1)
		max = HP_UNWIND_MAX + 1;
	pcs[0] = st->pc;
	if (replay_on && chosen != &unwinder_libgcc)
		return capture_replayed(pcs, max, st, walk);
	return walk_unlogged(pcs, max, st);
}
