/*
 * heapprof's own memory, for --memory: its mappings by what they hold (the map table's
 * HP2_OWN_* names, maps.h) and the headers of the blocks found. Writes its part of the
 * MEMORY section; knows nothing of the other kinds of memory.
 */
#ifndef HP_MEMORY_OWN_H
#define HP_MEMORY_OWN_H

#include <stdint.h>
#include <stdio.h>

struct maps;
struct scan_blocks;

/* Header bytes and headed blocks of the blocks found (slab blocks have no header). */
void memory_own_headers(const struct scan_blocks *list, uint64_t *bytes, uint64_t *blocks);

/* The text lines ("  heapprof's own: ..." and one per kind held) and the JSON member
 * ",\n    \"heapprof\": {...}"; m may be NULL or hold no table. */
void memory_own_text(const struct maps *m, uint64_t header_bytes, uint64_t header_blocks,
		     FILE *f);
void memory_own_json(const struct maps *m, uint64_t header_bytes, uint64_t header_blocks,
		     FILE *f);

#endif
