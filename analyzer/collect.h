/*
 * The consumer of decoded values (decode.h): v1 blocks go to per-stack totals at
 * once, v2 blocks to per-site totals, records to a list. One collect per scanning
 * thread, merged; then collect_join() turns sites into stacks through the records.
 */
#ifndef HP_COLLECT_H
#define HP_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "stacks.h"

struct u64vec {
	uint64_t *v;
	size_t n, cap;
};

/* Pending v2 blocks (collect.c): a piece of words, never moved. */
struct pend_piece {
	void *mem;			/* what to free */
	uint64_t *v;
	size_t n, cap;
};

/* The v2 blocks of one site id, as found (before any weighting). */
struct site_agg {
	uint32_t id;
	bool used;
	uint64_t bytes, blocks;		/* not sampled: exact; bytes saturate */
	struct u64vec sizes;		/* every block's size */
	struct u64vec sampled;		/* the sizes of the sampled ones */
	size_t pending;			/* its blocks in pend (collect_count_pending) */
};

/* How the join keys and filters what it adds (the default, all zero: per stack, all). */
struct collect;

struct join_opts {
	bool by_thread;		/* split stacks per thread: v2 the site's tid, v1 the header's */
	const char *region;	/* keep only the sites of the region of this name */
	/* scan.h's scan calls found(c, found_arg) once its threads are done, before the
	 * join, with every record it found in c (not yet sorted); NULL: not at all */
	void (*found)(const struct collect *c, void *arg);
	void *found_arg;
	uint64_t taken_mono_ns;	/* when the dump was taken (image.h; the scan sets it):
				 * the join's now, with a process record; 0: unknown */
};

struct collect {
	struct join_opts opts;		/* set before the first collect_add */
	struct stacks stacks;		/* v1 blocks now; v2 ones after the join */
	struct site_agg *sites;		/* open-addressed by id */
	struct {			/* v2 blocks not yet filed under their site (collect.c): */
		struct pend_piece *v;	/* size | site id << 32 each, as the scan met them */
		size_t n, cap;
		bool counted;		/* in the sites' pending counts already */
	} pend;
	size_t nsites, sites_cap;
	struct decoded *recs;		/* valid records; stack pcs are owned copies */
	size_t nrecs, recs_cap;
	struct u64vec bad_tags;		/* v2 tags whose check failed: site id | time code
					 * << 32 | flags << 44 | BAD_TAG_WHOLE | BAD_TAG_DATA
					 * (collect.c) */
	struct hp_module_rec *mods;	/* module records (paths owned), by address after
					 * the join */
	size_t nmods, mods_cap;
	size_t kind_lo[DEC_NKINDS], kind_hi[DEC_NKINDS]; /* recs of a kind, once sorted */
	uint64_t v1_left_out;		/* v1 blocks --region left out (they have no site) */
	uint64_t newest_ms;		/* the latest v2 block time seen (ms after the start) */
	bool timed;			/* a v2 block was seen: newest_ms is one's */
	bool site_tids;			/* the site records name tids, no longer slots: a
					 * join has mapped them (collect.c's sites_to_tids) */
};

/* What the join found; all counts in blocks as found unless said otherwise. */
struct join_info {
	uint64_t unknown_blocks, unknown_bytes;	/* under [unknown stack] */
	uint64_t sampled_blocks;	/* blocks flagged HP2_F_SAMPLED */
	bool unweighted;		/* ... counted one for one: no process record */
	bool have_proc;
	struct hp_proc_rec proc;	/* the lowest-addressed process record */
	unsigned nprocs;		/* process records found */
	bool procs_differ;		/* some disagree with proc */
	uint64_t damaged;		/* v2 tags with a bad check that read as a header of a
					 * known site (collect_join) */
	uint64_t noise;			/* the other v2 tags with a bad check */
	enum join_now { NOW_NONE, NOW_NEWEST, NOW_TAKEN } now_from;
	uint64_t now_ms;		/* the dump's now, ms after the process start: when it
					 * was taken (opts.taken_mono_ns), else the newest v2
					 * block's time; 0 with NOW_NONE */
	uint64_t stack_recs, site_recs;	/* distinct ids read */
	uint64_t conflicts;		/* ids claimed by two different records */
	uint64_t broken_stacks;		/* joined stacks whose parts could not be followed */
	uint64_t thread_recs, region_recs, rings; /* distinct ids (tids) read */
	uint64_t counted_sites;		/* site records whose counters were added */
	bool sampled_counts;		/* counters are estimates (process w3 > 0) */
	bool have_time;			/* process flag HP2_P_TIME: w9 holds time */
	bool region_unknown;		/* opts.region names no region record */
	uint32_t region_id;		/* opts.region's id */
	uint64_t left_out_blocks;	/* live blocks outside opts.region, as found */
};

void collect_init(struct collect *c);
/* collect_init, then from's options and a copy of each of its records: a collect that
 * joins other blocks with the records one scan found (from: scan_result.found). */
void collect_init_records(struct collect *c, const struct collect *from);
/* Take one decoded value (DEC_BLOCK or a record); copies what it keeps. */
void collect_add(struct collect *c, const struct decoded *d);
/* A v2 tag that failed its check (d: REJ_CHECK, tag_only) as one word, and that word
 * kept to tell damage from noise at the join; data: where it lies no header can (the
 * user bytes of a block whose header is whole, a thread's stack: scan.c), so it is
 * noise whatever it reads as. */
uint64_t collect_bad_tag_word(const struct decoded *d);
void collect_bad_tag(struct collect *c, uint64_t word, bool data);
/* Count the pending blocks under their sites (the first half of filing them), where
 * the scan's threads can do it side by side. */
void collect_count_pending(struct collect *c);
/* Move everything of from into into; from is left empty but initialized. */
void collect_merge(struct collect *into, struct collect *from);
/*
 * Turn the v2 sites into stacks (in c->stacks) through the records; blocks whose
 * records are missing, damaged or ambiguous go to the [unknown stack]. Deterministic:
 * the result does not depend on the order values were added or merged in.
 */
void collect_join(struct collect *c, struct join_info *out);
/* After the join: the sorted records of kind (lowest address first within an id); *n
 * gets how many. Valid until collect_free(). */
const struct decoded *collect_records(const struct collect *c, enum decode_kind kind, size_t *n);
/* After the join: the name of thread tid, or NULL (none, or no name): a live thread's
 * record, else that of a thread that ended ("name (ended)"). Of several records for one
 * tid the lowest-addressed one wins. */
const char *collect_thread_name(const struct collect *c, uint32_t tid);
/* After the join: the stack record that site id leads to, or NULL (missing, damaged or
 * ambiguous records). */
const struct decoded_stack *collect_site_stack(const struct collect *c, uint32_t site);
/* After the join: site id's record (its thread, region) and its stack, or NULL. */
const struct decoded_site *collect_site(const struct collect *c, uint32_t id,
				       const struct decoded_stack **stack);
/* After the join: the stack record of id (a free's in an event ring), or NULL. */
const struct decoded_stack *collect_stack(const struct collect *c, uint32_t id);
void collect_free(struct collect *c);

#endif
