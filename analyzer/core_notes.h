/*
 * The threads of an ELF core, from its NT_PRSTATUS notes: each thread's general
 * registers as target words, and its stack pointer where the machine is known. Used
 * by the leak classifier (leaks.c) as roots; knows nothing of heapprof blocks.
 */
#ifndef HP_CORE_NOTES_H
#define HP_CORE_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct image;

struct core_thread {
	uint32_t tid;
	bool have_sp;
	uint64_t sp;		/* stack pointer, when the machine's layout is known */
	uint64_t *regs;		/* every word of pr_reg (and the rest of the note on a
				 * machine not known here: conservative) */
	unsigned nregs;
};

struct core_threads {
	struct core_thread *v;
	size_t n;
};

/* Read the threads of img (a core; raw images have none). Never fails: a note that
 * does not parse is skipped. */
void core_threads_read(const struct image *img, struct core_threads *out);
void core_threads_free(struct core_threads *t);

#endif
