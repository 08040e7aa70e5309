/*
 * --metric=retained_space: each stack's retained bytes, the blocks its blocks dominate
 * in the heap graph (graph_dom.c does the work), added to the stacks the report shows.
 */
#include "analysis.h"

static bool retained_wanted(const struct options *o)
{
	return o->report.metric == METRIC_RETAINED_SPACE;
}

static void *retained_run(struct session *s)
{
	graph_add_retained(s->graph, &s->scan, &s->keying);
	return NULL;
}

/* keyed as the report's stacks, by leak class too; it takes the dominator numbering
 * apart for room */
const struct analysis retained_analysis = {
	"retained", IN_GRAPH | IN_LIST | IN_DOMINATORS | IN_MARKS | IN_KEYING, IN_STACKS,
	IN_DOMINATORS, retained_wanted, retained_run, NULL, NULL
};
