/*
 * pprof's profile.proto, gzip-compressed, from a neutral description of a profile:
 * what `go tool pprof` and the pprof web UI read. The caller (a report writer) says
 * what the samples, locations, functions and mappings are; this module only encodes,
 * never sorts, merges or symbolizes, so the same description gives the same bytes.
 * Field meanings follow github.com/google/pprof/proto/profile.proto.
 */
#ifndef HP_PPROF_H
#define HP_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pprof_value_type {
	const char *type;	/* "inuse_space", "inuse_objects", ... */
	const char *unit;	/* "bytes", "count", ... */
};

/* One line of a location: lines[0] of a location is the innermost (inlined) frame. */
struct pprof_line {
	uint64_t function_id;	/* a pprof_function's id; 0 = none */
	int64_t line;		/* source line; 0 = unknown */
};

struct pprof_location {
	uint64_t id;		/* nonzero, unique among locations */
	uint64_t mapping_id;	/* 0 = none */
	uint64_t address;	/* in the process's address space; 0 = unknown */
	const struct pprof_line *lines;	/* n_lines entries, innermost first */
	size_t n_lines;
};

struct pprof_function {
	uint64_t id;		/* nonzero, unique among functions */
	const char *name;	/* as shown (demangled); NULL = "" */
	const char *system_name; /* mangled or NULL */
	const char *filename;	/* source file or NULL */
	int64_t start_line;
};

struct pprof_mapping {
	uint64_t id;		/* nonzero, unique among mappings */
	uint64_t start, limit;	/* [start, limit) in the process's address space */
	uint64_t offset;	/* file offset mapped at start */
	const char *filename;	/* the object file, or NULL */
	const char *build_id;	/* hex string, or NULL */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

/* A string label of a sample: pprof -tagfocus, -tags and Pyroscope filter by them. */
struct pprof_label {
	const char *key, *str;
};

struct pprof_sample {
	const uint64_t *location_ids;	/* n_locations ids, leaf (allocating frame) first */
	size_t n_locations;
	const int64_t *values;	/* one per sample type, in the same order */
	const struct pprof_label *labels; /* n_labels of them, NULL when none */
	size_t n_labels;
};

struct pprof_profile {
	const struct pprof_value_type *sample_types;
	size_t n_sample_types;
	const struct pprof_sample *samples;
	size_t n_samples;
	const struct pprof_location *locations;
	size_t n_locations;
	const struct pprof_function *functions;
	size_t n_functions;
	const struct pprof_mapping *mappings;
	size_t n_mappings;
	const char *comment;		/* one comment line, or NULL */
	struct pprof_value_type period_type;	/* NULLs: not written */
	int64_t period;			/* 0: not written */
	const char *default_sample_type; /* one of sample_types[].type, or NULL */
};

/*
 * Encode p and write it gzip-compressed to f (mtime 0 in the gzip header, so equal
 * input gives equal bytes). Ids are written as given: the caller keeps them unique and
 * nonzero, and every referenced id defined. Strings may repeat; each is stored once.
 * Returns 0, or -1 when writing to f failed (errno set). Out of memory ends the run.
 */
int pprof_write(const struct pprof_profile *p, FILE *f);

#endif
