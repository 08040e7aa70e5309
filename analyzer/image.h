/*
 * A target's memory as the analyzer sees it: an ELF core or raw images, as segments
 * of bytes at addresses, plus the target's word size and byte order. image_core.c
 * knows ELF cores, image_raw.c raw files; nobody else parses either.
 */
#ifndef HP_IMAGE_H
#define HP_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Elf Elf;

struct seg {
	uint64_t vaddr;			/* target address of data[0] */
	uint64_t size;			/* bytes present in data (PT_LOAD p_filesz, clipped) */
	const unsigned char *data;	/* mapped bytes; never written */
	bool in_file;			/* the same bytes can be read from fd at file_offset */
	int fd;
	uint64_t file_offset;
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
	Elf *elf;		/* the core (NULL in raw mode); owned by the image */
	const char *path;	/* the core file as named by the user, or NULL */
	int fd;			/* the core (or its inflated copy), -1 if none */

	struct raw_map *raws;	/* the files mapped for segs[].data */
	size_t nraws;
};

struct raw_map {
	void *map;
	size_t len;
	const char *file;
	int fd;			/* open on file, or -1 */
};

/*
 * Open an ELF core, plain or compressed with gzip, zstd or xz (detected by content),
 * from a file, a FIFO or '-' (standard input). Returns 0, or -1 with a one-line
 * reason in err. Missing PT_LOAD bytes are counted, not fatal.
 */
int image_open_core(struct image *img, const char *path, char *err, size_t errlen);

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

void image_close(struct image *img);

#endif
