/*
 * CPython's object allocator, named out of band (see hooks_pymalloc.h): our allocator in the
 * object and memory domains calls pymalloc's own, then writes the block's slot in its
 * pool's slab table; our arena allocator tells which pools are pymalloc's. Sampling,
 * stacks, counters and events are the malloc family's (hooks.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "heapprof_format.h"
#include "hooks.h"
#include "hooks_int.h"
#include "options.h"
#include "hooks_pymalloc.h"
#include "table.h"
#include "unwind.h"
#include "util.h"

/* The interpreter's allocator interface (Include/cpython/pymem.h, the same since 3.5). */
struct py_allocator {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t size);
	void (*free)(void *ctx, void *ptr);
};

struct py_arena_allocator {
	void *ctx;
	void *(*alloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *ptr, size_t size);
};

enum { DOMAIN_RAW, DOMAIN_MEM, DOMAIN_OBJ };

/*
 * pymalloc on 64-bit targets from 3.10 on (Objects/obmalloc.c, pycore_obmalloc.h):
 * blocks of 1 to 512 bytes in classes of 16 bytes, carved from 16 KiB pools (aligned to
 * 16 KiB) whose 48-byte header holds the class; geometry_ok() checks it on the first
 * block, and heapprof leaves pymalloc alone when it does not hold.
 */
#define SMALL_MAX 512
#define CLASS_SHIFT 4
#define NCLASSES (SMALL_MAX >> CLASS_SHIFT)
#define POOL_SHIFT 14
#define POOL_SIZE ((uintptr_t)1 << POOL_SHIFT)
#define POOL_OVERHEAD 48
#define POOL_COUNT 0		/* struct pool_header: ref.count (uint) */
#define POOL_SZIDX 36		/* szidx (uint): the class */
#define POOL_MAXNEXT 44		/* maxnextoffset (uint): POOL_SIZE - block size */

static inline uint32_t pool_u32(uintptr_t pool, size_t off)
{
	return *(const uint32_t *)(pool + off);
}

/* ---- which pools are pymalloc's: a two-level map of pool addresses ---------------- */

/*
 * Each pool of an arena pymalloc holds has an entry: NO_TABLE until one of its blocks
 * is named, then its slab table with the table's class in the low bits (tables are
 * SLAB_ALIGN-aligned), so that a free needs no load from the table's header. 48-bit
 * addresses: 2^18 leaves of 2^16 entries, each leaf (512 KiB, mapped when an arena falls
 * in its GiB) touched a page per 8 MiB of arenas. A pool outside the map (0) is not
 * pymalloc's: its blocks pass through.
 */
#define ADDR_BITS 48
#define LEAF_BITS 16
#define ROOT_BITS (ADDR_BITS - POOL_SHIFT - LEAF_BITS)
#define NO_TABLE ((uintptr_t)1)

static uintptr_t **root;	/* 2^ROOT_BITS leaves, mapped by pymalloc_start */

static inline uintptr_t *pool_entry(uintptr_t a)
{
	uintptr_t *leaf;

	if ((uint64_t)a >> ADDR_BITS)
		return NULL;	/* (a 32-bit target never wraps: pymalloc_start) */
	leaf = __atomic_load_n(&root[a >> (POOL_SHIFT + LEAF_BITS)], __ATOMIC_ACQUIRE);
	return leaf ? &leaf[(a >> POOL_SHIFT) & ((1u << LEAF_BITS) - 1)] : NULL;
}

/* The entry of pool a, its leaf mapped if need be; NULL without memory. */
static uintptr_t *pool_entry_make(uintptr_t a)
{
	uintptr_t **slot = &root[a >> (POOL_SHIFT + LEAF_BITS)];
	uintptr_t *leaf = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *fresh;
	size_t len = sizeof(*leaf) << LEAF_BITS;

	if (!leaf) {
		fresh = hp_map(len, HP2_OWN_INDEX, 0);
		if (fresh == MAP_FAILED)
			return NULL;
		if (__atomic_compare_exchange_n(slot, &leaf, fresh, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			leaf = fresh;
		else
			munmap(fresh, len);	/* another interpreter's arena got in first */
	}
	return &leaf[(a >> POOL_SHIFT) & ((1u << LEAF_BITS) - 1)];
}

/* ---- slab tables ------------------------------------------------------------------- */

struct slab {
	uint64_t magic;		/* HP2_SLAB_MAGIC; 0 while free (then start links the list) */
	uint64_t check;
	uint64_t start;		/* the pool */
	uint64_t w3;		/* POOL_OVERHEAD | stride << 16 | slots << 32 */
	uint64_t slot[];
};

_Static_assert(sizeof(struct slab) == HP2_SLAB_WORDS * 8, "slab table");

#define SLAB_ALIGN 32		/* > NCLASSES - 1: an entry's low bits hold the class */

static inline struct slab *entry_slab(uintptr_t v)
{
	return (struct slab *)(v & ~(uintptr_t)(SLAB_ALIGN - 1));
}

static inline unsigned entry_class(uintptr_t v)
{
	return (unsigned)(v & (SLAB_ALIGN - 1));
}

/* Per class: its slots in a pool, and ceil(2^32 / (class + 1)), with which a block's
 * slot is (offset / 16) / (class + 1), exact for offsets within a pool (offset / 16
 * times the rounding error stays below 2^32). Filled by pymalloc_start. */
static uint32_t nslots[NCLASSES];
static uint64_t recip[NCLASSES];

/*
 * Tables come from chunks of our own (mmap), one bump pointer for all; a table no pool
 * uses any more waits on a list of tables of its size (its slots all 0). The lock is
 * for interpreters with a GIL of their own (3.12's subinterpreters): one GIL
 * serializes everything else.
 *
 * Sampling names a block or two of a pool, not all: a table then covers a window of
 * the pool's slots, WIN_FIRST at first, aligned to its size, which doubles to take in
 * a block outside it, up to the whole pool (the table's w3 says where its slots start
 * and how many, as the format allows any offset). A table of a whole pool is 8 bytes
 * a slot, 8 KiB for the 16-byte class: a sampled Python server held 76 KiB of them.
 */
#define SLAB_CHUNK ((size_t)1 << 20)
#define WIN_FIRST 8
#define WIN_SIZES 7		/* windows of 8, 16 .. 512 slots; the whole pool's beyond */
static struct slab *free_slabs[NCLASSES], *free_wins[WIN_SIZES];
static unsigned char *bump, *bump_end;
static bool slab_lock;
static bool windows;		/* tables cover windows (sampling) */

static void lock(void)
{
	while (__atomic_test_and_set(&slab_lock, __ATOMIC_ACQUIRE))
		;
}

static void unlock(void)
{
	__atomic_clear(&slab_lock, __ATOMIC_RELEASE);
}

/* The list of free tables of n slots (the whole pool of class c, or a window) */
static struct slab **free_list(unsigned c, uint32_t n)
{
	return n >= nslots[c] ? &free_slabs[c] : &free_wins[__builtin_ctz(n) - 3];
}

static struct slab *slab_alloc(unsigned c, uint32_t n)
{
	size_t len = (sizeof(struct slab) + n * sizeof(uint64_t) + SLAB_ALIGN - 1) &
		     ~(size_t)(SLAB_ALIGN - 1);
	struct slab **list = free_list(c, n), *s;

	lock();
	s = *list;
	if (s) {
		*list = (struct slab *)(uintptr_t)s->start;
	} else {
		if (!bump || (size_t)(bump_end - bump) < len) {
			void *m = hp_map(SLAB_CHUNK, HP2_OWN_SLABS, 0);

			if (m == MAP_FAILED) {
				unlock();
				return NULL;	/* the pool's blocks go unnamed */
			}
			bump = m;
			bump_end = bump + SLAB_CHUNK;
		}
		s = (struct slab *)bump;
		bump += len;
	}
	unlock();
	return s;
}

/* Table s, its slots all 0, back on its list */
static void slab_free(struct slab *s, unsigned c, uint32_t n)
{
	struct slab **list = free_list(c, n);

	lock();
	s->start = (uint64_t)(uintptr_t)*list;
	*list = s;
	unlock();
}

/* A table's first slot (the index of its block in the pool) and its slots */
static inline uint32_t slab_lo(const struct slab *s, unsigned c)
{
	uint64_t x = ((s->w3 & 0xFFFF) - POOL_OVERHEAD) >> CLASS_SHIFT;

	return (uint32_t)((x * recip[c]) >> 32);
}

static inline uint32_t slab_n(const struct slab *s)
{
	return (uint32_t)(s->w3 >> 32);
}

/* Its header, once the slots are in: the magic last of all. */
static void slab_seal(struct slab *s, uintptr_t pool, unsigned c, uint32_t lo, uint64_t n)
{
	uint64_t stride = (uint64_t)(c + 1) << CLASS_SHIFT;

	s->start = pool;
	s->w3 = (POOL_OVERHEAD + lo * stride) | stride << 16 | n << 32;
	s->check = table_record_check(s, &s->start, 2);
	__atomic_store_n(&s->magic, HP2_SLAB_MAGIC, __ATOMIC_RELEASE);
}

/* The window of a first table for slot i: the whole pool, or WIN_FIRST slots */
static uint32_t window_first(unsigned c, uint64_t i, uint32_t *n)
{
	if (!windows || nslots[c] <= WIN_FIRST) {
		*n = nslots[c];
		return 0;
	}
	*n = WIN_FIRST;
	return (uint32_t)i & ~(uint32_t)(WIN_FIRST - 1);
}

/* A table for pool, class c, slots lo..lo + n free; published last. */
static struct slab *slab_new(uintptr_t pool, unsigned c, uint32_t lo, uint32_t n)
{
	struct slab *s = slab_alloc(c, n);

	if (s)
		slab_seal(s, pool, c, lo, n);
	return s;
}

/* The pool of table s (class c) goes to another class or back to the system: no scan
 * sees it again; a block still named in it (an interpreter torn down with its objects)
 * counts as freed. */
static void slab_release(struct slab *s, unsigned c)
{
	unsigned n = slab_n(s);

	*(volatile uint64_t *)&s->magic = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t w = s->slot[i];

		if (w) {
			s->slot[i] = 0;
			hooks_unnamed((uint32_t)w, (w >> 32) & 0xFFFF,
				      (unsigned)(w >> HP2_SLAB_FLAGS_SHIFT) & 7);
		}
	}
	slab_free(s, c, n);
}

/*
 * The table of entry *e (pool, class c) widened to take in slot i: the smallest aligned
 * window holding its own and i, or the whole pool. The old one's magic goes first, so
 * that no dump sees a block in both; NULL without memory (the old one stays).
 */
static struct slab *slab_widen(uintptr_t *e, uintptr_t pool, unsigned c, uint64_t i)
{
	struct slab *old = entry_slab(*e), *s;
	uint32_t lo0 = slab_lo(old, c), n0 = slab_n(old), n = n0, lo;

	do
		n *= 2;
	while ((i ^ lo0) >= n && n < nslots[c]);
	lo = lo0 & ~(n - 1);
	if (n >= nslots[c])
		lo = 0, n = nslots[c];
	if (!(s = slab_alloc(c, n)))
		return NULL;
	*(volatile uint64_t *)&old->magic = 0;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/* (a window may run past the pool's last slot, whose slots past it stay 0) */
	memcpy(&s->slot[lo0 - lo], old->slot, (lo0 + n0 > lo + n ? lo + n - lo0 : n0) * sizeof(uint64_t));
	slab_seal(s, pool, c, lo, n);
	*e = (uintptr_t)s | c;
	memset(old->slot, 0, n0 * sizeof(uint64_t));
	slab_free(old, c, n0);
	return s;
}

/* ---- a block's slot ---------------------------------------------------------------- */

/* pymalloc's geometry held for the first block: 1 yes, -1 no (heapprof stands aside) */
static int geometry;

/* Whether block p of size bytes, in pool, is where pymalloc as we know it puts it: the
 * pool's header holds a class the size fits, in use, whose last block ends the pool. */
static bool geometry_ok(uintptr_t p, uintptr_t pool, size_t size)
{
	unsigned c = pool_u32(pool, POOL_SZIDX);
	uintptr_t stride = (uintptr_t)(c + 1) << CLASS_SHIFT;

	return c < NCLASSES && size <= stride && pool_u32(pool, POOL_COUNT) >= 1 &&
	       pool_u32(pool, POOL_MAXNEXT) == POOL_SIZE - stride &&
	       p >= pool + POOL_OVERHEAD && (p - pool - POOL_OVERHEAD) % stride == 0;
}

/* The index of block p in its pool of class c, or -1: p is not a block's start. */
static inline int64_t block_index(uintptr_t p, unsigned c)
{
	uintptr_t off = (p & (POOL_SIZE - 1)) - POOL_OVERHEAD;	/* wraps below the first */
	uint64_t x = off >> CLASS_SHIFT, i = (x * recip[c]) >> 32;

	if (off >= POOL_SIZE - POOL_OVERHEAD || off & 15 || i * (c + 1) != x || i >= nslots[c])
		return -1;
	return (int64_t)i;
}

/* The slot of block i in table s (class c), or NULL: outside its window. */
static inline uint64_t *slot_in(struct slab *s, unsigned c, int64_t i)
{
	if (i < 0)
		return NULL;
	if (windows) {
		i -= slab_lo(s, c);
		if ((uint64_t)i >= slab_n(s))
			return NULL;
	}
	return &s->slot[i];
}

/*
 * The slot of block p in the table of entry v (p's pool has its class c), or NULL: p is
 * not a block's start there, or not in the table's window.
 */
static inline uint64_t *slot_of(uintptr_t v, uintptr_t p, unsigned c)
{
	return slot_in(entry_slab(v), c, block_index(p, c));
}

/* The slot of a live block p of pymalloc's (for a free), or NULL if it has none. */
static inline uint64_t *slot_lookup(uintptr_t p)
{
	uintptr_t *e = pool_entry(p), v;
	unsigned c;

	if (!e || (v = *e) <= NO_TABLE)
		return NULL;
	c = entry_class(v);
	if (pool_u32(p & ~(POOL_SIZE - 1), POOL_SZIDX) != c)
		return NULL;	/* a table of the pool's class before: all its slots free */
	return slot_of(v, p, c);
}

/*
 * The slot for a block pymalloc just returned at p, its pool's table made (or made
 * again for the pool's new class) if need be; NULL when p is not pymalloc's (its
 * fallback to malloc when it has no memory for an arena) or no table can be had.
 */
static uint64_t *slot_new(uintptr_t p, size_t size)
{
	uintptr_t pool = p & ~(POOL_SIZE - 1), *e = pool_entry(p), v;
	uint64_t *slot;
	struct slab *s;
	int64_t i;
	unsigned c;

	if (!e || !(v = *e))
		return NULL;
	if (unlikely(geometry <= 0)) {
		if (geometry < 0 || !geometry_ok(p, pool, size)) {
			if (!geometry)
				hp_warn("python's object allocator is not laid out as heapprof knows "
					"it: its blocks of 512 bytes or less are not recorded "
					"(PYTHONMALLOC=malloc records them)", NULL, NULL);
			geometry = -1;
			return NULL;
		}
		geometry = 1;
	}
	c = pool_u32(pool, POOL_SZIDX);
	if (c >= NCLASSES || (i = block_index(p, c)) < 0)
		return NULL;
	if (v <= NO_TABLE || entry_class(v) != c) {
		uint32_t n, lo = window_first(c, (uint64_t)i, &n);

		if (v > NO_TABLE)
			slab_release(entry_slab(v), entry_class(v));
		s = slab_new(pool, c, lo, n);
		*e = v = s ? (uintptr_t)s | c : NO_TABLE;
		if (!s)
			return NULL;
	}
	if ((slot = slot_in(entry_slab(v), c, i)))
		return slot;
	s = slab_widen(e, pool, c, (uint64_t)i);
	return s ? slot_in(s, c, i) : NULL;
}

/* Name block p (size bytes, pymalloc's if it has a slot) for the caller at st; its
 * site, 0 if none. */
static uint32_t name(void *p, size_t size, unsigned entry, unsigned flags,
		     const struct unwind_start *st)
{
	uint64_t *slot = p ? slot_new((uintptr_t)p, size) : NULL;
	uint32_t site, time;

	if (!slot)
		return 0;
	site = hooks_site(st, entry, size, flags, &time);
	*slot = hp2_slab_slot(site, size, time, flags);
	hooks_named(size);
	return site;
}

/* The slot of p (a block about to go back), cleared and counted; its site, 0 if none. */
static inline __attribute__((always_inline)) uint32_t unname(void *p)
{
	uint64_t *slot = slot_lookup((uintptr_t)p), w;

	if (!slot || !(w = *slot))
		return 0;
	*slot = 0;
	hooks_unnamed((uint32_t)w, (w >> 32) & 0xFFFF, (unsigned)(w >> HP2_SLAB_FLAGS_SHIFT) & 7);
	return (uint32_t)w;
}

/* ---- the domains' allocator --------------------------------------------------------- */

/* What each domain had before us (pymalloc), and ours; ctx points at the former. */
static struct py_allocator orig[3], ours[3];
static struct py_arena_allocator orig_arena;
static void (*get_allocator)(int, struct py_allocator *);
static void (*set_allocator)(int, struct py_allocator *);

/* Sizes pymalloc serves itself: 1..512 (0 and larger ones go to the raw domain). */
static inline bool small(size_t size)
{
	return size - 1 < SMALL_MAX;
}

/*
 * The domains' entry points: what pymalloc does not serve itself passes through by a
 * tail call (no frame of ours in the stack our malloc takes of it); the blocks it may
 * name take the out-of-line paths, with their caller's place (UNWIND_START here).
 */
static __attribute__((noinline)) void *malloc_named(const struct py_allocator *o, size_t size,
						    const struct unwind_start *st)
{
	unsigned flags = 0;
	uint32_t site;
	void *p;

	if (!hooks_take(size, &flags))
		return o->malloc(o->ctx, size);
	p = o->malloc(o->ctx, size);
	site = name(p, size, HP2_ENTRY_MALLOC, flags, st);
	if (unlikely(hp_opt.events))
		hooks_event(HP2_ENTRY_MALLOC, size, 0, (uintptr_t)p, site);
	return p;
}

static void *w_malloc(void *ctx, size_t size)
{
	const struct py_allocator *o = ctx;
	struct unwind_start st;

	if (!small(size) || geometry < 0 || hooks_sample_skips(size))
		return o->malloc(o->ctx, size);
	UNWIND_START(st);
	return malloc_named(o, size, &st);
}

static __attribute__((noinline)) void *calloc_named(const struct py_allocator *o, size_t nelem,
						    size_t elsize, const struct unwind_start *st)
{
	unsigned flags = 0;
	size_t size = nelem * elsize;	/* w_calloc saw it does not overflow */
	uint32_t site;
	void *p;

	if (!hooks_take(size, &flags))
		return o->calloc(o->ctx, nelem, elsize);
	p = o->calloc(o->ctx, nelem, elsize);
	site = name(p, size, HP2_ENTRY_CALLOC, flags, st);
	if (unlikely(hp_opt.events))
		hooks_event(HP2_ENTRY_CALLOC, nelem, elsize, (uintptr_t)p, site);
	return p;
}

static void *w_calloc(void *ctx, size_t nelem, size_t elsize)
{
	const struct py_allocator *o = ctx;
	struct unwind_start st;
	size_t size;

	if (__builtin_mul_overflow(nelem, elsize, &size) || !small(size) || geometry < 0 ||
	    hooks_sample_skips(size))
		return o->calloc(o->ctx, nelem, elsize);
	UNWIND_START(st);
	return calloc_named(o, nelem, elsize, &st);
}

/* realloc of p (NULL, or pymalloc's) within pymalloc: see w_realloc. */
static __attribute__((noinline)) void *realloc_named(const struct py_allocator *o, void *p,
						     size_t size, const struct unwind_start *st)
{
	unsigned flags = 0;
	uint32_t site = 0;
	void *q = o->realloc(o->ctx, p, size);

	if (!q)
		return NULL;	/* p stays as it was, named or not */
	if (p)
		unname(p);
	if (small(size) && geometry >= 0 && hooks_take(size, &flags))
		site = name(q, size, HP2_ENTRY_REALLOC, flags, st);
	if (unlikely(hp_opt.events))
		hooks_event(HP2_ENTRY_REALLOC, (uintptr_t)p, size, (uintptr_t)q, site);
	return q;
}

/*
 * realloc: pymalloc resizes its own blocks (in place, or into another of its blocks, or
 * into a malloc'd one past 512 bytes) and passes the others to the raw domain (our
 * realloc names those). The old block goes back only if it worked; the new one is a
 * new allocation, with a new draw, as our realloc does.
 */
static void *w_realloc(void *ctx, void *p, size_t size)
{
	const struct py_allocator *o = ctx;
	struct unwind_start st;
	uintptr_t *e;

	if ((p && (!(e = pool_entry((uintptr_t)p)) || !*e)) || geometry < 0)
		return o->realloc(o->ctx, p, size);	/* not pymalloc's: the raw domain's */
	if (!small(size) && !hp_opt.events) {
		/* into a malloc'd block, which our malloc names. Should that fail (no
		 * memory), p stays the program's, unnamed. */
		if (p)
			unname(p);
		return o->realloc(o->ctx, p, size);
	}
	UNWIND_START(st);
	return realloc_named(o, p, size, &st);
}

/* free of a named block: out of line, so that w_free's usual way sets up no frame */
static __attribute__((noinline)) void free_named(const struct py_allocator *o, void *p,
						 uint64_t *slot)
{
	uint64_t w = *slot;

	*slot = 0;
	hooks_unnamed((uint32_t)w, (w >> 32) & 0xFFFF, (unsigned)(w >> HP2_SLAB_FLAGS_SHIFT) & 7);
	o->free(o->ctx, p);
}

static __attribute__((noinline)) void free_event(const struct py_allocator *o, void *p,
						 const struct unwind_start *st)
{
	uint32_t site = p ? unname(p) : 0;

	if (p)
		hooks_free_event(p, site, st);
	o->free(o->ctx, p);
}

/*
 * The frees of a sampled run are nearly all of blocks never named: a look at the
 * block's pool and slot, then pymalloc's free by a tail call (the slot read stays the
 * whole of the cost, in a pool with a table or without).
 */
static void w_free(void *ctx, void *p)
{
	const struct py_allocator *o = ctx;
	struct unwind_start st;
	uint64_t *slot;

	if (unlikely(hp_opt.events)) {
		UNWIND_START(st);
		free_event(o, p, &st);
		return;
	}
	if (p && (slot = slot_lookup((uintptr_t)p)) && *slot) {
		free_named(o, p, slot);
		return;
	}
	o->free(o->ctx, p);
}

/* ---- arenas ------------------------------------------------------------------------- */

/* The pools wholly inside [a, a + size) are pymalloc's now (pymalloc uses only those). */
static void pools_add(uintptr_t a, size_t size)
{
	for (uintptr_t q = (a + POOL_SIZE - 1) & ~(POOL_SIZE - 1); q + POOL_SIZE <= a + size;
	     q += POOL_SIZE) {
		uintptr_t *e = pool_entry_make(q);

		if (e)
			*e = NO_TABLE;
	}
}

static void pools_drop(uintptr_t a, size_t size)
{
	for (uintptr_t q = (a + POOL_SIZE - 1) & ~(POOL_SIZE - 1); q + POOL_SIZE <= a + size;
	     q += POOL_SIZE) {
		uintptr_t *e = pool_entry(q);

		if (!e)
			continue;
		if (*e > NO_TABLE)
			slab_release(entry_slab(*e), entry_class(*e));
		*e = 0;
	}
}

static bool same(const struct py_allocator *a, const struct py_allocator *b)
{
	return a->ctx == b->ctx && a->malloc == b->malloc && a->calloc == b->calloc &&
	       a->realloc == b->realloc && a->free == b->free;
}

/*
 * At each new arena, with the interpreter's allocators set up (PYTHONMALLOC and -X dev
 * act before any object is made): pymalloc put back (PYTHONMALLOC=pymalloc, or the
 * runtime initialized again) is wrapped again. At the first: the raw domain's
 * allocator (malloc) needs nothing, our malloc names its blocks; anything else (the
 * debug hooks) calls pymalloc past us: said once. Later allocators (tracemalloc's)
 * wrap ours.
 */
static void domains_check(void)
{
	static bool checked;
	struct py_allocator cur, raw;
	const char *env;
	bool first = !__atomic_exchange_n(&checked, true, __ATOMIC_ACQ_REL), other = false;

	get_allocator(DOMAIN_RAW, &raw);
	for (int d = DOMAIN_MEM; d <= DOMAIN_OBJ; d++) {
		get_allocator(d, &cur);
		if (same(&cur, &orig[d]))
			set_allocator(d, &ours[d]);
		else if (!same(&cur, &ours[d]) && !same(&cur, &raw))
			other = true;
	}
	env = getenv("PYTHONMALLOC");
	if (!first || !other || (env && !strncmp(env, "malloc", 6)))
		return;	/* malloc_debug: the blocks reach our malloc */
	hp_warn("python's object allocator is another's (PYTHONMALLOC=",
		env && *env ? env : "debug, or -X dev",
		"): its blocks of 512 bytes or less are not recorded "
		"(PYTHONMALLOC=malloc records them)");
}

static void *w_arena_alloc(void *ctx, size_t size)
{
	void *a = orig_arena.alloc(orig_arena.ctx, size);

	(void)ctx;
	if (a)
		pools_add((uintptr_t)a, size);
	domains_check();
	return a;
}

static void w_arena_free(void *ctx, void *a, size_t size)
{
	(void)ctx;
	if (a)
		pools_drop((uintptr_t)a, size);
	orig_arena.free(orig_arena.ctx, a, size);
}

/* ---- start ---------------------------------------------------------------------------- */

/* 3.13 on: the free-threaded build serves objects from mimalloc, not from pools. */
static bool free_threaded(uint32_t version)
{
	const uint64_t *d = dlsym(RTLD_DEFAULT, "_PyRuntime");

	if (version < 0x030D0000)
		return false;
	return !d || memcmp(d, "xdebugpy", 8) != 0 || d[2] != 0;
}

void pymalloc_start(void)
{
	const uint32_t *ver = dlsym(RTLD_DEFAULT, "Py_Version");
	void (*get_arena)(struct py_arena_allocator *);
	void (*set_arena)(struct py_arena_allocator *);
	struct py_arena_allocator arena = { NULL, w_arena_alloc, w_arena_free };
	uint32_t minor;
	void *m;

	if (!ver || sizeof(void *) != 8)
		return;
	minor = *ver & 0xFFFF0000u;
	if (minor < 0x030B0000 || minor > 0x030D0000)
		return;	/* interp_python.c says which versions heapprof knows */
	if (free_threaded(minor)) {
		hp_warn("python is a free-threaded build: its objects (mimalloc's) are not "
			"recorded", NULL, NULL);
		return;
	}
	get_allocator = (void (*)(int, struct py_allocator *))dlsym(RTLD_DEFAULT, "PyMem_GetAllocator");
	set_allocator = (void (*)(int, struct py_allocator *))dlsym(RTLD_DEFAULT, "PyMem_SetAllocator");
	get_arena = (void (*)(struct py_arena_allocator *))dlsym(RTLD_DEFAULT, "PyObject_GetArenaAllocator");
	set_arena = (void (*)(struct py_arena_allocator *))dlsym(RTLD_DEFAULT, "PyObject_SetArenaAllocator");
	if (!get_allocator || !set_allocator || !get_arena || !set_arena)
		return;
	m = hp_map(sizeof(*root) << ROOT_BITS, HP2_OWN_INDEX, MAP_NORESERVE);
	if (m == MAP_FAILED)
		return;
	root = m;
	windows = hp_opt.sample > 0;
	for (unsigned c = 0; c < NCLASSES; c++) {
		nslots[c] = (uint32_t)((POOL_SIZE - POOL_OVERHEAD) / ((uintptr_t)(c + 1) << CLASS_SHIFT));
		recip[c] = (((uint64_t)1 << 32) + c) / (c + 1);
	}
	get_arena(&orig_arena);
	set_arena(&arena);
	for (int d = DOMAIN_MEM; d <= DOMAIN_OBJ; d++) {
		get_allocator(d, &orig[d]);
		ours[d] = (struct py_allocator){ &orig[d], w_malloc, w_calloc, w_realloc, w_free };
		set_allocator(d, &ours[d]);
	}
}

void pymalloc_after_fork(void)
{
	__atomic_clear(&slab_lock, __ATOMIC_RELEASE);
}
