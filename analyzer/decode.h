/*
 * The block codec: decode the one candidate at an address (a v1 block, a v2 block, a
 * v2 stack, site, process, thread, region or event ring record) into a plain value, or
 * say why it is not one. Knows include/heapprof_format.h; knows nothing of scans,
 * totals or reports.
 */
#ifndef HP_DECODE_H
#define HP_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapprof_format.h"

struct image;
struct seg;

enum decode_reject {
	REJ_TRUNCATED,	/* header, record or pcs not wholly in the image */
	REJ_VERSION,	/* a format version this analyzer does not know */
	REJ_LAYOUT,	/* wsize, nframes, offset or shift impossible */
	REJ_FLAGS,	/* an incompatible flag this analyzer does not know */
	REJ_CHECK,	/* check value wrong: stale, copied or overwritten header */
	REJ_NREASONS
};
#define DECODE_OK REJ_NREASONS

enum decode_kind {
	DEC_NONE,	/* rejected */
	DEC_BLOCK,	/* a live block, v1 or v2 */
	DEC_STACK,	/* v2 stack record */
	DEC_SITE,	/* v2 site record */
	DEC_PROC,	/* v2 process record */
	DEC_THREAD,	/* v2 thread record */
	DEC_REGION,	/* v2 region record */
	DEC_RING,	/* v2 event ring (its header; the slots are read on demand) */
	DEC_MODULE,	/* v2 module record (a shared object dlclose unloaded) */
	DEC_TIMELINE,	/* v2 timeline (its header; samples read by timeline.c) */
	DEC_PEAK,	/* v2 peak table (its header; entries read by timeline.c) */
	DEC_MAPS,	/* v2 map table (its header; entries read by maps.c) */
	DEC_PYCODE,	/* a Python name record (read by address, from a stack's frames) */
	DEC_SLAB,	/* v2 slab table (its header; the blocks in its slots are read by
			 * decode_slab_blocks) */
	DEC_NKINDS
};

/* One live block as either version describes it. */
struct hp_block {
	uint64_t user;		/* the program's pointer */
	uint64_t size;		/* bytes the program asked for */
	unsigned version;	/* 1 or 2; 0: no header (scan.h's SCAN_UNTAGGED) */
	unsigned flags;		/* v1: hp_hdr.flags; v2: HP2_F_* */
	uint32_t site;		/* v2: site id, 0 = no stack taken; v1: 0 */
	uint32_t tid;		/* v1: allocating thread, 0 = unknown; v2: see the site */
	uint64_t birth_ns;	/* v1: monotonic ns, 0 = unknown */
	uint64_t age_ms;	/* v2: ms after the process record's start (decoded time) */
	unsigned shift;		/* v2: real block start is user - (16 << shift) */
	unsigned nframes;	/* v1: pcs below the header */
	const uint64_t *pcs;	/* v1: pcs[0] innermost, in the caller's decode_buf */
};

struct decoded_stack {
	uint64_t addr;		/* of w0 */
	uint32_t id;
	unsigned nframes;	/* <= HP2_MAX_FRAMES; a joined stack's: 0 until collect_join
				 * follows its parts (want then says how many) */
	unsigned flags;		/* HP2_STACK_* */
	const uint64_t *pcs;	/* in the caller's decode_buf */
	uint64_t ref;		/* HP2_STACK_PART: w4, its outer part's id; HP2_STACK_JOINED:
				 * w4, its native and Python parts' ids; else 0 */
	unsigned want;		/* HP2_STACK_JOINED: the words its parts must give */
};

/* A site's counters (w5..w9): as read, not checked. With sampling, calls and frees are
 * in units of 1/HP2_COUNT_ONE and every figure is an estimate. */
struct hp_counts {
	uint64_t calls, bytes;	/* allocation calls, bytes they asked for */
	uint64_t frees, freed;	/* frees (by this site's thread), bytes of those blocks */
	uint64_t time_ns;	/* HEAPPROF_TIME: wall time before the calls, summed */
};

struct decoded_site {
	uint64_t addr;
	uint32_t id, stack;
	uint32_t tid;		/* w3: the tid, or with HP2_P_SLOTS the thread slot, which the
				 * join turns into the tid holding it (0: none) */
	unsigned entry;		/* enum hp2_entry (unknown values kept as read) */
	unsigned flags;		/* w3 bits 48..63: the region id, 0 = none */
	bool have_counts;	/* false: the record's tail is cut off (counts all 0) */
	struct hp_counts counts;
};

struct hp_thread_rec {
	uint64_t addr;
	uint32_t slot;		/* w2: what sites name (process flag HP2_P_SLOTS), else tid */
	uint32_t tid;		/* the thread holding it, or that last did */
	unsigned state;		/* HP2_THREAD_LIVE or _ENDED; LIVE in records before slots */
	char name[25];		/* NUL-terminated; unprintable bytes as '?'; "" = none;
				 * " (ended)" after the name of a thread that ended */
	int64_t live;		/* w5: bytes allocated minus bytes freed */
};

struct hp_region_rec {
	uint64_t addr;
	uint32_t id;		/* 1..65535 */
	char name[32];		/* NUL-terminated; unprintable bytes as '?' */
};

/* An event ring's header: slots are read by decode_ring_events(). */
struct hp_ring_rec {
	uint64_t addr;
	uint32_t tid;
	uint32_t n;		/* slots: 1..2^24 */
	uint64_t written;	/* events written so far (not checked) */
};

/* One valid slot of a ring. */
struct hp_event {
	unsigned entry;		/* enum hp2_entry, HP2_ENTRY_FREE included */
	uint32_t site;		/* the block's site, 0 = none */
	uint64_t arg[2];	/* the arguments (pointer or size) */
	uint64_t result;	/* pointer, or posix_memalign's return value; 0 for free */
	uint64_t mono_ns;	/* CLOCK_MONOTONIC */
	uint64_t seq;		/* from 1 within its thread */
};

/* A timeline's header (w2..w5; samples follow at addr + HP2_TIMELINE_WORDS * 8). */
struct hp_timeline_rec {
	uint64_t addr;
	uint32_t n;		/* room: 1..HP2_TIMELINE_MAX samples of HP2_SAMPLE_WORDS */
	uint64_t held;		/* samples written (not checked: may exceed n) */
	uint64_t interval_ms;
	uint64_t writes;	/* odd: a write was under way */
};

/* A peak table's header (w2..w9; entries follow at addr + HP2_PEAK_WORDS * 8). */
struct hp_peak_rec {
	uint64_t addr;
	uint32_t n;		/* room: 1..HP2_PEAK_MAX entries */
	unsigned which;		/* 0 or 1 */
	uint64_t writes;	/* odd: being written; else 2 * the peaks taken */
	uint64_t ms, bytes, blocks, used, counter, step;
	uint64_t overflow;	/* stacks summed in the entry of stack id 0 (0: none, or a
				 * heapprof.so before it counted them) */
};

/* A slab table's header: slot i's block is at start + offset + i * stride. */
struct hp_slab_rec {
	uint64_t addr;
	uint64_t start;		/* never a block's own address */
	uint32_t offset;	/* 0..65535 */
	uint32_t stride;	/* 1..65535 */
	uint32_t n;		/* slots: 1..HP2_SLAB_MAX */
};

/* A map table's header (w2..w5; entries follow at addr + HP2_MAPS_WORDS * 8). */
struct hp_maps_rec {
	uint64_t addr;
	uint32_t n;		/* room: 1..HP2_MAPS_MAX entries */
	uint64_t used;		/* entries in use (not checked: may exceed n) */
	uint64_t writes;	/* odd: a change was under way */
	uint64_t lost;		/* calls not recorded */
};

struct hp_proc_rec {
	uint64_t addr;
	unsigned version, wsize, flags;
	uint32_t pid;
	uint64_t sample_period;	/* bytes; 0 = every block has a header */
	uint64_t start_mono_ns, start_real_ns;
	unsigned frame_limit;
	unsigned p_flags;	/* w6 bits 32..63: HP2_P_* */
};

struct hp_module_rec {
	uint64_t addr;
	uint64_t bias;		/* link_map l_addr when it was loaded */
	uint64_t text_start, text_end; /* its executable segment, [start, end) */
	unsigned flags;		/* HP2_MOD_* */
	unsigned build_id_len;	/* <= 24 */
	unsigned char build_id[24];
	const char *path;	/* NUL-terminated, in the caller's decode_buf */
};

struct decoded {
	enum decode_kind kind;
	union {
		struct hp_block block;
		struct decoded_stack stack;
		struct decoded_site site;
		struct hp_proc_rec proc;
		struct hp_thread_rec thread;
		struct hp_region_rec region;
		struct hp_ring_rec ring;
		struct hp_module_rec module;
		struct hp_timeline_rec timeline;
		struct hp_peak_rec peak;
		struct hp_slab_rec slab;
		struct hp_maps_rec maps;
	};
	/* when rejected: the version found (REJ_VERSION), and whether the candidate was
	 * only a v2 block tag (16-bit magic) whose check failed: noise, unless it reads
	 * as a damaged header (collect.c judges it) */
	unsigned other_version;
	bool tag_only;
	uint32_t tag_site;
	bool record_word;	/* ... and the word was a record's check, after its magic */
	bool tag_whole;		/* ... its flags and shift are a header's, its real block
				 * start in its segment */
	uint16_t tag_time;	/* ... its time code and HP2_F_* flags */
	uint8_t tag_flags;
};

/* Room for the pcs a decoded value points to. */
struct decode_buf {
	uint64_t pcs[HP2_MAX_FRAMES > HP_MAX_FRAMES ? HP2_MAX_FRAMES : HP_MAX_FRAMES];
	char path[HP2_MODULE_SIZE - 9 * 8];	/* a module record's path */
};

/* Where decode reads: seg (a window of the image, may be NULL) first, else img. */
struct decode_src {
	const struct image *img;
	const struct seg *seg;
};

/*
 * The candidate whose 8-aligned word at addr has the top 16 bits HP2_MAGIC16; word is
 * that word's value (target byte order already converted). Fills *out (kind DEC_NONE
 * when rejected) and returns DECODE_OK or the reason. Never reads outside the image.
 */
enum decode_reject decode_at(const struct decode_src *src, uint64_t addr, uint64_t word,
			     struct decode_buf *buf, struct decoded *out);

/*
 * The valid events of ring (decoded from src earlier), oldest first: at most max of
 * them, from the slot after the newest back to it. A slot is valid when its sequence
 * number is the one its position says (a slot being rewritten, or cut off, is skipped).
 * Returns how many went into out.
 */
size_t decode_ring_events(const struct decode_src *src, const struct hp_ring_rec *ring,
			  struct hp_event *out, size_t max);

/*
 * The live blocks in the slots of slab (decoded from src earlier) from slot *next on:
 * at most max into out (v2 blocks with no header: shift 0), *next moved past the slots
 * read (slab->n when all are). A slot word that cannot be a block's (size 0 or over the
 * stride, an unknown flag, bit 63) counts in *bad; slots past the image's end end the
 * table. Returns how many went into out.
 */
size_t decode_slab_blocks(const struct decode_src *src, const struct hp_slab_rec *slab,
			  uint32_t *next, struct hp_block *out, size_t max, uint64_t *bad);

/* Entry point names: "malloc", ..., "free"; "entry N" for unknown ones (in buf). */
const char *decode_entry_name(unsigned entry, char *buf, size_t size);

/* The v2 block weight of a sampled block of size bytes under sample period P bytes. */
double decode_sample_weight(uint64_t size, uint64_t period);

/* Reason text for a reject counter: "bad check value ...", ... */
const char *decode_reason(enum decode_reject r);

/* The 64-bit mask and value, as the host loads the target's bytes, of HP2_MAGIC16. */
void decode_magic16(bool big_endian, uint64_t *mask, uint64_t *value);

#endif
