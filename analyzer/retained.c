/*
 * --metric=retained_space: each stack's retained bytes, the blocks its blocks dominate
 * in the heap graph (graph_dom.c does the work), added to the stacks the report shows.
 */
#include <stdint.h>

#include "analysis.h"

static bool retained_wanted(const struct options *o)
{
	return o->report.metric == METRIC_RETAINED_SPACE;
}

/* A stack's retained bytes overlap another's (a block's dominators all retain it):
 * its share is of the live heap, every block of the graph, not of their sum. */
static void *retained_run(struct session *s)
{
	uint64_t whole = 0;

	graph_add_retained(s->graph, &s->scan, &s->keying);
	for (size_t i = 0; i < s->graph->n; i++)
		whole += s->graph->b[i].size;
	s->ro.whole = whole;
	return NULL;
}

/* keyed as the report's stacks, by leak class too; it takes the dominator numbering
 * apart for room */
const struct analysis retained_analysis = {
	"retained", IN_GRAPH | IN_LIST | IN_DOMINATORS | IN_MARKS | IN_KEYING, IN_STACKS,
	IN_DOMINATORS, retained_wanted, retained_run, NULL, NULL
};
