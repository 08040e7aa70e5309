/*
 * The threads of an ELF core, from its NT_PRSTATUS notes: each thread's general
 * registers as target words, and its stack pointer where the machine is known. Used
 * by the leak classifier (leaks.c) as roots; knows nothing of heapprof blocks. And the
 * files it mapped, from NT_FILE, for the symbolizer's module list.
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

struct core_file {		/* one NT_FILE entry: [start, end) maps name from pgoff */
	uint64_t start, end;
	uint64_t offset;	/* in bytes (NT_FILE counts pages) */
	const char *name;	/* into the core's note data: lives as long as the image */
};

struct core_files {
	struct core_file *v;
	size_t n;
	uint64_t page;		/* the target's page size, as NT_FILE gives it */
	bool present;		/* the core has an NT_FILE note at all */
};

/* Read the core's NT_FILE entries (none for raw images). Never fails: a note that does
 * not parse ends the list where it stops making sense. */
void core_files_read(const struct image *img, struct core_files *out);
void core_files_free(struct core_files *f);

#endif
