/*
 * The pieces of an ELF core both snapshot writers use (snapshot_elf.c): scratch
 * memory, /proc's files, notes, the headers, the file's name. For snapshot_core.c and
 * snapshot_lean.c alone. Async-signal-safe: system calls, no malloc or stdio.
 */
#ifndef HP_SNAPSHOT_ELF_H
#define HP_SNAPSHOT_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/procfs.h>

#include "compiler.h"
#include "snapshot_core.h"

/* A mapping of /proc/self/maps, or a piece of memory a lean snapshot keeps. */
struct vma {
	uint64_t start, end, pgoff;
	const char *path;	/* "" for anonymous memory */
	char perms[5];
	uint64_t dump;		/* bytes kept from start: 0, the header page or all */
	bool holes;		/* anonymous: zero pages may stay holes */
};

/* The PT_NOTE being built: p holds n bytes, room for max. */
struct notes {
	unsigned char *p;
	size_t n, max;
};

/*
 * Scratch memory of len bytes (shared mappings, made by the system call itself: the
 * map table's lock may be held by a thread of the copied process), NULL when none;
 * whether [start, end) is one; all of it given back (a writer that goes on living).
 */
HP_HIDDEN void *snap_elf_grab(size_t len);
HP_HIDDEN bool snap_elf_is_scratch(uint64_t start, uint64_t end);
HP_HIDDEN void snap_elf_release(void);

/* A whole /proc file into scratch memory, NUL-terminated, at most max bytes; NULL
 * with errno set on failure, *len its size. */
HP_HIDDEN char *snap_elf_slurp(const char *path, size_t *len, size_t max);
/* Hex digits at *s, which moves past them. */
HP_HIDDEN uint64_t snap_elf_hex(const char **s);
/* /proc/self/maps's lines into v (room for max): the lines are cut in place. */
HP_HIDDEN size_t snap_elf_maps(char *text, struct vma *v, size_t max);

/* A note of owner and type (snap_elf_note: "CORE"); left out when it does not fit. */
HP_HIDDEN void snap_elf_note_of(struct notes *nb, const char *owner, uint32_t type,
				const void *desc, size_t size);
HP_HIDDEN void snap_elf_note(struct notes *nb, uint32_t type, const void *desc, size_t size);
/* HP_NOTE_TIME, NT_PRSTATUS of thread tid (first: the signal that asked is its),
 * NT_PRPSINFO, NT_FILE of the file mappings of v. */
HP_HIDDEN void snap_elf_note_time(struct notes *nb, const struct snap_job *j);
HP_HIDDEN void snap_elf_note_status(struct notes *nb, const struct snap_job *j, pid_t tid,
				    const elf_gregset_t regs, bool first);
HP_HIDDEN void snap_elf_note_psinfo(struct notes *nb, const struct snap_job *j);
HP_HIDDEN void snap_elf_note_files(struct notes *nb, const struct vma *v, size_t n,
				   uint64_t page);

/* pwrite all of buf at off: 0 or an errno value (EFAULT: buf is not all mapped). */
HP_HIDDEN int snap_elf_pwrite(int fd, const void *buf, size_t len, uint64_t off);
HP_HIDDEN bool snap_elf_zero_page(const unsigned char *p, uint64_t page);

/*
 * The ELF header, program headers (a PT_LOAD for each of v with dump bytes, at file
 * offsets in v's order from the first page after the notes: pieces whose size is not
 * a multiple of page come after the others) and the notes. *end: the file's size.
 */
HP_HIDDEN int snap_elf_headers(const struct snap_job *j, const struct vma *v, size_t n,
			       const struct notes *nb, uint64_t page, size_t nload, uint64_t *end);
/* Where the notes start in a file of nload PT_LOADs. */
HP_HIDDEN uint64_t snap_elf_notes_at(size_t nload);
/* The file gets its name (j->tmp to j->final, never over another): 0 or errno. */
HP_HIDDEN int snap_elf_publish(const struct snap_job *j);
/* The line on stderr: failed (err, after what) or written (size bytes, data of them). */
HP_HIDDEN void snap_elf_say(const struct snap_job *j, int err, const char *what, uint64_t size,
			    uint64_t data);

#endif
