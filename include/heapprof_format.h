/*
 * heapprof block formats: the only contract between what writes block headers
 * (heapprof.so, a firmware port of preload/hp_tag.c) and heapprof-analyze.
 * docs/FORMAT.md describes the same bytes for porters. C99, no dependencies.
 *
 * Version 2 (heapprof.so): a 16-byte header names a site; sites and stacks are
 * records in tables of their own (HP2_* below). Version 1 (firmware ports, old
 * cores): a self-contained header that holds its stack:
 *
 *   | pad | pc[0] pc[1] .. pc[nframes-1] | struct hp_hdr (48 bytes) | user bytes ...
 *   ^ real block start                                             ^ user pointer
 *   |<----------------------------- offset ----------------------->|
 *
 * Every field is stored in the target's byte order. A pc[] entry is one target word
 * (wsize = 4 or 8 bytes). pc[0] is the innermost frame, the return address into the
 * function that called malloc; pc[nframes-1] is the outermost caller recorded.
 * The magic is the last field, at user - 8, and that address is a multiple of 8: a
 * scanner finds every header by testing each 8-aligned 64-bit word of memory.
 */
#ifndef HEAPPROF_FORMAT_H
#define HEAPPROF_FORMAT_H

#include <stdint.h>

#define HP_FORMAT_VERSION 1
#define HP_MAGIC 0xA3E1F7C95B0D6E4BULL	/* live block; free() stores 0 over it */
#define HP_HDR_SIZE 48			/* sizeof(struct hp_hdr), same on every target */
#define HP_MAX_FRAMES 64		/* nframes never exceeds this */

/*
 * Flags. The low 16 bits are compatible: an analyzer that does not know one may
 * ignore it. The high 16 bits change how the block must be read: an analyzer must
 * reject a block carrying one it does not know. Version 1 defines none of either;
 * writers store 0. (Reserved for sampling weights, leak marks, and so on.)
 */
#define HP_FLAGS_INCOMPAT_MASK 0xFFFF0000u
#define HP_FLAGS_KNOWN 0u

struct hp_hdr {
	uint64_t check;		/* hp_check() of everything below and the pcs: binds the
				 * header to its address, so a copy or a stale header
				 * left in reused memory does not validate */
	uint64_t size;		/* bytes the program asked for */
	uint64_t birth;		/* allocation time, ns of a monotonic clock; 0 = unknown */
	uint32_t offset;	/* user pointer minus real block start, bytes;
				 * >= HP_HDR_SIZE + nframes * wsize */
	uint32_t tid;		/* allocating thread (Linux: gettid()); 0 = unknown */
	uint16_t version;	/* HP_FORMAT_VERSION */
	uint8_t nframes;	/* pcs stored below this header; 0 if no stack was taken */
	uint8_t wsize;		/* bytes per pc: 4 or 8 (the target's pointer size) */
	uint32_t flags;		/* HP_FLAGS_*, 0 in version 1 */
	uint64_t magic;		/* HP_MAGIC while the block is live */
};

_Static_assert(sizeof(struct hp_hdr) == HP_HDR_SIZE, "hp_hdr layout");

/*
 * The check value. Every input is taken as a number (after byte-order conversion),
 * so a big-endian target and a little-endian analyzer compute the same value:
 *
 *   h = HP_CHECK_SEED
 *   h = hp_mix(h, user)                 user pointer, zero-extended to 64 bits
 *   h = hp_mix(h, size)
 *   h = hp_mix(h, birth)
 *   h = hp_mix(h, offset | tid << 32)
 *   h = hp_mix(h, version | nframes << 16 | wsize << 24 | flags << 32)
 *   h = hp_mix(h, pc[i])                for i = 0 .. nframes-1, zero-extended
 *   check = h ^ (h >> 31)
 */
#define HP_CHECK_SEED 0x6A09E667F3BCC909ULL
#define HP_CHECK_MUL 0x9E3779B97F4A7C15ULL

static inline uint64_t hp_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= HP_CHECK_MUL;
	return h ^ (h >> 29);
}

static inline uint64_t hp_check_head(uint64_t user, const struct hp_hdr *h)
{
	uint64_t x = HP_CHECK_SEED;

	x = hp_mix(x, user);
	x = hp_mix(x, h->size);
	x = hp_mix(x, h->birth);
	x = hp_mix(x, (uint64_t)h->offset | (uint64_t)h->tid << 32);
	x = hp_mix(x, (uint64_t)h->version | (uint64_t)h->nframes << 16 |
			      (uint64_t)h->wsize << 24 | (uint64_t)h->flags << 32);
	return x;
}

static inline uint64_t hp_check_final(uint64_t x)
{
	return x ^ (x >> 31);
}

/*
 * ---------------------------------------------------------------------------------
 * Version 2. Every word below is a 64-bit unsigned integer in the target's byte
 * order; pcs are target words. Ten kinds of records (stack, site, thread, region,
 * module, event ring, timeline, peak table, slab table, process), found by their 64-bit
 * magics at 8-aligned addresses, and the block header, found by a 16-bit magic:
 * every magic of both versions has the same top 16 bits (HP2_MAGIC16), so one
 * masked compare per word finds all candidates.
 *
 * Block header, the 16 bytes right below the user pointer:
 *
 *   user - 16  info = size (bits 0..31) | site id (bits 32..63)
 *   user -  8  tag  = check (0..26) | time (27..38) | shift (39..43) |
 *                     flags (44..47) | HP2_MAGIC16 (48..63)
 *
 *   The real block starts at user - (16 << shift). size 0xFFFFFFFF with flag BIG:
 *   the size is the word at user - 24 (shift >= 1). time: ms since the process
 *   record's start, as a 12-bit float (hp2_time_encode). site 0: no stack taken.
 *
 * Stack record (32 bytes + pcs, 8-aligned, length rounded up to 8):
 *   w0 HP2_STACK_MAGIC  w1 check
 *   w2 id (0..31) | nframes (32..47) | flags (48..55) | wsize (56..63)
 *   w3 writer's private link (not checked; ignore)
 *   then nframes target words, pc[0] innermost. Each is a return address, which a
 *   reader names by pc - 1; a frame entered through a signal (the interrupted
 *   instruction, and the signal trampoline) is stored as its address + 1, so that
 *   the same pc - 1 names it.
 *   A stack of more than HP2_PART_MIN words is stored in parts, so that stacks which
 *   share their outer frames share their records (flags below; the check covers w4):
 *   - a part (flag HP2_STACK_PART) holds nframes >= 1 words, then w4 (before its
 *     words: 40 bytes + words) the id of its outer part (0..31; 0: none, it ends the
 *     stack). Its words are followed, outward, by its outer part's, and so on. No
 *     site names a part.
 *   - a joined stack (flag HP2_STACK_JOINED, 40 bytes, no words of its own): w4 the id
 *     of the innermost part of its native words (0..31) | of its Python words
 *     (32..63); 0 names no part (no such words). Its words are the first part's and
 *     its outer parts', then the second's, nframes in all.
 *   A reader that cannot follow a joined stack's parts to exactly nframes words (a
 *   part missing, damaged, claimed twice, or a chain that runs on) knows no stack
 *   for it.
 *   Where parts end is the writer's choice: heapprof.so ends one after a word its
 *   content picks (1 in 4) or at 8 words, counting from the outermost, so that
 *   stacks sharing their outer frames share those parts' records.
 *
 * Site record (80 bytes; 96 with w10 the slot's link and w11 reserved in dumps of
 * heapprof.so before both links went in w4, 128 with w10..w14 reserved and w15 the
 * link before stack parts): one per (thread slot, stack, entry point)
 *   w0 HP2_SITE_MAGIC   w1 check
 *   w2 id (0..31) | stack id (32..63)
 *   w3 slot (0..31; the tid without process flag HP2_P_SLOTS; 0: the threads that
 *      ended, summed) | entry (32..47, HP2_ENTRY_*) | region id (48..63, 0 = none)
 *   w4 writer's private links (not checked)
 *   counters, written by the slot's thread alone (slot 0: atomic adds), not checked
 *   (they change):
 *   w5 allocation calls by this thread at this stack and entry point
 *   w6 bytes those calls asked for
 *   w7 frees by this thread of blocks allocated at this stack and entry point
 *   w8 bytes of those blocks
 *   w9 ns of wall-clock time since the thread's previous allocation call, summed
 *      (HEAPPROF_TIME=1; process flag HP2_P_TIME); a thread's first call adds 0
 *   With sampling (process w3 > 0) they are estimates: each sampled call adds its
 *   weight w = 1 / (1 - exp(-size / P)), calls and frees in units of 1/HP2_COUNT_ONE
 *   (round(w * HP2_COUNT_ONE)), bytes in bytes (round(size * w)).
 *
 * Thread record (64 bytes): one per thread slot. A thread takes a slot at its first
 * site and gives it back at its end; 16 ends later a new thread may take it over, its
 * sites' counts first moved to slot 0's: slots are as many as threads alive at once,
 * and 16.
 *   w0 HP2_THREAD_MAGIC   w1 check (of w2)
 *   w2 slot (0..31; the tid without process flag HP2_P_SLOTS)
 *   w3, w4 the name of the thread holding it or that last did, NUL-padded (prctl
 *   PR_GET_NAME), not checked
 *   w5 bytes it allocated minus bytes it freed (signed), w6 private link
 *   w7 that thread's tid (0..31) | HP2_THREAD_LIVE or _ENDED (32..39); 0 without
 *   HP2_P_SLOTS (not checked)
 *
 * Region record (64 bytes): a name given to heapprof_region_begin()
 *   w0 HP2_REGION_MAGIC   w1 check (of w2..w6)
 *   w2 region id (1..65535)   w3..w6 the name, NUL-padded, cut at 31 bytes
 *   w7 private link (not checked)
 *
 * Module record (384 bytes): a shared object that was unloaded (dlclose) while the
 * process ran, so that frames in it can still be symbolized from a later dump
 *   w0 HP2_MODULE_MAGIC   w1 check (of w2..w47)
 *   w2 load bias (link_map l_addr)   w3, w4 its executable segment [start, end)
 *   w5 flags (0..7: HP2_MOD_*) | build-id length (8..15, at most 24)
 *   w6..w8 the build-id bytes   w9..w47 its path, NUL-padded, cut at 311 bytes
 *
 * Event ring (HEAPPROF_EVENTS=N): one per thread slot (its thread's, rewritten by a thread
 * taking the slot over), the last N allocator calls
 *   w0 HP2_RING_MAGIC   w1 check (of w2)
 *   w2 tid (0..31) | N (32..63)
 *   w3 events written so far (the next goes to slot w3 % N), not checked
 *   then N slots of 6 words, written in place, not checked:
 *     s0 entry (0..7, HP2_ENTRY_*) | site id of the block (32..63; 0 none)
 *     s1, s2 the arguments (pointer or size; the second 0 if none); free: s2 is the
 *        id of the stack record of the free's own call (0 none), s0 the freed
 *        block's site
 *     s3 the result (pointer, or posix_memalign's return value; 0 for free)
 *     s4 ns of CLOCK_MONOTONIC   s5 sequence number in the thread, from 1
 *   A slot is valid when s5 is its sequence number; the writer stores s5 last.
 *
 * Timeline record (64 bytes + N samples of 5 words; HEAPPROF_TIMELINE=N): one per
 * process, live memory over its whole life
 *   w0 HP2_TIMELINE_MAGIC   w1 check (of w2)
 *   w2 N, the samples it has room for (0..31, 4..2^20) | words per sample (32..39, 5)
 *   w3 samples held (1..N)   w4 ms between samples now (doubles at each merge)
 *   w5 writes so far, odd while one is under way   w6, w7 reserved (0)
 *   (w3..w7 and the samples change: not checked)
 *   then N samples of 5 words, oldest first, the first taken at the process start:
 *     s0 ms since the process record's start   s1 live bytes (signed)
 *     s2 live blocks (signed)   s3 allocation calls so far   s4 bytes they asked for
 *   A sample is taken by an allocating thread once w4 ms have passed since the last
 *   one, and at each new peak (see the peak table): within w4 ms of the last sample a
 *   new one replaces it only if it holds more live bytes. When all N are used, sample
 *   0 stays and each pair after it (1 and 2, 3 and 4, ...) becomes the one of the two
 *   with the more live bytes, so the timeline always covers the whole life and its
 *   highest sample is never merged away. The figures are the process's counters,
 *   which each thread updates when its live bytes have moved 64 KiB, at its first
 *   allocation once a sample is due, and when it ends: live figures within 64 KiB per
 *   live thread of the truth. Blocks and calls are in units of 1/HP2_COUNT_ONE and every figure an
 *   estimate when the process samples (process w3 > 0).
 *
 * Peak table (128 bytes + E entries of 3 words; two per process, written in turn, E
 * from 8192 on, a new pair of twice or more when the stacks live at a peak need it):
 * the live memory per stack at the highest point live memory reached so far
 *   w0 HP2_PEAK_MAGIC   w1 check (of w2)
 *   w2 E, entries it has room for (0..31) | which of the two (32..39: 0 or 1)
 *   w3 peaks written so far (both records count the same series), odd while this
 *      record is being written: take the even one with the higher w3
 *   w4 ms since the process record's start of the peak
 *   w5 live bytes at the peak: the sum of the entries' bytes, exactly
 *   w6 live blocks at the peak: the sum of the entries' blocks, exactly
 *   w7 entries used (0..E)   w8 the process's live bytes counter when it was taken
 *   w9 the step in force (bytes)   w10 stacks summed in the entry of stack id 0
 *   (0: none, or not counted)   w11..w15 reserved (0)   (w3..w15 not checked)
 *   then E entries of 3 words, the first w7 of them used:
 *     e0 stack id (0..31; 0: the w10 stacks that did not fit, summed) | region (48..63)
 *     e1 live bytes (signed): bytes minus freed over the stack's sites in that region
 *     e2 live blocks (signed): calls minus frees, in the sites' units
 *   A peak is taken when the live bytes counter passes the last peak by the step:
 *   max(HEAPPROF_PEAK_STEP, 1% of the last peak), unless its entries add up to less
 *   than the last one's. Entries with 0 bytes and 0 blocks are left out.
 *
 * Slab table (32 bytes + N slot words, 8-aligned): the blocks of an allocator that
 * heapprof names out of band, where a header would change the allocator's own block
 * sizes (CPython's object allocator, pymalloc: one table per pool). Blocks of one size
 * class lie at a fixed stride from a start address; the table gives each slot a word
 *   w0 HP2_SLAB_MAGIC   w1 check (of w2, w3)
 *   w2 start: the address the slots count from (a pymalloc pool, whose header comes
 *      first), never a block's own address
 *   w3 offset of slot 0's block from start (0..15) | stride in bytes (16..31, >= 1) |
 *      N, the slots (32..63, 1..HP2_SLAB_MAX)
 *   then N slot words, written in place, not checked: slot i's block is the one at
 *   start + offset + i * stride, and its word is
 *     0                    no live block recorded there
 *     else site id (0..31, 0: no stack taken) | size (32..47, 1..stride) |
 *          time (48..59, as a block header's) | flags (60..62: HP2_F_SAMPLED) | 0 (63)
 *   Bit 63 is 0, so no slot word carries the magics' top 16 bits. A live slot is a v2
 *   block in every other way (site, sampling weight, time), with no header in its
 *   memory. When the allocator hands the run to another size class, the writer zeroes
 *   w0 before it writes a table for the run again.
 *
 * Map table (64 bytes + N entries of 3 words; HEAPPROF_MAPS=N; one per process): the
 * anonymous mappings made through the process's mmap, mmap64 and mremap while heapprof
 * was loaded, each with the stack that made it, and heapprof's own mappings. Memory
 * the C library maps itself (malloc's heaps and big chunks, thread stacks) and the
 * loader's never pass through these calls and are not in it.
 *   w0 HP2_MAPS_MAGIC   w1 check (of w2)
 *   w2 N, the entries it has room for (0..31, 1..HP2_MAPS_MAX) | words per entry
 *      (32..39, 3)
 *   w3 entries used (0..N)   w4 changes so far, odd while one is under way
 *   w5 calls whose effect it could not record (table full; a signal handler that
 *      mapped while its thread was changing the table)   w6, w7 reserved (0)
 *   (w3..w7 and the entries change: not checked)
 *   then N entries of 3 words, the first w3 of them used, sorted by start, highest
 *   first (the kernel maps top-down: a new mapping mostly goes last), none overlapping
 *   the next:
 *     e0 start (page-aligned)   e1 end: one past the last byte (page-aligned)
 *     e2 stack id (0..31; 0: no stack) | origin (32..39: HP2_MAP_*) |
 *        flags (40..47: HP2_MAPF_*)
 *   Origin 2 (HP2_MAP_HEAPPROF): e2's bits 0..31 name what heapprof keeps there,
 *   HP2_OWN_* (0: not said, as in dumps before these names). 15 (HP2_OWN_SNAPSHOT) is
 *   never written, and a reader takes it as 0: what a snapshot maps (the page the
 *   process shares with an asynchronous writer, the list of its threads, the writer's
 *   own scratch) is mapped by the system call itself, not through the table, since a
 *   snapshot may be taken in a signal handler or in a copy of the process whose
 *   table lock another thread held. Of that, only the one page shared with the writer
 *   stays in the process (after its first asynchronous snapshot): anonymous memory of
 *   no known origin here.
 *   Origin 3 (HP2_MAP_ALLOCATOR): a call from the object of the allocator heapprof
 *   passes blocks to (jemalloc behind heapprof.so, say), which may hold its lock: no
 *   stack is taken.
 *   munmap and mremap cut, move and resize entries, so each entry is the part of a
 *   mapping still there. Memory not in the table has no known origin here.
 *
 * Process record (64 bytes): one per process
 *   w0 HP2_PROC_MAGIC   w1 check
 *   w2 version 2 (0..15) | wsize (16..23) | flags (24..31) | pid (32..63)
 *   w3 sample period in bytes, 0 = every block has a header
 *   w4 start: ns of CLOCK_MONOTONIC that block times count from
 *   w5 start: ns since the Unix epoch (CLOCK_REALTIME), for reports
 *   w6 frame limit (0..31) | flags (32..63: HP2_P_*)   w7 reserved (0)
 *
 * A record's check: x = mix(SEED2, address of w0), x = mix(x, w) for each checked
 * word from w2 on (stack: w2, then every pc; a part: w2, w4, then every pc; a
 * joined stack: w2, w4; site: w2, w3; thread: w2;
 * timeline, peak table, map table: w2; slab table: w2, w3; process: w2..w7),
 * check = final(x). A block's check: x = mix(SEED2, user), mix(x, info),
 * mix(x, tag with the check bits 0), mix(x, size word) when BIG; check =
 * final(x) & HP2_CHECK_MASK.
 */
#define HP2_FORMAT_VERSION 2
#define HP2_HDR_SIZE 16
#define HP2_MAGIC16 0xA3E1u			/* tag bits 48..63; also v1's top bits */
#define HP2_STACK_MAGIC 0xA3E153544B563243ULL
#define HP2_SITE_MAGIC 0xA3E1534954455632ULL
#define HP2_PROC_MAGIC 0xA3E150524F435632ULL
#define HP2_THREAD_MAGIC 0xA3E154485244563BULL
#define HP2_REGION_MAGIC 0xA3E15245474E5632ULL
#define HP2_MODULE_MAGIC 0xA3E14D4F44563253ULL
#define HP2_MODULE_SIZE 384
#define HP2_MOD_UNLOADED 0x1u
#define HP2_RING_MAGIC 0xA3E152494E475632ULL
#define HP2_RING_WORDS 4			/* ring words before the slots */
#define HP2_SLOT_WORDS 6
#define HP2_TIMELINE_MAGIC 0xA3E1544C494E5632ULL
#define HP2_TIMELINE_WORDS 8			/* timeline words before the samples */
#define HP2_SAMPLE_WORDS 5
#define HP2_TIMELINE_MAX (1u << 20)		/* N's limit */
#define HP2_PEAK_MAGIC 0xA3E15045414B5632ULL
#define HP2_PEAK_WORDS 16			/* peak table words before the entries */
#define HP2_PEAK_ENTRY_WORDS 3
#define HP2_PEAK_MAX (1u << 24)			/* E's limit */
#define HP2_SLAB_MAGIC 0xA3E1534C41425632ULL
#define HP2_SLAB_WORDS 4			/* table words before the slots */
#define HP2_SLAB_MAX 65536			/* N's limit */
#define HP2_SLAB_FLAGS_SHIFT 60
#define HP2_SLAB_TIME_SHIFT 48
#define HP2_MAPS_MAGIC 0xA3E14D4150535632ULL
#define HP2_MAPS_WORDS 8			/* map table words before the entries */
#define HP2_MAP_ENTRY_WORDS 3
#define HP2_MAPS_MAX (1u << 24)			/* N's limit */
#define HP2_MAP_PROGRAM 1u			/* origin: the program's call, e2 its stack */
#define HP2_MAP_HEAPPROF 2u			/* origin: heapprof's own (a call from its code) */
#define HP2_MAP_ALLOCATOR 3u			/* origin: the allocator behind heapprof (a call
						 * from its object, e.g. jemalloc's arenas) */
/* What a mapping of heapprof's own holds (map table e2 bits 0..31, origin 2). */
#define HP2_OWN_UNKNOWN 0u			/* not said (an older heapprof.so) */
#define HP2_OWN_STACKS 1u			/* stack records */
#define HP2_OWN_SITES 2u			/* site records */
#define HP2_OWN_NAMES 3u			/* Python name records */
#define HP2_OWN_RECORDS 4u			/* process, thread, region, module records */
#define HP2_OWN_TIMELINE 5u			/* the timeline */
#define HP2_OWN_PEAK 6u				/* peak tables */
#define HP2_OWN_RINGS 7u			/* event rings */
#define HP2_OWN_SLABS 8u			/* slab tables (pymalloc's side tables) */
#define HP2_OWN_THREADS 9u			/* per-thread state (slots, caches) */
#define HP2_OWN_INDEX 10u			/* lookup directories (site ids, pools) */
#define HP2_OWN_MAPS 11u			/* the map table */
#define HP2_OWN_REPLAY 12u			/* the unwinder's replay memory */
#define HP2_OWN_UNWIND 13u			/* the unwinder's cache of unwind rules */
#define HP2_OWN_SIGSTACKS 14u			/* signal stacks (its own thread's, sigaltstack) */
#define HP2_OWN_SNAPSHOT 15u			/* reserved, never written (below) */
#define HP2_OWN_RESERVE 16u			/* address space held back for out-of-memory */
#define HP2_OWN_KINDS 17u
#define HP2_MAPF_SHARED 0x1u			/* MAP_SHARED */
#define HP2_MAPF_REMAPPED 0x2u			/* moved or resized by mremap since */
#define HP2_SEED 0xBB67AE8584CAA73BULL

#define HP2_CHECK_BITS 27
#define HP2_CHECK_MASK ((1ULL << HP2_CHECK_BITS) - 1)
#define HP2_TIME_SHIFT 27
#define HP2_TIME_MASK 0xFFFu
#define HP2_OFFSET_SHIFT 39			/* log2(offset / 16), 5 bits */
#define HP2_OFFSET_MASK 0x1Fu
#define HP2_MAX_SHIFT 26			/* offsets up to 1 GiB */
#define HP2_FLAGS_SHIFT 44
#define HP2_FLAGS_MASK 0xFu
#define HP2_F_SAMPLED 0x1u			/* compatible: one of a sample */
#define HP2_F_BIG 0x2u				/* size in the word at user - 24 */
#define HP2_F_KNOWN 0x3u			/* bits 2 and 3 are incompatible */
#define HP2_SIZE_BIG 0xFFFFFFFFu

#define HP2_STACK_WORDS 4			/* record words before the pcs */
#define HP2_SITE_SIZE 80			/* 96 and 128 in older dumps */
#define HP2_THREAD_SIZE 64
#define HP2_REGION_SIZE 64
#define HP2_COUNT_ONE 1024u			/* a sampled counter's unit: 1/1024 */
#define HP2_P_TIME 0x1u				/* process flag: w9 of sites holds time */
#define HP2_P_SLOTS 0x2u			/* process flag: sites and thread records
						 * name thread slots, not tids */
#define HP2_THREAD_LIVE 1u			/* thread record w7 state: a thread holds it */
#define HP2_THREAD_ENDED 2u			/* its thread ended; free for another */
#define HP2_PROC_SIZE 64
/* stack flag: the stack does not reach its outermost frame: cut at the frame limit,
 * or the walk stopped early (code without unwind tables whose caller it could not
 * find, a frame leading off the readable stack) */
#define HP2_STACK_TRUNCATED 0x1u
#define HP2_MAX_FRAMES 1024			/* nframes never exceeds this */
#define HP2_STACK_PART 0x4u			/* stack flag: a part of stacks (w4: its outer) */
#define HP2_STACK_JOINED 0x8u			/* stack flag: words in parts (w4: their ids) */
#define HP2_STACK_REF_WORDS 5			/* words before a part's, with w4 */
#define HP2_PART_MIN 16				/* a writer's choice: stacks of more words are
						 * stored in parts */

/*
 * Python frames (CPython 3.11 and later, 64-bit targets only). A stack record whose
 * flags have HP2_STACK_PYTHON holds its native pcs first, innermost first, then one
 * pair of words per Python frame, innermost first; nframes counts every word of both.
 * The stack table stores, compares and replays the words as it does pcs, so a site is
 * per (native stack, Python stack):
 *
 *   word A  HP2_PYFRAME_TAG (48..63) | flags (32..47, HP2_PYFRAME_*) |
 *           instruction offset (0..31): bytes from the code's first instruction to
 *           the one running, as PyCode_Addr2Line takes it
 *   word B  the address of the frame's name record below or, with HP2_PYFRAME_RAW,
 *           of the code object itself (no record could be made)
 *
 * A's top 16 bits make an address no 64-bit machine maps (not canonical on x86_64,
 * above any aarch64 user or kernel address), so no native pc equals a word A. Frames
 * up to and including one with HP2_PYFRAME_ENTRY are those one call of the evaluation
 * loop ran: the n-th such group, counted from the innermost, replaces the n-th native
 * frame in _PyEval_EvalFrameDefault.
 *
 * Python name record (48 bytes + the names and the line table, 64-aligned): made
 * the first time a code object is recorded, so that its frames keep their names
 * after the object is freed
 *   w0 HP2_PYCODE_MAGIC   w1 check (of w2..w5 and every word of the bytes)
 *   w2 the code object's address when it was recorded
 *   w3 the interpreter's PY_VERSION_HEX (0..31) | co_firstlineno (32..63)
 *   w4 bytes of co_qualname (0..15) | of co_filename (16..31) | of co_linetable (32..63)
 *   w5 flags (0..7: HP2_PYCODE_*)
 *   then co_qualname in UTF-8, co_filename in UTF-8, co_linetable as the interpreter
 *   stores it (PEP 626/657 location table), no NULs, zero-padded to a multiple of 8.
 *   Names are cut at HP2_PYCODE_MAX_NAME, files at HP2_PYCODE_MAX_FILE, tables at
 *   HP2_PYCODE_MAX_LINES bytes (with a flag): offsets past a cut table have no line.
 */
#define HP2_PYCODE_MAGIC 0xA3E15059434F4445ULL
#define HP2_PYCODE_WORDS 6			/* record words before the bytes */
#define HP2_PYCODE_NAME_CUT 0x1u
#define HP2_PYCODE_FILE_CUT 0x2u
#define HP2_PYCODE_LINES_CUT 0x4u
#define HP2_PYCODE_MAX_NAME 255
#define HP2_PYCODE_MAX_FILE 1023
#define HP2_PYCODE_MAX_LINES 65535
#define HP2_PYFRAME_TAG 0xF17Eu
#define HP2_PYFRAME_ENTRY 0x1u			/* outermost frame of its loop call */
#define HP2_PYFRAME_RAW 0x2u			/* word B is the code object */
#define HP2_STACK_PYTHON 0x2u			/* stack flag: Python pairs follow */

static inline uint64_t hp2_pyframe_word(uint32_t offset, unsigned flags)
{
	return (uint64_t)HP2_PYFRAME_TAG << 48 | (uint64_t)(flags & 0xFFFFu) << 32 | offset;
}

static inline int hp2_is_pyframe_word(uint64_t w)
{
	return (w >> 48) == HP2_PYFRAME_TAG;
}

/* Entry points (site records): which call made the block. */
enum hp2_entry {
	HP2_ENTRY_NONE,
	HP2_ENTRY_MALLOC,
	HP2_ENTRY_CALLOC,
	HP2_ENTRY_REALLOC,
	HP2_ENTRY_REALLOCARRAY,
	HP2_ENTRY_POSIX_MEMALIGN,
	HP2_ENTRY_ALIGNED_ALLOC,
	HP2_ENTRY_MEMALIGN,
	HP2_ENTRY_VALLOC,
	HP2_ENTRY_PVALLOC,
	HP2_ENTRY_FREE,				/* events only */
	HP2_ENTRY_COUNT
};

static inline uint64_t hp2_tag_magic_bits(void)
{
	return (uint64_t)HP2_MAGIC16 << 48;
}

/* A slab table's slot word for a live block (size 1..65535, flags HP2_F_SAMPLED). */
static inline uint64_t hp2_slab_slot(uint32_t site, uint64_t size, uint32_t time, unsigned flags)
{
	return site | (size & 0xFFFFu) << 32 | (uint64_t)(time & HP2_TIME_MASK) << HP2_SLAB_TIME_SHIFT |
	       (uint64_t)(flags & 7u) << HP2_SLAB_FLAGS_SHIFT;
}

/* The block check of a v2 header at user (tag's check bits are ignored). */
static inline uint32_t hp2_block_check(uint64_t user, uint64_t info, uint64_t tag,
				       uint64_t big_size)
{
	uint64_t x = hp_mix(HP2_SEED, user);

	x = hp_mix(x, info);
	x = hp_mix(x, tag & ~HP2_CHECK_MASK);
	if ((tag >> HP2_FLAGS_SHIFT) & HP2_F_BIG)
		x = hp_mix(x, big_size);
	return (uint32_t)(hp_check_final(x) & HP2_CHECK_MASK);
}

/*
 * Block time: ms since the process start as a 12-bit float, 5-bit exponent e and
 * 7-bit mantissa m: e = 0 means m ms; else (128 + m) << (e - 1) ms, rounded down
 * (within 1/128 of the truth, up to 8.7 years).
 */
static inline uint32_t hp2_time_encode(uint64_t ms)
{
	unsigned e = 0;

	if (ms < 128)
		return (uint32_t)ms;
#if defined(__GNUC__)
	e = 56 - (unsigned)__builtin_clzll(ms);	/* the top bit to bit 7 */
#else
	while ((ms >> e) >= 256)
		e++;
#endif
	if (e >= 31)
		return HP2_TIME_MASK;
	return (e + 1) << 7 | (uint32_t)((ms >> e) - 128);
}

static inline uint64_t hp2_time_decode(uint32_t code)
{
	unsigned e = (code >> 7) & 31, m = code & 127;

	return e ? (uint64_t)(128 + m) << (e - 1) : m;
}

/*
 * Snapshot note: heapprof's snapshots (HEAPPROF_SNAPSHOT) are ELF cores, and their
 * PT_NOTE holds, besides the kernel's usual "CORE" notes, one note of owner
 * "HEAPPROF" and type HP_NOTE_RESIDENT: what the kernel said was resident in each
 * mapping when the snapshot was taken (/proc/self/smaps, read by the writer, never on
 * the allocation path). Its descriptor, 64-bit words in the target's byte order:
 *
 *   w0        count: the mappings that follow (every mapping of the process, dumped
 *             or not)
 *   then count entries of 4 words, sorted by start:
 *   start     first address of the mapping
 *   end       one past its last address
 *   rss       bytes of it resident in RAM (smaps "Rss:", kB * 1024)
 *   swap      bytes of it swapped out (smaps "Swap:", kB * 1024)
 *
 * A reader skips an entry with end <= start or rss + swap > end - start, and the whole
 * note when count does not fit its size. Cores from elsewhere have no such note.
 */
#define HP_NOTE_OWNER "HEAPPROF"
#define HP_NOTE_RESIDENT 0x48500001u
#define HP_RESIDENT_WORDS 4			/* words per mapping */

/*
 * Threads note: a snapshot that holds an NT_PRSTATUS note for every thread of the
 * process (heapprof's own thread aside) says so with one note of owner "HEAPPROF" and
 * type HP_NOTE_THREADS. Its descriptor, 64-bit words in the target's byte order:
 *
 *   w0        count: the NT_PRSTATUS notes the snapshot holds
 *   then count words, one per NT_PRSTATUS note in their order:
 *   bits 0-31   the thread's id (pr_pid)
 *   bits 32-63  HP_THREAD_* flags
 *
 * With it (and in cores from the kernel or gdb, which list every thread) a thread
 * stack that no listed thread stands in is an exited thread's, kept for reuse by the
 * C library: its used part is no root. A reader ignores the note when count is not
 * the number of NT_PRSTATUS notes it read, and a word whose id is not its note's.
 * Snapshots without it (written before it existed) listed the thread that took them
 * only.
 */
#define HP_NOTE_THREADS 0x48500002u
#define HP_THREAD_AT_CALL (1ull << 32)	/* its stack pointer is where it called a function
					 * (exit, heapprof_snapshot): nothing below it is a
					 * live frame's, not even a red zone */
#define HP_THREAD_NO_REGS (1ull << 33)	/* it ran while the snapshot was taken: its
					 * registers are not known (all zero), its stack is
					 * kept whole */

/*
 * Time note: when the snapshot was taken, one note of owner "HEAPPROF" and type
 * HP_NOTE_TIME. Its descriptor, 64-bit words in the target's byte order:
 *
 *   w0  ns of CLOCK_MONOTONIC when the writer's copy of the process was made (the
 *       fork): the process record's w4 is on the same clock, so w0 - w4 is the
 *       snapshot's time since the process start, the "now" of its timeline
 *   w1  ns since the Unix epoch (CLOCK_REALTIME) at the same moment, for reports
 *
 * A reader ignores a note shorter than 16 bytes, and a w0 before the process record's
 * start or before the newest time the dump's records show. Snapshots written before
 * it existed, and cores from the kernel or gdb, have none: their "now" is the newest
 * time the dump shows (the last timeline sample, the newest block).
 */
#define HP_NOTE_TIME 0x48500003u
#define HP_TIME_WORDS 2

/*
 * Lean note: a lean snapshot (HEAPPROF_SNAPSHOT=lean, or HEAPPROF_INTERVAL's with
 * HEAPPROF_SAMPLE) holds no heap. Its PT_LOADs are heapprof's mappings that hold
 * records, each module's ELF header page and the vDSO, the dynamic linker's list of
 * libraries (the executable's DT_DEBUG entry, r_debug's first two words, each
 * link_map's first four and its name), and each live sampled block's header: the 16
 * bytes below its user pointer, 24 with a BIG block's size word, in a PT_LOAD of its
 * own (joined with a piece it touches), p_align 8. It says so with one note of owner
 * "HEAPPROF" and type HP_NOTE_LEAN. Its descriptor, 64-bit words in the target's byte
 * order:
 *
 *   w0  the sampled blocks' headers it holds
 *   w1  reserved (0)
 *
 * A reader takes any HP_NOTE_LEAN note (w0 only when the note holds it) as saying the
 * dump has no heap contents: what needs the heap's words or the allocator's chunks
 * (reachability, retained sizes, types, the allocator's figures) cannot be had from
 * it; the blocks, records and counts are those of a snapshot of the whole process.
 */
#define HP_NOTE_LEAN 0x48500004u
#define HP_LEAN_WORDS 2

#endif
