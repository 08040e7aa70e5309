/* Block ages (see ages.h): one pass over the block list, a second join if filtered. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ages.h"
#include "analysis.h"
#include "collect.h"
#include "decode.h"
#include "fmt.h"
#include "image.h"
#include "json.h"
#include "util.h"

static const uint64_t bucket_top_ms[AGE_BUCKETS - 1] = {
	1000, 10000, 60000, 600000, 3600000, 21600000, 86400000,
};
static const char *const bucket_name[AGE_BUCKETS] = {
	"under 1 s", "1-10 s", "10 s-1 min", "1-10 min", "10 min-1 h", "1-6 h", "6 h-1 day",
	"over 1 day",
};

bool ages_block_ms(const struct hp_block *b, uint64_t *ms)
{
	if (b->version == 2) {
		*ms = b->age_ms;
		return true;
	}
	*ms = b->birth_ns / 1000000;
	return b->birth_ns != 0;
}

void ages_apply(const struct image *img, struct scan_result *scan, int64_t older_than_ms,
		bool keep_out, struct age_summary *sum)
{
	struct decode_buf *buf = xmalloc(sizeof(*buf));
	uint64_t newest[3] = { 0 };	/* by version */

	memset(sum, 0, sizeof(*sum));
	sum->older_than_ms = older_than_ms;
	for (size_t i = 0; i < scan->list.n; i++) {
		struct decoded d;
		uint64_t ms;

		if (scan_block_decoded(img, &scan->list.v[i], buf, &d) && ages_block_ms(&d.block, &ms) &&
		    ms > newest[d.block.version])
			newest[d.block.version] = ms;
	}
	sum->newest_ms = newest[2];
	/* v2 ages count from when the dump was taken, where it says (a snapshot's time
	 * note, as the join took it); v1 times are another clock's */
	sum->taken = scan->join.now_from == NOW_TAKEN;
	if (sum->taken)
		newest[2] = scan->join.now_ms;
	sum->now_ms = newest[2];
	for (size_t i = 0; i < scan->list.n; i++) {
		struct decoded d;
		uint64_t ms, age;
		unsigned k = 0;

		/* left out unless kept below: the heap graph's consumers skip it too; one
		 * left out before (--focus=type:) stays out and out of the ages */
		if (keep_out && scan->list.v[i].out)
			continue;
		scan->list.v[i].out = older_than_ms >= 0;
		if (!scan_block_decoded(img, &scan->list.v[i], buf, &d))
			continue;
		if (!ages_block_ms(&d.block, &ms)) {
			sum->untimed_bytes += d.block.size;
			sum->untimed_blocks++;
			continue;
		}
		age = newest[d.block.version] > ms ? newest[d.block.version] - ms : 0;
		while (k < AGE_BUCKETS - 1 && age >= bucket_top_ms[k])
			k++;
		sum->bytes[k] += d.block.size;
		sum->blocks[k]++;
		if (older_than_ms >= 0 && age >= (uint64_t)older_than_ms) {
			scan->list.v[i].out = 0;
			sum->kept_bytes += d.block.size;
			sum->kept_blocks++;
		}
	}
	free(buf);
	if (older_than_ms >= 0)
		scan_restack(img, scan);
}

const char *ages_bucket_name(unsigned k)
{
	return k < AGE_BUCKETS ? bucket_name[k] : "?";
}

static void ages_text(const struct report *r, const void *data, FILE *f)
{
	const struct age_summary *sum = data;
	char a[32], b[32];

	(void)r;
	fprintf(f, "  ages:       of the live blocks as found (not weighted), measured from %s\n",
		sum->taken ? "when the snapshot was taken" :
			     "the newest one's allocation (the dump says not when it was taken)");
	for (unsigned k = 0; k < AGE_BUCKETS; k++)
		if (sum->blocks[k])
			fprintf(f, "              %-11s %s bytes in %s blocks\n", bucket_name[k],
				fmt_thousands(sum->bytes[k], a),
				fmt_thousands(sum->blocks[k], b));
	if (sum->untimed_blocks)
		fprintf(f, "              no time     %s bytes in %s blocks\n",
			fmt_thousands(sum->untimed_bytes, a),
			fmt_thousands(sum->untimed_blocks, b));
	if (sum->older_than_ms >= 0)
		fprintf(f, "  older than: %lld ms: %s bytes in %s blocks shown\n",
			(long long)sum->older_than_ms, fmt_thousands(sum->kept_bytes, a),
			fmt_thousands(sum->kept_blocks, b));
}

static void ages_json(const struct report *r, const void *data, const struct report_out *o)
{
	const struct age_summary *a = data;
	FILE *f = o->f;

	(void)r;
	fputs("  \"ages\": {\"buckets\": [", f);
	for (unsigned k = 0; k < AGE_BUCKETS; k++) {
		fputs(k ? ", " : "", f);
		fputs("{\"age\": ", f);
		json_str(bucket_name[k], false, f);
		fprintf(f, ", \"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 "}", a->bytes[k],
			a->blocks[k]);
	}
	fprintf(f, "],\n    \"untimed_bytes\": %" PRIu64 ", \"untimed_blocks\": %" PRIu64
		", \"newest_ms\": %" PRIu64 ", \"now_ms\": %" PRIu64 ", \"now\": \"%s\""
		", \"older_than_ms\": ", a->untimed_bytes, a->untimed_blocks, a->newest_ms,
		a->now_ms, a->taken ? "snapshot" : "newest block");
	if (a->older_than_ms >= 0)
		fprintf(f, "%" PRId64 ", \"kept_bytes\": %" PRIu64 ", \"kept_blocks\": %" PRIu64,
			a->older_than_ms, a->kept_bytes, a->kept_blocks);
	else
		fputs("null", f);
	fputs("},\n", f);
}

/* the page's compact form: [name, bytes, blocks] per bucket */
static void ages_html(const struct report *r, const void *data, const struct report_out *o)
{
	const struct age_summary *a = data;
	FILE *f = o->f;

	(void)r;
	fputs(",\"ages\":[", f);
	for (unsigned k = 0; k < AGE_BUCKETS; k++) {
		fputs(k ? ",[" : "[", f);
		json_str(bucket_name[k], true, f);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 "]", a->bytes[k], a->blocks[k]);
	}
	fputs("]", f);
}

const struct section_ops ages_section = {
	.name = "ages", .gives = "an age summary", .text = ages_text, .json = ages_json,
	.html = ages_html,
};

/* ---- the row --------------------------------------------------------------------- */

static bool ages_wanted(const struct options *o)
{
	return o->age || o->older_than_ms >= 0;
}

static void *ages_run(struct session *s)
{
	struct age_summary *sum = xmalloc(sizeof(*sum));

	ages_apply(&s->img, &s->scan, s->o->older_than_ms,
		   s->o->view.focus_type || s->o->view.ignore_type, sum);
	if (s->o->older_than_ms >= 0)
		s->r.regrouped = true;	/* its stacks carry no counters */
	return sum;
}

/* --older-than marks the blocks it leaves out and regroups the stacks */
const struct analysis ages_analysis = {
	"ages", IN_LIST | IN_TYPED, IN_MARKS | IN_STACKS, IN_COUNTERS, ages_wanted, ages_run, free,
	&ages_section
};
