/*
 * Untagged chunks as blocks: every chunk the allocator holds in use with no heapprof
 * header (a core of a program run without heapprof.so, or what was allocated before
 * tagging started) joins the block list with its usable size and no stack, under
 * "[untagged]", so the heap graph, --leaks, --by=type and --why see it as a block.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis.h"
#include "json.h"
#include "untagged.h"
#include "util.h"

struct untagged {
	uint64_t blocks, bytes;		/* the chunks made blocks */
	uint64_t meta;			/* in-use chunks of the allocator's own (left out) */
	bool only;			/* the dump has no heapprof block */
	char allocator[64];
};

/* The allocator's own bookkeeping in a chunk (a thread's cache): all of it no root. */
static bool allocator_own(const struct alloc *a, uint64_t mem, uint64_t size)
{
	size_t k = alloc_nonroot_from(a, mem);

	return k < a->nnonroot && a->nonroot[k].start <= mem && a->nonroot[k].end >= mem + size;
}

static void list_add(struct scan_blocks *l, uint64_t mem, uint64_t size)
{
	if (l->n == l->cap)
		l->v = xrealloc(l->v, (l->cap = l->cap ? 2 * l->cap : 1024) * sizeof(*l->v));
	l->v[l->n++] = (struct scan_block){ .user = mem, .size = size, .version = SCAN_UNTAGGED };
}

size_t untagged_blocks(const struct alloc *a, struct scan_blocks *l, uint64_t *bytes,
		       uint64_t *own)
{
	size_t n0 = l->n;

	*bytes = *own = 0;
	for (size_t i = 0; i < a->nchunks; i++) {
		const struct alloc_chunk *c = &a->chunks[i];
		uint64_t mem, size;

		if (c->kind != ALLOC_UNTAGGED || !alloc_usable(a, c, &mem, &size))
			continue;
		if (allocator_own(a, mem, size)) {
			++*own;
			continue;
		}
		list_add(l, mem, size);
		if (__builtin_add_overflow(*bytes, size, bytes))
			*bytes = UINT64_MAX;
	}
	return l->n - n0;
}

static void *untagged_run(struct session *s)
{
	static const uint64_t none[1];
	const struct alloc *a = &s->alloc;
	struct untagged *u = xcalloc(1, sizeof(*u));
	uint64_t *sizes = NULL;
	size_t n0 = s->scan.list.n;

	u->only = s->untagged_dump;
	if (!a->known && u->only && s->img.truncated_segs)
		die(EXIT_NO_REPORT, "no heapprof blocks in '%s', which is truncated (%u segments "
		    "cut short), and its allocator cannot be read: %s", s->source,
		    s->img.truncated_segs, a->reason);
	if (!a->known && u->only)
		die(EXIT_NO_REPORT, "no heapprof blocks in '%s' (was %s run with "
		    "LD_PRELOAD=heapprof.so?), and its allocator cannot be read: %s", s->source,
		    s->o->program, a->reason);
	if (!a->known)
		die(EXIT_NO_REPORT, "--untagged: the allocator of '%s' cannot be read: %s",
		    s->source, a->reason);
	warn_release();		/* held by session_open while no block was certain */
	alloc_describe(a, u->allocator, sizeof(u->allocator));
	u->blocks = untagged_blocks(a, &s->scan.list, &u->bytes, &u->meta);
	if (u->blocks) {
		struct stack_add add = { .bytes = u->bytes, .blocks = u->blocks,
					 .nsizes = u->blocks };

		sizes = xmalloc(u->blocks * sizeof(*sizes));
		for (size_t i = 0; i < u->blocks; i++)
			sizes[i] = s->scan.list.v[n0 + i].size;
		add.sizes = sizes;
		add.give = &sizes;
		add.give_cap = u->blocks;
		if (!s->o->join.region)	/* no region holds them */
			stacks_add_group(&s->scan.stacks,
					 &(struct stack_key){ none, 0, STACK_UNTAGGED, 0 }, &add);
	}
	free(sizes);
	s->r.untagged_blocks = u->blocks;
	s->r.untagged_bytes = u->bytes;
	s->r.untagged_only = u->only;
	s->r.allocator = u->allocator;
	return u;
}

/* the note is the report's own (report.untagged_*): JSON says what was made blocks */
static void untagged_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct untagged *u = data;

	(void)r;
	fputs("  \"untagged\": {\"allocator\": ", o->f);
	json_str(u->allocator, false, o->f);
	fprintf(o->f, ", \"only\": %s, \"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64
		", \"allocator_own_chunks\": %" PRIu64 "},\n", u->only ? "true" : "false",
		u->blocks, u->bytes, u->meta);
}

const struct section_ops untagged_section = {
	.name = "untagged", .gives = "untagged chunks", .json = untagged_json,
};

static bool untagged_wanted(const struct options *o)
{
	return o->untagged;
}

/* after the allocator's walk, whose chunks' block indices it leaves as they are; before
 * every row that counts blocks (IN_UNTAGGED in their needs) */
const struct analysis untagged_analysis = {
	"untagged", IN_LIST | IN_LIST_ORDER | IN_CHUNKS | IN_NONROOT, IN_UNTAGGED, 0, untagged_wanted,
	untagged_run, free, &untagged_section
};
