/*
 * heapprof's own memory (memory_own.h): the map table's sums of heapprof's mappings
 * by kind, in words and keys, and the headers counted from the blocks the scan listed.
 */
#include <inttypes.h>
#include <stdbool.h>

#include "fmt.h"
#include "heapprof_format.h"
#include "maps.h"
#include "memory_own.h"
#include "scan.h"

/* HP2_OWN_* in words (text) and keys (JSON); NULL: a value never written (maps.c
 * counts it as not said) */
static const char *const own_words[HP2_OWN_KINDS] = {
	"not said (older heapprof.so)", "stack records", "site records", "Python name records",
	"process and thread records", "timeline", "peak tables", "event rings",
	"slab tables (pymalloc)", "per-thread state", "lookup directories", "map table",
	"replay memory", "unwind rule cache", "signal stacks", NULL, "out-of-memory reserve"
};
static const char *const own_keys[HP2_OWN_KINDS] = {
	"unknown", "stacks", "sites", "python_names", "records", "timeline", "peak",
	"rings", "slabs", "threads", "directories", "map_table", "replay", "unwind_cache",
	"signal_stacks", NULL, "reserve"
};

void memory_own_headers(const struct scan_blocks *list, uint64_t *bytes, uint64_t *blocks)
{
	*bytes = *blocks = 0;
	for (size_t i = 0; i < list->n; i++)
		if (list->v[i].version != SCAN_UNTAGGED && list->v[i].below) {
			*bytes += list->v[i].below;
			(*blocks)++;
		}
}

void memory_own_text(const struct maps *m, uint64_t header_bytes, uint64_t header_blocks,
		     FILE *f)
{
	char a[32], b[32], c[32], d[32];
	uint64_t mapped = m && m->found ? m->heapprof_bytes : 0;

	fprintf(f, "  heapprof's own: %s bytes, %s mapped for its tables and %s in headers "
		"of %s blocks\n", fmt_thousands(mapped + header_bytes, a),
		fmt_thousands(mapped, b), fmt_thousands(header_bytes, c),
		fmt_thousands(header_blocks, d));
	for (unsigned k = 1; k <= HP2_OWN_KINDS; k++) {
		unsigned i = k % HP2_OWN_KINDS;	/* "not said" last */

		if (own_words[i] && m && m->found && m->own[i])
			fprintf(f, "    %-30s %15s bytes\n", own_words[i], fmt_thousands(m->own[i], a));
	}
	fprintf(f, "    %-30s %15s bytes\n", "headers", fmt_thousands(header_bytes, a));
}

void memory_own_json(const struct maps *m, uint64_t header_bytes, uint64_t header_blocks,
		     FILE *f)
{
	bool found = m && m->found;

	fprintf(f, ",\n    \"heapprof\": {\"known\": %s, \"bytes\": %" PRIu64 ", \"mapped_bytes\": %"
		PRIu64 ", \"header_bytes\": %" PRIu64 ", \"header_blocks\": %" PRIu64
		",\n      \"components\": [", found ? "true" : "false",
		(found ? m->heapprof_bytes : 0) + header_bytes, found ? m->heapprof_bytes : 0,
		header_bytes, header_blocks);
	for (unsigned k = 1; k <= HP2_OWN_KINDS; k++) {
		unsigned i = k % HP2_OWN_KINDS;

		if (!own_keys[i])
			continue;
		fprintf(f, "\n        {\"component\": \"%s\", \"name\": \"%s\", \"bytes\": %" PRIu64
			"},", own_keys[i], own_words[i], found ? m->own[i] : 0);
	}
	fprintf(f, "\n        {\"component\": \"headers\", \"name\": \"headers\", \"bytes\": %"
		PRIu64 ", \"blocks\": %" PRIu64 "}]}", header_bytes, header_blocks);
}
