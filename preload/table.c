/*
 * The stack table (see table.h). Records are bump-allocated from chunks mapped with
 * mmap (never freed, never malloc'd); chains of records hang from fixed arrays of
 * heads indexed by hash. A new record is written whole, its magic last, and then
 * published by one compare-and-swap of its chain's head: a reader either sees it
 * complete or not at all. Two threads inserting the same stack at once: the loser
 * finds the winner's record in the chain, kills its own (magic 0) and uses that one.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "options.h"
#include "table.h"
#include "threads.h"
#include "util.h"

#define CHUNK_FIRST ((size_t)64 << 10)	/* a region's first chunk; each next one twice */
#define CHUNK_SIZE ((size_t)1 << 20)	/* ... up to this */
#define HEAD_BITS 16
#define HEAD_BITS_SPARSE 12	/* sample points HP_REPLAY_SPARSE apart: few stacks */
#define CACHE_SIZE 256		/* per-thread direct-mapped cache of sites */

/* A region: records of one kind, bump-allocated in multiples of its alignment. */
struct chunk {
	size_t size;		/* bytes of data[] */
	size_t used;		/* taken atomically; may run past size */
	uint32_t index;		/* in chunks[]; 0: none (past CHUNKS_MAX) */
	_Alignas(64) unsigned char data[];
};

/*
 * A record's reference, 4 bytes where a pointer takes 8 (the directories hold one per
 * id): its chunk's index in chunks[] (bits 17..31) and its offset in the chunk's data in
 * words (0..16), so a chunk of more than 1 MiB of data, or past the 32767th, has records
 * with no reference (a caller then does without a directory entry). 0: none.
 */
#define REF_OFF_BITS 17
#define CHUNKS_MAX (1u << (32 - REF_OFF_BITS))
static struct chunk *chunks[CHUNKS_MAX];	/* 256 KiB of address space, 8 bytes a chunk used */
static uint32_t next_chunk = 1;

static uint32_t chunk_ref(const struct chunk *c, size_t off)
{
	if (!c->index || off / 8 >= 1u << REF_OFF_BITS)
		return 0;
	return c->index << REF_OFF_BITS | (uint32_t)(off / 8);
}

static void *ref_rec(uint32_t ref)
{
	struct chunk *c = ref ? chunks[ref >> REF_OFF_BITS] : NULL;

	return c ? c->data + (size_t)(ref & ((1u << REF_OFF_BITS) - 1)) * 8 : NULL;
}

struct region {
	struct chunk *cur;
	size_t align;
	unsigned own;		/* HP2_OWN_*: what the map table calls its chunks */
	size_t next;		/* the next chunk's size; 0: CHUNK_FIRST */
};

/* One region per kind of record, so that --memory can tell their bytes apart. */
static struct region stack_region = { .align = 8, .own = HP2_OWN_STACKS };
/* Sites are 80 bytes at 16 (a record's counters may share a cache line with the next
 * record's: a thread's sites are made mostly in a row, so mostly with its own) */
static struct region site_region = { .align = 16, .own = HP2_OWN_SITES };
static struct region name_region = { .align = 64, .own = HP2_OWN_NAMES };
static struct region rec_region = { .align = 64, .own = HP2_OWN_RECORDS };
static struct region timeline_region = { .align = 64, .own = HP2_OWN_TIMELINE };

/* n bytes of region r, and their reference in *ref (0: none; see chunk_ref) */
static void *region_alloc_ref(struct region *r, size_t n, uint32_t *ref)
{
	n = (n + r->align - 1) & ~(r->align - 1);
	for (;;) {
		struct chunk *c = __atomic_load_n(&r->cur, __ATOMIC_ACQUIRE), *fresh;
		size_t size = __atomic_load_n(&r->next, __ATOMIC_RELAXED);
		void *m;

		if (c) {
			size_t off = __atomic_fetch_add(&c->used, n, __ATOMIC_RELAXED);

			if (off <= c->size && n <= c->size - off) {
				*ref = chunk_ref(c, off);
				return c->data + off;
			}
		}
		/* Chunks grow from 64 KiB: a kind of record a small program writes little
		 * of takes little address space (under RLIMIT_AS, a limit's worth) */
		if (!size)
			size = CHUNK_FIRST;
		if (n > size - sizeof(struct chunk))
			size = (n + sizeof(struct chunk) + 4095) & ~(size_t)4095;
		m = hp_map(size, r->own, 0);
		if (m == MAP_FAILED)
			return NULL;
		fresh = m;
		fresh->size = size - sizeof(struct chunk);
		fresh->used = n;
		/* in chunks[] before it is published: a reference made from it is good */
		fresh->index = __atomic_fetch_add(&next_chunk, 1, __ATOMIC_RELAXED);
		if (fresh->index >= CHUNKS_MAX)
			fresh->index = 0;
		chunks[fresh->index] = fresh->index ? fresh : NULL;
		if (__atomic_compare_exchange_n(&r->cur, &c, fresh, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			if (size < CHUNK_SIZE)
				__atomic_store_n(&r->next, 2 * size < CHUNK_SIZE ? 2 * size :
						 CHUNK_SIZE, __ATOMIC_RELAXED);
			*ref = chunk_ref(fresh, 0);
			return fresh->data;
		}
		chunks[fresh->index] = NULL;
		munmap(m, size);	/* another thread installed a chunk first */
	}
}

static void *region_alloc(struct region *r, size_t n)
{
	uint32_t ref;

	return region_alloc_ref(r, n, &ref);
}

/* ---- records ------------------------------------------------------------------ */

struct proc_rec {
	uint64_t magic, check, w[6];
};

struct region_rec {
	uint64_t magic, check, w2;	/* w2: id */
	char name[32];
	uint64_t link;			/* private */
};

_Static_assert(sizeof(struct hp_site_rec) == HP2_SITE_SIZE, "site record");
_Static_assert(sizeof(struct region_rec) == HP2_REGION_SIZE, "region record");
_Static_assert(sizeof(struct proc_rec) == HP2_PROC_SIZE, "process record");
_Static_assert(sizeof(struct hp_stack_rec) == HP2_STACK_WORDS * 8, "stack record");

/* The chains' heads, references (chunk_ref), 256 KiB a table, of which a chain's first
 * record touches a page at random: when sampling leaves few stacks, only the first
 * 1 << HEAD_BITS_SPARSE heads are used (16 KiB), as head_shift says */
static uint32_t stack_heads[1u << HEAD_BITS];
static uint32_t site_heads[1u << HEAD_BITS];
static unsigned head_shift = 64 - HEAD_BITS;
static uint32_t next_stack_id = 1, next_site_id = 1;
static struct proc_rec *proc;
static uint64_t start_ns;
uint64_t table_start_ms;
bool table_parts = true;

static uint64_t rec_check(const void *rec, const uint64_t *w, unsigned nw,
			  const uintptr_t *pcs, unsigned npcs)
{
	uint64_t x = hp_mix(HP2_SEED, (uint64_t)(uintptr_t)rec);

	for (unsigned i = 0; i < nw; i++)
		x = hp_mix(x, w[i]);
	for (unsigned i = 0; i < npcs; i++)
		x = hp_mix(x, (uint64_t)pcs[i]);
	return hp_check_final(x);
}

void *table_alloc_record(size_t size, unsigned own)
{
	switch (own) {
	case HP2_OWN_NAMES: return region_alloc(&name_region, size);
	case HP2_OWN_TIMELINE: return region_alloc(&timeline_region, size);
	default: return region_alloc(&rec_region, size);
	}
}

uint64_t table_record_check(const void *rec, const uint64_t *w, unsigned nw)
{
	return rec_check(rec, w, nw, NULL, 0);
}

/* ---- ids to records: sites for free(), parts of stacks for their readers ---------- */

#define DIR_BITS 12
#define DIR_IDS (1u << (2 * DIR_BITS))		/* ids past this have no entry */
static uint32_t *site_dir[1u << DIR_BITS];	/* pages of 4096 references (chunk_ref) */
static uint32_t *part_dir[1u << DIR_BITS];

static bool dir_set(uint32_t **dir, uint32_t id, uint32_t ref)
{
	uint32_t **slot = &dir[(id >> DIR_BITS) & ((1u << DIR_BITS) - 1)];
	uint32_t *page = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (id >= DIR_IDS || !ref)
		return false;	/* past 16 million, or no reference: sites' frees go uncounted */
	if (!page) {
		uint32_t *fresh = hp_map(sizeof(*page) << DIR_BITS, HP2_OWN_INDEX, 0);

		if (fresh == MAP_FAILED)
			return false;
		if (__atomic_compare_exchange_n(slot, &page, fresh, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			page = fresh;
		else
			munmap(fresh, sizeof(*page) << DIR_BITS);
	}
	__atomic_store_n(&page[id & ((1u << DIR_BITS) - 1)], ref, __ATOMIC_RELEASE);
	return true;
}

static void *dir_get(uint32_t *const *dir, uint32_t id)
{
	uint32_t *page;

	if (id >= DIR_IDS)
		return NULL;
	page = __atomic_load_n(&dir[id >> DIR_BITS], __ATOMIC_ACQUIRE);
	return page ? ref_rec(__atomic_load_n(&page[id & ((1u << DIR_BITS) - 1)],
					      __ATOMIC_ACQUIRE)) : NULL;
}

/*
 * The key of a stack in the thread's cache and for the chain heads: private to this
 * process (never stored, nothing outside this file computes it), so it is chosen for
 * speed. It runs on every allocation over up to HEAPPROF_FRAMES pcs: four independent
 * multiply-xor lanes keep the chain of dependent multiplies n / 4 long instead of n
 * and take three instructions a pc instead of six; hp_mix then folds the lanes
 * together with the avalanche that the chain heads (top bits) and the cache (low
 * bits) both need.
 */
static uint64_t stack_hash(const uintptr_t *pcs, unsigned n, unsigned sflags)
{
	uint64_t a = HP_CHECK_SEED ^ n ^ (uint64_t)sflags << 32, b = HP2_SEED;
	uint64_t c = ~HP_CHECK_SEED, d = ~HP2_SEED;
	unsigned i = 0;

	for (; i + 4 <= n; i += 4) {
		a = (a ^ (uint64_t)pcs[i]) * HP_CHECK_MUL;
		b = (b ^ (uint64_t)pcs[i + 1]) * HP_CHECK_MUL;
		c = (c ^ (uint64_t)pcs[i + 2]) * HP_CHECK_MUL;
		d = (d ^ (uint64_t)pcs[i + 3]) * HP_CHECK_MUL;
	}
	for (; i < n; i++)
		a = (a ^ (uint64_t)pcs[i]) * HP_CHECK_MUL;
	return hp_check_final(hp_mix(hp_mix(hp_mix(hp_mix(HP_CHECK_SEED, a), b), c), d));
}

static unsigned stack_nframes(const struct hp_stack_rec *r)
{
	return (unsigned)(r->w2 >> 32) & 0xFFFF;
}

static unsigned stack_flags(const struct hp_stack_rec *r)
{
	return (unsigned)(r->w2 >> 48) & 0xFF;
}

/* ---- parts of stacks (HP2_STACK_PART) ------------------------------------------------ */

/* A part ends after a word whose mix has these 2 bits 0 (1 in 4), or at PART_MAX words:
 * content, not position, picks the ends, so a stack's outer parts are the same records
 * whatever lies inside them; the cap keeps a recursion's levels in parts its deeper
 * calls share. */
#define PART_MASK 3u
#define PART_MAX 8u
static uint32_t part_heads[1u << HEAD_BITS];	/* references (chunk_ref) */

/* Whether part id, with its outer parts, holds w[0..] from the start: the words it
 * holds, or UINT_MAX when it does not (or a part cannot be found). */
static unsigned part_match(uint32_t id, const uintptr_t *w, unsigned n)
{
	unsigned off = 0;

	while (id) {
		const struct hp_part_rec *p = dir_get(part_dir, id);
		unsigned k;

		if (!p || (k = (unsigned)(p->w2 >> 32 & 0xFFFF)) > n - off)
			return UINT_MAX;
		for (unsigned i = 0; i < k; i++)	/* a few words: inline */
			if (p->pcs[i] != w[off + i])
				return UINT_MAX;
		off += k;
		id = (uint32_t)p->w4;
	}
	return off;
}

/* The stack record r holds exactly pcs[0..n-1] with flags sflags. */
static bool stack_equal(const struct hp_stack_rec *r, const uintptr_t *pcs, unsigned n,
			unsigned sflags)
{
	const struct hp_part_rec *j = (const struct hp_part_rec *)r;
	unsigned k;

	if (stack_nframes(r) != n || (stack_flags(r) & ~HP2_STACK_JOINED) != sflags)
		return false;
	if (!(stack_flags(r) & HP2_STACK_JOINED))
		return !memcmp(r->pcs, pcs, n * sizeof(*pcs));
	k = part_match((uint32_t)j->w4, pcs, n);
	return k != UINT_MAX && part_match((uint32_t)(j->w4 >> 32), pcs + k, n - k) == n - k;
}

static bool part_equal(const struct hp_part_rec *p, uint32_t outer, const uintptr_t *w,
		       unsigned n)
{
	return (uint32_t)p->w4 == outer && (unsigned)(p->w2 >> 32 & 0xFFFF) == n &&
	       !memcmp(p->pcs, w, n * sizeof(*w));
}

/* The part of the chain from reference head down to (not including) stop. */
static struct hp_part_rec *part_find(uint32_t head, uint32_t stop, uint32_t outer,
				     const uintptr_t *w, unsigned n)
{
	for (uint32_t ref = head; ref != stop;) {
		struct hp_part_rec *p = ref_rec(ref);

		if (part_equal(p, outer, w, n))
			return p;
		ref = (uint32_t)p->link;
	}
	return NULL;
}

/* The id of the part of words w[0..n-1] (n >= 1) followed by part outer: found, or
 * stored (and in the directory before it is published); 0 without memory or ids. */
static uint32_t part_intern(uint32_t outer, const uintptr_t *w, unsigned n)
{
	uint64_t h = hp_mix(stack_hash(w, n, HP2_STACK_PART), outer);
	uint32_t *slot = &part_heads[h >> head_shift];
	uint32_t head = __atomic_load_n(slot, __ATOMIC_ACQUIRE), id, ref;
	struct hp_part_rec *p, *found;

	if ((found = part_find(head, 0, outer, w, n)))
		return (uint32_t)found->w2;
	p = region_alloc_ref(&stack_region, sizeof(*p) + n * sizeof(*w), &ref);
	if (!p)
		return 0;
	id = __atomic_fetch_add(&next_stack_id, 1, __ATOMIC_RELAXED);
	if (!dir_set(part_dir, id, ref))
		return 0;	/* the record stays unused, with no magic */
	p->w2 = id | (uint64_t)n << 32 | (uint64_t)HP2_STACK_PART << 48 |
		     (uint64_t)sizeof(uintptr_t) << 56;
	p->w4 = outer;
	memcpy(p->pcs, w, n * sizeof(*w));
	p->check = rec_check(p, (const uint64_t[]){ p->w2, p->w4 }, 2, w, n);
	p->magic = HP2_STACK_MAGIC;
	for (;;) {
		uint32_t seen = head;

		p->link = head;
		if (__atomic_compare_exchange_n(slot, &head, ref, false,
						__ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			return id;
		if ((found = part_find(head, seen, outer, w, n))) {
			*(volatile uint64_t *)&p->magic = 0;
			return (uint32_t)found->w2;
		}
	}
}

/* Whether a part ends after the unit (1 word, or a Python frame's 2) at w. */
static bool part_ends(const uintptr_t *w, unsigned unit)
{
	uint64_t x = hp_mix(HP2_SEED, (uint64_t)w[0]);

	if (unit == 2)
		x = hp_mix(x, (uint64_t)w[1]);
	return !((x >> 40) & PART_MASK);
}

/* The id of the innermost part of w[0..n-1] (innermost first), in units of unit words,
 * its parts stored from the outermost in; 0 for no words, or no memory (*ok false). */
static uint32_t parts_intern(const uintptr_t *w, unsigned n, unsigned unit, bool *ok)
{
	uint32_t outer = 0;
	unsigned end = n;

	while (end) {
		unsigned start = end, len = 0;

		do {
			unsigned u = start < unit ? start : unit;

			start -= u;
			len += u;
		} while (start && len < PART_MAX && !part_ends(w + start, unit));
		if (!(outer = part_intern(outer, w + start, len))) {
			*ok = false;
			return 0;
		}
		end = start;
	}
	return outer;
}

/* A joined stack for pcs[0..n-1]: its native words and its Python pairs in parts. NULL
 * without memory or ids: the caller then stores the stack whole. */
static struct hp_stack_rec *stack_joined(const uintptr_t *pcs, unsigned n, unsigned sflags,
					 uint32_t *ref)
{
	unsigned nn = 0;
	bool ok = true;
	uint32_t native, py;
	struct hp_part_rec *j;

	if (__atomic_load_n(&next_stack_id, __ATOMIC_RELAXED) >= DIR_IDS - 2 * HP2_MAX_FRAMES)
		return NULL;
	if (sflags & HP2_STACK_PYTHON)
		while (nn < n && !hp2_is_pyframe_word((uint64_t)pcs[nn]))
			nn++;
	else
		nn = n;
	native = parts_intern(pcs, nn, 1, &ok);
	py = ok ? parts_intern(pcs + nn, n - nn, 2, &ok) : 0;
	if (!ok || !(j = region_alloc_ref(&stack_region, sizeof(*j), ref)))
		return NULL;
	j->w2 = __atomic_fetch_add(&next_stack_id, 1, __ATOMIC_RELAXED) |
		     (uint64_t)n << 32 | (uint64_t)((sflags | HP2_STACK_JOINED) & 0xFF) << 48 |
		     (uint64_t)sizeof(uintptr_t) << 56;
	j->w4 = native | (uint64_t)py << 32;
	j->check = rec_check(j, (const uint64_t[]){ j->w2, j->w4 }, 2, NULL, 0);
	j->magic = HP2_STACK_MAGIC;
	return (struct hp_stack_rec *)j;
}

/* A whole stack record for pcs[0..n-1], its reference in *ref. */
static struct hp_stack_rec *stack_whole(const uintptr_t *pcs, unsigned n, unsigned sflags,
					uint32_t *ref)
{
	struct hp_stack_rec *r = region_alloc_ref(&stack_region, sizeof(*r) + n * sizeof(*pcs),
						  ref);

	if (!r)
		return NULL;
	r->w2 = __atomic_fetch_add(&next_stack_id, 1, __ATOMIC_RELAXED) | (uint64_t)n << 32 |
		(uint64_t)(sflags & 0xFF) << 48 |
		(uint64_t)sizeof(uintptr_t) << 56;
	memcpy(r->pcs, pcs, n * sizeof(*pcs));
	r->check = rec_check(r, &r->w2, 1, pcs, n);
	r->magic = HP2_STACK_MAGIC;
	return r;
}

/* Records of the chain from head down to (not including) stop that equal the stack. */
static struct hp_stack_rec *stack_find(uint32_t head, uint32_t stop, const uintptr_t *pcs,
				       unsigned n, unsigned sflags)
{
	for (uint32_t ref = head; ref != stop;) {
		struct hp_stack_rec *r = ref_rec(ref);

		if (stack_equal(r, pcs, n, sflags))
			return r;
		ref = (uint32_t)r->link;
	}
	return NULL;
}

/* Stacks of more than HP2_PART_MIN words go in parts, the rest whole; one that cannot
 * have its parts (no memory, ids past the directory's) goes whole. Either way a stack
 * has one record: which form is a function of its words. */
static struct hp_stack_rec *stack_intern(const uintptr_t *pcs, unsigned n, unsigned sflags,
					 uint64_t hash)
{
	uint32_t *slot = &stack_heads[hash >> head_shift];
	uint32_t head = __atomic_load_n(slot, __ATOMIC_ACQUIRE), ref = 0;
	struct hp_stack_rec *r = NULL, *found;

	if ((found = stack_find(head, 0, pcs, n, sflags)))
		return found;
	if (n > HP2_PART_MIN && table_parts)
		r = stack_joined(pcs, n, sflags, &ref);
	if (!r && !(r = stack_whole(pcs, n, sflags, &ref)))
		return NULL;
	if (!ref) {	/* past CHUNKS_MAX: it cannot be linked, as without memory */
		*(volatile uint64_t *)&r->magic = 0;
		return NULL;
	}
	for (;;) {
		uint32_t seen = head;

		r->link = head;
		if (__atomic_compare_exchange_n(slot, &head, ref, false,
						__ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			return r;
		/* Others got in first: only the records above the old head are new. */
		if ((found = stack_find(head, seen, pcs, n, sflags))) {
			*(volatile uint64_t *)&r->magic = 0;
			return found;
		}
	}
}

static bool site_equal(const struct hp_site_rec *s, uint32_t stack, uint32_t tid, unsigned entry)
{
	return (uint32_t)(s->w2 >> 32) == stack && s->w3 == ((uint64_t)tid | (uint64_t)entry << 32);
}

/* The site of the chain from reference head down to (not including) stop. */
static struct hp_site_rec *site_find(uint32_t head, uint32_t stop, uint32_t stack, uint32_t tid,
				     unsigned entry)
{
	for (uint32_t ref = head; ref != stop;) {
		struct hp_site_rec *s = ref_rec(ref);

		if (site_equal(s, stack, tid, entry))
			return s;
		ref = s->link;
	}
	return NULL;
}

uint32_t table_site_ids(void)
{
	return __atomic_load_n(&next_site_id, __ATOMIC_RELAXED);
}

const struct hp_site_rec *table_site_by_id(uint32_t id)
{
	return dir_get(site_dir, id);
}

/* ---- regions ------------------------------------------------------------------------ */

#define REGION_DEPTH 32
static struct region_rec *all_regions;
static uint32_t next_region_id = 1;
static HP_TLS uint16_t region_stack[REGION_DEPTH];
static HP_TLS unsigned region_depth;	/* may pass REGION_DEPTH: the rest keep the top */
HP_TLS unsigned table_region_entry;

static unsigned region_now(void)
{
	if (!region_depth)
		return 0;
	return region_stack[(region_depth < REGION_DEPTH ? region_depth : REGION_DEPTH) - 1];
}

static uint16_t region_id(const char *name)
{
	char key[sizeof(((struct region_rec *)0)->name)] = "";
	struct region_rec *head = __atomic_load_n(&all_regions, __ATOMIC_ACQUIRE), *r;
	uint32_t id;

	strncpy(key, name ? name : "", sizeof(key) - 1);
	for (;;) {
		for (r = head; r; r = (struct region_rec *)(uintptr_t)r->link)
			if (!memcmp(r->name, key, sizeof(key)))
				return (uint16_t)r->w2;
		id = __atomic_load_n(&next_region_id, __ATOMIC_RELAXED);
		if (id > 0xFFFF)
			return 0;	/* too many names: blocks carry no region */
		r = region_alloc(&rec_region, sizeof(*r));
		if (!r)
			return 0;
		id = __atomic_fetch_add(&next_region_id, 1, __ATOMIC_RELAXED);
		if (id > 0xFFFF)
			return 0;
		r->w2 = id;
		memcpy(r->name, key, sizeof(key));
		r->check = rec_check(r, &r->w2, 5, NULL, 0);
		r->link = (uint64_t)(uintptr_t)head;
		if (__atomic_compare_exchange_n(&all_regions, &head, r, false, __ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE)) {
			r->magic = HP2_REGION_MAGIC;
			return (uint16_t)id;
		}
		/* another name went in first: look again (this record stays unused) */
	}
}

void table_region_begin(const char *name)
{
	uint16_t id = region_id(name);

	if (region_depth < REGION_DEPTH)
		region_stack[region_depth] = id;
	region_depth++;
	table_region_entry = region_now() << 16;
}

void table_region_end(void)
{
	if (region_depth)
		region_depth--;
	table_region_entry = region_now() << 16;
}

/* ---- threads' slots (threads.h) --------------------------------------------------- */

/* The calling thread's slot (threads.h), from its first site to its end; then ended. */
static HP_TLS struct thread_slot *self;
static HP_TLS bool self_taking, self_ended;
HP_TLS uint32_t table_thread_slot;
/* &self->rec->live, or NULL: table_live_add() (table.h) adds to it inline */
HP_TLS int64_t *hp_thread_live;

/* ---- sites -------------------------------------------------------------------------- */

/* A new site of the calling thread's slot joins the slot's list, for slot_fold() (a
 * compare-and-swap: a signal handler on this thread may add one meanwhile). */
static void slot_add_site(struct hp_site_rec *s, uint32_t ref)
{
	uint32_t head = __atomic_load_n(&self->sites, __ATOMIC_RELAXED);

	do
		s->slot_link = head;
	while (!__atomic_compare_exchange_n(&self->sites, &head, ref, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED));
}

/* The site of (stack, thread slot, entry), made if new: slot is the calling thread's
 * (it then has self), or 0, the threads that ended. A site with no reference (chunks
 * past CHUNKS_MAX) cannot be linked: NULL, as without memory. */
static struct hp_site_rec *site_intern(uint32_t stack, uint32_t tslot, unsigned entry)
{
	uint64_t key = hp_mix(hp_mix(HP2_SEED, stack), (uint64_t)tslot | (uint64_t)entry << 32);
	uint32_t *slot = &site_heads[key >> head_shift];
	uint32_t head = __atomic_load_n(slot, __ATOMIC_ACQUIRE), ref;
	struct hp_site_rec *s, *found;

	if ((found = site_find(head, 0, stack, tslot, entry)))
		return found;
	/* at each new site of a thread, its record takes its name (one set by another
	 * thread, or by prctl, is seen here; pthread_setname_np on itself at once):
	 * before the site's magic is made, which prctl, variadic, could save on the stack */
	if (tslot)
		threads_name(self);
	s = region_alloc_ref(&site_region, sizeof(*s), &ref);
	if (!s || !ref)
		return NULL;
	s->w2 = __atomic_fetch_add(&next_site_id, 1, __ATOMIC_RELAXED) | (uint64_t)stack << 32;
	s->w3 = (uint64_t)tslot | (uint64_t)entry << 32;
	s->check = rec_check(s, &s->w2, 2, NULL, 0);
	s->magic = HP2_SITE_MAGIC;
	for (;;) {
		uint32_t seen = head;

		s->link = head;
		if (__atomic_compare_exchange_n(slot, &head, ref, false,
						__ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
			dir_set(site_dir, (uint32_t)s->w2, ref);
			if (tslot)
				slot_add_site(s, ref);
			return s;
		}
		if ((found = site_find(head, seen, stack, tslot, entry))) {
			*(volatile uint64_t *)&s->magic = 0;
			return found;
		}
	}
}

/* ---- the thread's caches ----------------------------------------------------------- */

struct cache_slot {
	uint64_t hash;
	const struct hp_stack_rec *stack;
	struct hp_site_rec *site;
	uint32_t entry;
};

/* Sites by stack for allocations, and by the allocating site for frees. */
static HP_TLS struct cache_slot cache[CACHE_SIZE];
HP_TLS struct table_free_slot hp_free_cache[TABLE_FREE_CACHE];

HP_TLS struct table_memo hp_table_memo[TABLE_MEMO];

/* ---- a thread's start and end ------------------------------------------------------ */

/* A thread with a slot holds it as its value of end_key, whose destructor tells
 * end_fn (table_on_thread_end) that the thread ends, then gives the slot back. */
static pthread_key_t end_key;
static bool end_key_made;
static void (*end_fn)(void);
static HP_TLS unsigned end_rounds;

void table_on_thread_end(void (*fn)(void))
{
	__atomic_store_n(&end_fn, fn, __ATOMIC_RELEASE);
}

/*
 * A slot taken over: the counts its sites hold are the ended thread's, and go to the
 * sites of slot 0 (the threads that ended) of the same stack, entry point and region,
 * which only such folds (and frees after a thread's end) write, atomically.
 */
static void slot_fold(struct thread_slot *s)
{
	struct hp_site_rec *x, *to;

	for (x = ref_rec(s->sites); x; x = ref_rec(x->slot_link)) {
		if (!x->calls && !x->frees && !x->time_ns)
			continue;
		to = site_intern((uint32_t)(x->w2 >> 32), 0, (unsigned)(x->w3 >> 32));
		if (!to)
			continue;	/* no memory: they stay, with the slot's next thread */
		__atomic_add_fetch(&to->calls, x->calls, __ATOMIC_RELAXED);
		__atomic_add_fetch(&to->bytes, x->bytes, __ATOMIC_RELAXED);
		__atomic_add_fetch(&to->frees, x->frees, __ATOMIC_RELAXED);
		__atomic_add_fetch(&to->freed, x->freed, __ATOMIC_RELAXED);
		__atomic_add_fetch(&to->time_ns, x->time_ns, __ATOMIC_RELAXED);
		x->calls = x->bytes = x->frees = x->freed = x->time_ns = 0;
	}
	threads_fold_live(s);
}

/* The calling thread's slot, taken at its first site; 0 when it has ended, or is
 * taking one (a signal handler's allocation meanwhile goes without a site), or no
 * memory could be had. */
static uint32_t thread_slot(void)
{
	struct thread_slot *s;
	bool reused;

	if (self)
		return table_thread_slot;
	if (self_ended || self_taking)
		return 0;
	self_taking = true;
	s = threads_take(hp_tid(), &reused);
	if (s && reused)
		slot_fold(s);
	self_taking = false;
	if (!s)
		return 0;
	self = s;
	table_thread_slot = (uint32_t)s->rec->slot;
	hp_thread_live = &s->rec->live;
	if (end_key_made)
		pthread_setspecific(end_key, s);	/* may allocate: self is set */
	return table_thread_slot;
}

/* The thread ends: nothing it holds may name the slot, which goes back for the next. */
static void thread_release(void)
{
	struct thread_slot *s = self;

	if (!s)
		return;
	/* the free cache is asked inline, before anything else: it must forget; the memo
	 * names the slot (table_site() compares it) and the site cache is read only with a
	 * slot, which the thread no longer gets */
	memset(hp_free_cache, 0, sizeof(hp_free_cache));
	self = NULL;
	table_thread_slot = 0;
	self_ended = true;
	hp_thread_live = NULL;
	threads_give_back(s);
}

/*
 * A key destructor of a thread that has a slot. Other keys' destructors may free
 * blocks after this one runs: it sets its value again, which takes the thread
 * through every round the C library allows, and acts in the last. A thread that ends
 * before start-up set end_fn keeps its slot: its counts still point at it.
 */
static void thread_key_end(void *slot)
{
	void (*fn)(void) = __atomic_load_n(&end_fn, __ATOMIC_ACQUIRE);

	if (++end_rounds < PTHREAD_DESTRUCTOR_ITERATIONS && pthread_setspecific(end_key, slot) == 0)
		return;
	if (!fn)
		return;
	fn();
	thread_release();
}

int64_t table_live_bytes(void)
{
	return threads_live_bytes();
}

void **table_thread_ring(void)
{
	return thread_slot() ? &self->ring : NULL;
}

void table_thread_named(void)
{
	if (self)
		threads_name(self);
}

struct hp_site_rec *table_ended_site(uint32_t id)
{
	const struct hp_site_rec *from;

	if (!self_ended || !(from = dir_get(site_dir, id)))
		return NULL;
	return site_intern((uint32_t)(from->w2 >> 32), 0, (unsigned)(from->w3 >> 32));
}


/*
 * Whether the cache's stack r (its hash equal to that of pcs) is pcs[0..n-1]. A stack
 * in parts is known by its 64-bit hash, its nframes and flags, as the memo knows Python
 * words by theirs: walking its parts on every allocation that misses the memo cost a
 * Python program 8% of its time. The table itself compares every word (stack_find).
 */
static bool cache_equal(const struct hp_stack_rec *r, const uintptr_t *pcs, unsigned n,
			unsigned sflags)
{
	if (stack_flags(r) & HP2_STACK_JOINED)
		return stack_nframes(r) == n && (stack_flags(r) & ~HP2_STACK_JOINED) == sflags;
	return stack_equal(r, pcs, n, sflags);
}

/*
 * The site of (pcs, this thread, entry, region). The memo of a walk seen before names
 * the stack record of exactly these words (the same native walk, the same Python
 * words: table_memo_find_py compared their hash), so no hash and no comparison.
 */
struct hp_site_rec *table_site_slow(const uintptr_t *pcs, unsigned n, unsigned sflags,
				    uint32_t tslot, unsigned entry, uint64_t walk, uint64_t py,
				    const struct table_memo *m)
{
	const struct hp_stack_rec *known = m ? m->stack : NULL;
	uint64_t h;
	struct cache_slot *c;
	const struct hp_stack_rec *r;
	struct hp_site_rec *site;

	if (!tslot && !(tslot = thread_slot()))
		return NULL;	/* ended, or no memory for a slot */

	/* entry holds the region (table_site); a memo that held the site was taken there */
	h = known ? m->hash : stack_hash(pcs, n, sflags);
	c = &cache[(h ^ entry * 0x9E3779B9u) % CACHE_SIZE];
	if (c->hash == h && c->entry == entry && c->stack &&
	    (known ? c->stack == known : cache_equal(c->stack, pcs, n, sflags))) {
		site = c->site;
	} else {
		r = known ? known : stack_intern(pcs, n, sflags, h);
		if (!r)
			return NULL;
		site = site_intern((uint32_t)r->w2, tslot, entry);
		if (!site)
			return NULL;
		*c = (struct cache_slot){ h, r, site, entry };
	}
	if (walk)
		*table_memo_of(walk) = (struct table_memo){ walk, py, c->stack, site, h, tslot,
							    entry };
	return site;
}

uint32_t table_stack_id(const uintptr_t *pcs, unsigned n, unsigned sflags)
{
	const struct hp_stack_rec *r = stack_intern(pcs, n, sflags, stack_hash(pcs, n, sflags));

	return r ? (uint32_t)r->w2 : 0;
}

uint64_t table_words_hash(const uintptr_t *w, unsigned n)
{
	return n ? stack_hash(w, n, 0) | 1 : 0;
}

/* A miss of table_free_site(). NULL from a thread that ended: counters_free() then
 * asks table_ended_site(). */
struct hp_site_rec *table_free_site_slow(uint32_t id)
{
	struct table_free_slot *f = table_free_slot_of(id);
	const struct hp_site_rec *from;
	struct hp_site_rec *mine;
	uint32_t tslot;

	from = dir_get(site_dir, id);
	if (!from || !(tslot = thread_slot()))
		return NULL;
	if ((uint32_t)from->w3 == tslot) {
		mine = (struct hp_site_rec *)from;	/* freed in the slot that made it */
	} else {
		/* the same stack, entry point and region, this thread */
		mine = site_intern((uint32_t)(from->w2 >> 32), tslot, (unsigned)(from->w3 >> 32));
		if (!mine)
			return NULL;
	}
	*f = (struct table_free_slot){ id, mine };
	return mine;
}

/* ---- the process record ----------------------------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void proc_seal(void)
{
	proc->w[0] = HP2_FORMAT_VERSION | (uint64_t)sizeof(uintptr_t) << 16 |
		     (uint64_t)(uint32_t)getpid() << 32;
	proc->check = rec_check(proc, proc->w, 6, NULL, 0);
	proc->magic = HP2_PROC_MAGIC;
}

void table_init(uint64_t sample_period, unsigned max_frames, unsigned flags)
{
	end_key_made = pthread_key_create(&end_key, thread_key_end) == 0;
	start_ns = hp_now_ns();
	table_start_ms = start_ns / 1000000u;
	if (sample_period >= HP_REPLAY_SPARSE)
		head_shift = 64 - HEAD_BITS_SPARSE;
	proc = region_alloc(&rec_region, sizeof(*proc));
	if (!proc)
		return;
	proc->w[1] = sample_period;
	proc->w[2] = start_ns;
	proc->w[3] = clock_ns(CLOCK_REALTIME);
	proc->w[4] = max_frames | (uint64_t)(flags | HP2_P_SLOTS) << 32;
	proc_seal();
}

void table_after_fork(void)
{
	/* The calling thread keeps its slot under its new tid; the other threads are not
	 * in the child: their slots are free for its next threads */
	threads_after_fork(self, hp_tid());
	if (proc)
		proc_seal();
}
