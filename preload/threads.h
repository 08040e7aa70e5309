/*
 * Thread slots: the thread records of include/heapprof_format.h. A thread takes a slot
 * at its first site and gives it back when it ends; once 4 more threads have ended,
 * a later thread takes the slot over, record and sites, so that a program keeps as
 * many slots as it ever had threads at once, and 4, however many come and go. Sites
 * name the slot (process flag HP2_P_SLOTS); the record says which thread holds it, or
 * last did, and whether it is live. The sites and what they count are table.c's; this
 * file keeps the records and the free list.
 */
#ifndef HP_THREADS_H
#define HP_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

/* The thread record as this process writes it. */
struct thread_rec {
	uint64_t magic, check;
	uint64_t slot;		/* w2: 1.., what sites name */
	char name[16];		/* w3, w4: of the thread holding it, or that last did */
	int64_t live;		/* w5: bytes its thread allocated minus those it freed */
	uint64_t link;		/* w6: all records, private */
	uint64_t tid_state;	/* w7: tid | HP2_THREAD_* << 32 */
};

struct hp_site_rec;

/* A slot: its record, and the sites made in it (table.c's, the first's reference, then
 * linked through their private word). Never freed. */
struct thread_slot {
	struct thread_rec *rec;
	uint32_t sites;
	void *ring;		/* HEAPPROF_EVENTS's ring (events.c), taken over with the slot */
	uint32_t next_free;	/* the free list's link, private */
};

/*
 * A slot for the calling thread tid (it holds none): one an ended thread gave back
 * (*reused set: its sites still hold that thread's counts, and its record's live
 * bytes), or a new one. NULL if memory for a new one cannot be had. Lock-free; the
 * record is marked live, named and its tid set before it is returned.
 */
HP_HIDDEN struct thread_slot *threads_take(uint32_t tid, bool *reused);

/* The thread holding s ended: its record says so (its tid and name stay, for what its
 * sites counted, until a thread takes s over), and s is free once 4 more threads have
 * ended. The caller no longer writes to s. */
HP_HIDDEN void threads_give_back(struct thread_slot *s);

/* Refresh the name in s's record from the calling thread's (prctl PR_GET_NAME). */
HP_HIDDEN void threads_name(struct thread_slot *s);

/* Bytes allocated minus freed, every thread: the live slots' records and what ended
 * threads left (threads_fold_live). Read without stopping anyone. */
HP_HIDDEN int64_t threads_live_bytes(void);

/* A slot taken over: its record's live bytes go to the ended threads' sum. */
HP_HIDDEN void threads_fold_live(struct thread_slot *s);

/* In a forked child: every slot but self's (NULL: none) is of a thread that is not
 * in this process; they are marked ended and made free. self's record takes tid. */
HP_HIDDEN void threads_after_fork(struct thread_slot *self, uint32_t tid);

#endif
