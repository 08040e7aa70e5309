/*
 * A target's memory as the analyzer sees it: segments of bytes at addresses, the
 * target's word size and byte order, and what the input says of the process (threads,
 * mapped files, auxv, resident memory). One reader per input format fills it.
 *
 * The seam: image_open() turns the user's input into a plain stream (source.c, spool.c
 * inflate and copy), then hands it to the first reader in image.c's table whose magic
 * matches; raw images (--raw) go to image_raw.c. Each reader reports into struct image
 * and nothing downstream asks which reader it was: image_core.c is the only file that
 * knows ELF cores (heapprof's snapshots are ELF cores with one more note, read there),
 * image_raw.c the only one that knows raw files. A new input format (a minidump, say)
 * is one new file with an open function that fills the fields below, plus its line in
 * the readers table. (One exception stands: spool.c reads an ELF header to bound an
 * inflated copy against decompression bombs; a compressed minidump would need its own
 * bound there.)
 */
#ifndef HP_IMAGE_H
#define HP_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Elf Elf;

/* A thread of the target, as the input reports it. */
struct image_thread {
	uint32_t tid;
	bool have_sp;		/* the input says where its stack pointer was */
	bool at_call;		/* ... where it called a function: no red zone below */
	bool have_tls;		/* ... and its thread pointer (x86_64 fs_base) */
	uint64_t sp;
	uint64_t tls;
	uint64_t *regs;		/* every general register word the input holds (on a
				 * machine whose layout is not known, all of them:
				 * conservative for roots) */
	unsigned nregs;
};

/* A file the target had mapped: [start, end) maps name from offset. */
struct image_file {
	uint64_t start, end;
	uint64_t offset;	/* in bytes */
	const char *name;	/* lives as long as the image */
};

/* What the kernel said was resident in one mapping when the dump was taken. */
struct image_resident {
	uint64_t start, end;	/* the mapping */
	uint64_t rss;		/* bytes in RAM */
	uint64_t swap;		/* bytes swapped out */
};

struct seg {
	uint64_t vaddr;			/* target address of data[0] */
	uint64_t size;			/* bytes present in data (PT_LOAD p_filesz, clipped) */
	const unsigned char *data;	/* mapped bytes; never written */
	bool in_file;			/* the same bytes can be read from fd at file_offset */
	int fd;
	uint64_t file_offset;
	const char *file;		/* the file that is this one segment (a raw image), or NULL */
	bool read_only;			/* a core's PT_LOAD with permissions but no PF_W: no root */
};

/* A segment image_sort_segs left out because it overlaps one it kept. */
struct seg_overlap {
	uint64_t vaddr, end;		/* its range, [vaddr, end) */
	uint64_t kept_vaddr, kept_end;	/* the kept segment it overlaps */
	const char *file, *kept_file;	/* raw images: the files; NULL for a core */
	uint64_t offset, kept_offset;	/* a core: the segments' offsets in the file */
	uint64_t hidden;		/* its bytes that the kept one does not hold alike:
					 * blocks there are not counted */
};
#define IMAGE_MAX_OVERLAPS 8		/* overlaps described; overlap_segs counts all */

struct image {
	unsigned wsize;		/* 4 or 8: the target's pointer size */
	bool big_endian;	/* the target's byte order */
	uint16_t machine;	/* e_machine (EM_*), 0 if unknown */
	struct seg *segs;	/* sorted by vaddr, non-overlapping */
	size_t nsegs;
	uint64_t bytes;		/* sum of segs[].size */
	uint64_t missing_bytes;	/* bytes of PT_LOAD segments absent from the file */
	unsigned missing_segs;	/* segments with any bytes absent */
	unsigned truncated_segs; /* segments cut short by the end of the file */
	unsigned overlap_segs;	/* segments dropped for overlapping another */
	struct seg_overlap overlaps[IMAGE_MAX_OVERLAPS]; /* the first of them */
	const char *path;	/* the core file as named by the user, or NULL */
	int fd;			/* the core (or its inflated copy), -1 if none */

	/* Reported by the reader; zero where the input says nothing. */
	const char *segs_name;	/* its segments in messages: "segments of the core" */
	const char *seg_name;	/* one of them, short: "segment", "image" */
	struct image_thread *threads;
	size_t nthreads;
	bool threads_complete;	/* threads[] is every thread the process had (a core
				 * from the kernel or gdb, a snapshot that says so) */
	struct image_file *files;	/* the mapped files (modules), in the input's order */
	size_t nfiles;
	bool have_files;	/* the input lists mapped files at all */
	uint64_t file_page;	/* the target's page size as that list gives it, or 0 */
	const char **file_names;	/* every name that list holds, entries that do not
					 * parse included (libdwfl may open them) */
	size_t nfile_names;
	bool have_auxv;
	uint64_t at_entry;	/* AT_ENTRY, 0 if unknown */
	uint64_t at_vdso;	/* AT_SYSINFO_EHDR, 0 if unknown */
	uint64_t at_execfn;	/* AT_EXECFN: the program's name, which the kernel put at
				 * the top of the main thread's stack; 0 if unknown */
	uint32_t pid;		/* the process's id (NT_PRPSINFO), 0 if unknown */
	struct image_resident *resident;	/* sorted by start; NULL if not recorded */
	size_t nresident;
	const char *resident_why;	/* when not recorded, why: "gcore core", ... */
	uint64_t taken_mono_ns;	/* when the snapshot was taken (HP_NOTE_TIME), on the
				 * process record's clock; 0 if the input does not say
				 * (a core from the kernel or gdb, a raw image) */
	uint64_t taken_real_ns;	/* ... since the Unix epoch */
	bool lean;		/* a lean snapshot (HP_NOTE_LEAN): heapprof's records and the
				 * sampled blocks' headers, no heap contents */
	uint64_t lean_headers;	/* ... the headers it says it holds */
	Elf *dwfl_core;		/* an ELF core libdwfl may list modules from itself
				 * (dwfl_core_file_report), or NULL; owned by the image */

	struct raw_map *raws;	/* the files mapped for segs[].data */
	size_t nraws;
};

struct raw_map {
	void *map;
	size_t len;
	const char *file;
	int fd;			/* open on file, or -1 */
};

/* What the user named: a core (or snapshot), or raw images of a PROGRAM. */
struct image_raw_file {
	const char *path;
	uint64_t addr;		/* where its first byte was in the target */
};

struct image_spec {
	const char *core;	/* a core or snapshot, '-' for standard input; or NULL */
	const struct image_raw_file *raw;	/* raw mode when nraw > 0 */
	size_t nraw;
	unsigned wsize;		/* raw mode: the target's, from PROGRAM */
	bool big_endian;
	uint16_t machine;
};

/*
 * Open the memory spec names through the reader that knows it. Returns 0, or -1 with
 * a one-line reason in err (img is then ready for image_close).
 */
int image_open(struct image *img, const struct image_spec *spec, char *err, size_t errlen);

/*
 * Open an ELF core, plain or compressed with gzip, zstd or xz (detected by content),
 * from a file, a FIFO or '-' (standard input). Returns 0, or -1 with a one-line
 * reason in err. Missing PT_LOAD bytes are counted, not fatal.
 */
int image_open_core(struct image *img, const char *path, char *err, size_t errlen);

/*
 * From now on, refuse to open a core of more than bytes (0: no limit, the default),
 * before anything is mapped or copied: a plain file by its size, a copied stream
 * (compressed, or a pipe) by the size its ELF headers promise. --max-size sets it;
 * heapprof report passes what the process's mappings can hold, since the snapshot
 * comes from that process's user.
 */
void image_set_max_size(uint64_t bytes);

/*
 * Start a raw-mode image with the target's word size and byte order, then add files
 * holding memory as it was at addr. image_add_raw returns 0 or -1 with err set; the
 * images must not overlap.
 */
void image_init_raw(struct image *img, unsigned wsize, bool big_endian, uint16_t machine);
int image_add_raw(struct image *img, const char *file, uint64_t addr, char *err, size_t errlen);

/* Sort img->segs, drop overlaps, total img->bytes; -1 with err if none is left. */
int image_sort_segs(struct image *img, char *err, size_t errlen);

/* The segment holding addr, or NULL. */
const struct seg *image_find(const struct image *img, uint64_t addr);

/*
 * Word size, byte order, machine and PIE-ness of an executable, from its ELF header:
 * what a raw image cannot say of itself, and what a core must agree with.
 */
int image_program_info(const char *path, unsigned *wsize, bool *big_endian, uint16_t *machine,
		       bool *pie, char *err, size_t errlen);

/*
 * Open an input file for reading only if it is a regular file. It is opened with
 * O_NONBLOCK, so that a FIFO or a device named by the user or by a core cannot make
 * open() wait forever, then checked with fstat (no window between check and use) and
 * set back to blocking. Returns the fd (close-on-exec), or -1 with a one-line reason in
 * err: "cannot open 'X': <errno>" (errno kept) or "'X' is not a regular file (a FIFO)".
 */
int image_open_regular(const char *path, char *err, size_t errlen);

/*
 * Open CORE for src_open(): a regular file as image_open_regular() does, or a stream
 * to be copied: '-' (standard input: a pipe, a socket or a redirected file; not a
 * terminal) or a named FIFO (this waits for its first writer, as reading one does).
 * *regular tells a file that can be mapped as it is. Devices and directories are
 * refused: "'X' is not a regular file or a pipe (a character device)".
 */
int image_open_stream(const char *path, bool *regular, char *err, size_t errlen);

/* "a FIFO", "a directory", ... for a st_mode that is not a regular file. */
const char *image_file_kind(unsigned mode);

/* Copy len bytes at target address addr into buf; false if any byte is absent. */
bool image_read(const struct image *img, uint64_t addr, void *buf, size_t len);

/*
 * image_read, or where the dump left the bytes out (a core leaves out a module's
 * read-only pages), the file the target had mapped there, as this machine has it now
 * (under sysroot if not NULL). For constants of a module (a type's name); false if
 * any byte is absent from both.
 */
bool image_read_mapped(const struct image *img, const char *sysroot, uint64_t addr, void *buf,
		       size_t len);

/* Is every byte of [addr, addr + len) in the image? What a record claims to hold is
 * checked with it before room is made for it. */
bool image_has(const struct image *img, uint64_t addr, uint64_t len);

/*
 * A window onto one segment's bytes: how the scan, the allocator's chunk walk and the
 * heap graph read the image in bulk. A segment in a file is read into the window's
 * buffer with pread rather than through the mapping, whose page faults cost more than
 * the copy and whose pages would all count in the analyzer's memory (a mapping of a
 * 4 GiB core makes a 4 GiB process); a segment not in a file is the window whole.
 */
struct image_window {
	const struct seg *seg;		/* the segment whose bytes it holds; NULL: none */
	uint64_t start, end;		/* [start, end) of the target, at p */
	const unsigned char *p;
	unsigned char *buf;		/* cap bytes, allocated at the first read */
	size_t cap;
};

/*
 * Make w hold [from, from + len) of segment s, or as much of it as s holds from
 * there on (from lies in s); a segment not in a file is held whole. False, w then
 * empty, if the read failed before its first byte: the caller may read s->data.
 */
bool image_window_fill(struct image_window *w, const struct seg *s, uint64_t from, size_t len);

/* Whether w holds [addr, addr + len). */
static inline bool image_window_has(const struct image_window *w, uint64_t addr, uint64_t len)
{
	return w->seg && addr >= w->start && addr <= w->end && len <= w->end - addr;
}

void image_window_free(struct image_window *w);

void image_close(struct image *img);

#endif
