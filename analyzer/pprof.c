/*
 * profile.proto by hand, on pb.c's wire primitives, then gzip through zlib.
 *
 * Why not protobuf-c with profile.proto: we only ever write, the message has six
 * small submessages with scalar fields, and the wire format they need is varints and
 * length-delimited fields (pb.c: about 60 lines, unit-tested against hand-computed
 * bytes). protobuf-c would add a code generator to the build, a runtime library to
 * every install, and a generated file to keep in step, to write the same bytes. The
 * test suite checks the output with the real pprof (test/t4002-pprof.sh).
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "escape.h"
#include "escape_name.h"
#include "pb.h"
#include "pprof.h"
#include "util.h"

/* Fields of profile.proto's messages, by number. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

/* The string table: index 0 is "", each other string once, in order of first use. */
struct strtab {
	const char **s;
	size_t n, cap;
	size_t *hash;		/* open addressing: index + 1, 0 = empty */
	size_t hcap;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void strtab_grow(struct strtab *t)
{
	t->hcap = t->hcap ? t->hcap * 2 : 64;
	free(t->hash);
	t->hash = xcalloc(t->hcap, sizeof(*t->hash));
	for (size_t i = 0; i < t->n; i++) {
		size_t h = str_hash(t->s[i]) & (t->hcap - 1);

		while (t->hash[h])
			h = (h + 1) & (t->hcap - 1);
		t->hash[h] = i + 1;
	}
}

static uint64_t strtab_add(struct strtab *t, const char *s)
{
	size_t h;

	if (!s || !*s)
		return 0;
	if (2 * (t->n + 1) > t->hcap)
		strtab_grow(t);
	for (h = str_hash(s) & (t->hcap - 1); t->hash[h]; h = (h + 1) & (t->hcap - 1))
		if (!strcmp(t->s[t->hash[h] - 1], s))
			return t->hash[h] - 1;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->s = xrealloc(t->s, t->cap * sizeof(*t->s));
	}
	t->s[t->n] = s;
	t->hash[h] = ++t->n;
	return t->n - 1;
}

/* A submessage built in tmp, then appended to b as field. */
static void put_msg(struct pb *b, unsigned field, struct pb *tmp)
{
	pb_bytes(b, field, tmp->p, tmp->len);
	tmp->len = 0;
}

static void put_value_type(struct pb *b, unsigned field, const struct pprof_value_type *v,
			   struct strtab *t, struct pb *tmp)
{
	pb_uint(tmp, 1, strtab_add(t, v->type));
	pb_uint(tmp, 2, strtab_add(t, v->unit));
	put_msg(b, field, tmp);
}

static void put_sample(struct pb *b, const struct pprof_profile *p, const struct pprof_sample *s,
		       struct strtab *t, struct pb *tmp)
{
	uint64_t *v = xmalloc((p->n_sample_types ? p->n_sample_types : 1) * sizeof(*v));
	struct pb label = { 0 };

	/* int64 values go on the wire as their two's complement, like any varint */
	for (size_t i = 0; i < p->n_sample_types; i++)
		v[i] = (uint64_t)s->values[i];
	pb_packed(tmp, 1, s->location_ids, s->n_locations);
	pb_packed(tmp, 2, v, p->n_sample_types);
	for (size_t i = 0; i < s->n_labels; i++) {	/* Label: key = 1, str = 2 */
		pb_uint(&label, 1, strtab_add(t, s->labels[i].key));
		pb_uint(&label, 2, strtab_add(t, s->labels[i].str));
		put_msg(tmp, 3, &label);
	}
	pb_free(&label);
	free(v);
	put_msg(b, PROFILE_SAMPLE, tmp);
}

static void put_mapping(struct pb *b, const struct pprof_mapping *m, struct strtab *t,
			struct pb *tmp)
{
	pb_uint(tmp, 1, m->id);
	pb_uint(tmp, 2, m->start);
	pb_uint(tmp, 3, m->limit);
	pb_uint(tmp, 4, m->offset);
	pb_uint(tmp, 5, strtab_add(t, m->filename));
	pb_uint(tmp, 6, strtab_add(t, m->build_id));
	pb_uint(tmp, 7, m->has_functions);
	pb_uint(tmp, 8, m->has_filenames);
	pb_uint(tmp, 9, m->has_line_numbers);
	pb_uint(tmp, 10, m->has_inline_frames);
	put_msg(b, PROFILE_MAPPING, tmp);
}

static void put_location(struct pb *b, const struct pprof_location *l, struct pb *tmp)
{
	struct pb line = { 0 };

	pb_uint(tmp, 1, l->id);
	pb_uint(tmp, 2, l->mapping_id);
	pb_uint(tmp, 3, l->address);
	for (size_t i = 0; i < l->n_lines; i++) {
		pb_uint(&line, 1, l->lines[i].function_id);
		pb_uint(&line, 2, (uint64_t)l->lines[i].line);
		put_msg(tmp, 4, &line);
	}
	pb_free(&line);
	put_msg(b, PROFILE_LOCATION, tmp);
}

static void put_function(struct pb *b, const struct pprof_function *fn, struct strtab *t,
			 struct pb *tmp)
{
	pb_uint(tmp, 1, fn->id);
	pb_uint(tmp, 2, strtab_add(t, fn->name));
	pb_uint(tmp, 3, strtab_add(t, fn->system_name));
	pb_uint(tmp, 4, strtab_add(t, fn->filename));
	pb_uint(tmp, 5, (uint64_t)fn->start_line);
	put_msg(b, PROFILE_FUNCTION, tmp);
}

/* The whole message, string table last (field order is free in protobuf). */
static void encode(const struct pprof_profile *p, struct pb *b)
{
	struct strtab t = { 0 };
	struct pb tmp = { 0 };

	t.cap = 64;
	t.s = xmalloc(t.cap * sizeof(*t.s));
	t.s[t.n++] = "";	/* index 0: strtab_add never looks it up */
	for (size_t i = 0; i < p->n_sample_types; i++)
		put_value_type(b, PROFILE_SAMPLE_TYPE, &p->sample_types[i], &t, &tmp);
	for (size_t i = 0; i < p->n_samples; i++)
		put_sample(b, p, &p->samples[i], &t, &tmp);
	for (size_t i = 0; i < p->n_mappings; i++)
		put_mapping(b, &p->mappings[i], &t, &tmp);
	for (size_t i = 0; i < p->n_locations; i++)
		put_location(b, &p->locations[i], &tmp);
	for (size_t i = 0; i < p->n_functions; i++)
		put_function(b, &p->functions[i], &t, &tmp);
	if (p->period_type.type || p->period_type.unit)
		put_value_type(b, PROFILE_PERIOD_TYPE, &p->period_type, &t, &tmp);
	pb_uint(b, PROFILE_PERIOD, (uint64_t)p->period);
	pb_uint(b, PROFILE_COMMENT, strtab_add(&t, p->comment));
	pb_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, strtab_add(&t, p->default_sample_type));
	for (size_t i = 0; i < t.n; i++) {
		/* proto3 strings are UTF-8, and pprof prints them to terminals: control
		 * characters and bad bytes as \xNN, as names are (escape.h) */
		char *e = escape_needed(t.s[i]) ? escape_dup(t.s[i]) : NULL;
		const char *str = e ? e : t.s[i];

		pb_bytes(b, PROFILE_STRING_TABLE, str, strlen(str));
		free(e);
	}
	pb_free(&tmp);
	free(t.s);
	free(t.hash);
}

/* Deflate b into f as one gzip member; -1 when writing failed. */
static int write_gzip(const struct pb *b, FILE *f)
{
	unsigned char out[1 << 16];
	z_stream z = { 0 };
	int ret;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		die(EXIT_NO_REPORT, "out of memory");
	z.next_in = b->p;
	z.avail_in = (uInt)b->len;	/* profiles stay far below 4 GiB */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		ret = deflate(&z, Z_FINISH);
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			deflateEnd(&z);
			return -1;
		}
	} while (ret == Z_OK);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -1;
}

int pprof_write(const struct pprof_profile *p, FILE *f)
{
	struct pb b = { 0 };
	int ret;

	encode(p, &b);
	ret = write_gzip(&b, f);
	pb_free(&b);
	return ret;
}
