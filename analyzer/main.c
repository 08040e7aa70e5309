/*
 * heapprof-analyze: options and wiring. Opens the memory (a core or raw images),
 * scans it for heapprof headers, symbolizes the stacks and writes the report.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>		/* malloc_trim */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "ages.h"
#include "alloc.h"
#include "graph.h"
#include "image.h"
#include "leaks.h"
#include "lifetimes.h"
#include "memory.h"
#include "options.h"
#include "pinned.h"
#include "report.h"
#include "scan.h"
#include "sym.h"
#include "spool.h"
#include "timeline.h"
#include "util.h"
#include "views.h"

static const char *machine_name(uint16_t m)
{
	static char buf[32];

	switch (m) {
	case EM_386: return "i386";
	case EM_MIPS: return "mips";
	case EM_PPC: return "powerpc";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390";
	case EM_ARM: return "arm";
	case EM_X86_64: return "x86_64";
	case EM_AARCH64: return "aarch64";
	case EM_RISCV: return "riscv";
	}
	snprintf(buf, sizeof(buf), "machine %u", m);
	return buf;
}

/* Open the memory the user named; exits with a one-line reason when it cannot. */
static void open_memory(const struct options *o, struct image *img, char **source)
{
	char err[1024];
	unsigned wsize;
	bool be, pie;
	uint16_t machine;

	/* inflating a gzip core may warn; a run that fails still says one line */
	warn_hold();
	if (image_program_info(o->program, &wsize, &be, &machine, &pie, err, sizeof(err)) < 0)
		die(EXIT_NO_REPORT, "%s", err);
	if (o->nraw) {
		struct image_raw_file files[OPTIONS_MAX_LIST];
		struct image_spec spec = { .raw = files, .nraw = o->nraw, .wsize = wsize,
					   .big_endian = be, .machine = machine };
		size_t len = 1;

		for (size_t i = 0; i < o->nraw; i++) {
			files[i] = (struct image_raw_file){ o->raw[i].path, o->raw[i].base };
			len += strlen(o->raw_spec[i]) + 2;
		}
		if (image_open(img, &spec, err, sizeof(err)) < 0)
			die(EXIT_NO_REPORT, "%s", err);
		*source = xcalloc(1, len);
		for (size_t i = 0; i < o->nraw; i++)
			strcat(strcat(*source, i ? ", " : ""), o->raw_spec[i]);
		if (pie && !o->have_load_base)
			warn("'%s' is position-independent: without --load-base its frames are "
			     "not symbolized", o->program);
		return;
	}
	if (image_open(img, &(struct image_spec){ .core = o->core }, err, sizeof(err)) < 0)
		die(EXIT_NO_REPORT, "%s", err);
	*source = xstrdup(o->core);
	if (img->machine != machine || img->wsize != wsize)
		die(EXIT_NO_REPORT, "'%s' is a %s core but '%s' is a %s program (wrong PROGRAM?)",
		    o->core, machine_name(img->machine), o->program, machine_name(machine));
}

/* Which segment was left out for which, and whether a block could hide in it. */
static void warn_overlap(const struct seg_overlap *o)
{
	char left[4200], kept[4200];	/* a path of up to PATH_MAX, and words */

	if (o->file)
		snprintf(left, sizeof(left), "raw image '%s'", o->file);
	else
		snprintf(left, sizeof(left), "core segment at file offset %#llx",
			 (unsigned long long)o->offset);
	if (o->kept_file)
		snprintf(kept, sizeof(kept), "'%s'", o->kept_file);
	else
		snprintf(kept, sizeof(kept), "the one at file offset %#llx",
			 (unsigned long long)o->kept_offset);
	if (o->hidden)
		warn("%s [%#llx, %#llx) overlaps %s [%#llx, %#llx) and was left out: %llu of its "
		     "bytes differ from or lie outside it, and blocks there are not counted",
		     left, (unsigned long long)o->vaddr, (unsigned long long)o->end, kept,
		     (unsigned long long)o->kept_vaddr, (unsigned long long)o->kept_end,
		     (unsigned long long)o->hidden);
	else
		warn("%s [%#llx, %#llx) overlaps %s [%#llx, %#llx) and was left out: it holds the "
		     "same bytes, so no block is hidden", left, (unsigned long long)o->vaddr,
		     (unsigned long long)o->end, kept, (unsigned long long)o->kept_vaddr,
		     (unsigned long long)o->kept_end);
}

/* Said once a report is certain: a failing run gets one line, not these first. */
static void warn_missing(const struct image *img, const char *source)
{
	if (img->truncated_segs)
		warn("'%s' is truncated: %u segments cut short; blocks there are not counted",
		     source, img->truncated_segs);
	if (img->missing_bytes)
		warn("%llu bytes of memory are not in '%s' (not dumped or cut off); blocks there "
		     "are not counted", (unsigned long long)img->missing_bytes, source);
	if (img->overlap_segs)
		warn("%u %s overlap others and were left out", img->overlap_segs, img->segs_name);
	for (unsigned i = 0; i < img->overlap_segs && i < IMAGE_MAX_OVERLAPS; i++)
		warn_overlap(&img->overlaps[i]);
	if (img->overlap_segs > IMAGE_MAX_OVERLAPS)
		warn("... and %u more overlapping %ss", img->overlap_segs - IMAGE_MAX_OVERLAPS,
		     img->seg_name);
}

static void no_blocks(const struct options *o, const struct image *img,
		      const struct scan_result *s, const char *source)
{
	uint64_t rejected = s->join.damaged;
	enum decode_reject most = REJ_CHECK;

	for (int i = 0; i < REJ_NREASONS; i++) {
		rejected += s->rejected[i];
		if (s->rejected[i] > s->rejected[most])
			most = (enum decode_reject)i;
	}
	if (s->other_version && s->rejected[REJ_VERSION] == rejected)
		die(EXIT_NO_REPORT, "'%s' holds heapprof blocks of format version %u; this "
		    "analyzer reads versions %d and %d", source, s->other_version,
		    HP_FORMAT_VERSION, HP2_FORMAT_VERSION);
	if (rejected)
		die(EXIT_NO_REPORT, "no valid heapprof block in '%s' (%llu candidates rejected, "
		    "most for: %s)", source, (unsigned long long)rejected,
		    decode_reason(most));
	/* the process record says heapprof.so ran: nothing was live, or nothing sampled */
	if (s->join.have_proc && s->join.proc.sample_period)
		die(EXIT_NO_REPORT, "heapprof.so was loaded in '%s' (pid %u) but no sampled block "
		    "was live (one block per about %llu bytes has a header)", source,
		    s->join.proc.pid, (unsigned long long)s->join.proc.sample_period);
	/* every call heapprof's malloc tags leaves a site record, freed or not */
	if (s->join.have_proc && !s->join.site_recs)
		die(EXIT_NO_REPORT, "heapprof.so was loaded in '%s' (pid %u) but recorded no "
		    "allocation: its malloc was never called (another allocator before it in "
		    "LD_PRELOAD?) or tagging was off", source, s->join.proc.pid);
	if (s->join.have_proc)
		die(EXIT_NO_REPORT, "heapprof.so was loaded in '%s' (pid %u) but no block was "
		    "live: everything allocated had been freed", source, s->join.proc.pid);
	if (img->truncated_segs)
		die(EXIT_NO_REPORT, "no heapprof blocks in '%s', which is truncated (%u segments "
		    "cut short)", source, img->truncated_segs);
	die(EXIT_NO_REPORT, "no heapprof blocks in '%s' (was %s run with "
	    "LD_PRELOAD=heapprof.so?)", source, o->program);
}

/* The region's known names, for the message when --region names none of them. */
static void __attribute__((noreturn)) unknown_region(const struct scan_result *s,
						     const char *name, const char *source)
{
	size_t n, len = 1;
	const struct decoded *rec = collect_records(&s->found, DEC_REGION, &n);
	char *list;

	if (!n)
		die(EXIT_NO_REPORT, "no region '%s' in '%s': it records no regions", name, source);
	for (size_t i = 0; i < n; i++)
		len += strlen(rec[i].region.name) + 2;
	list = xcalloc(1, len);
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(rec[i].region.name, rec[i - 1].region.name))
			strcat(strcat(list, i ? ", " : ""), rec[i].region.name);
	die(EXIT_NO_REPORT, "no region '%s' in '%s' (known regions: %s)", name, source, list);
}

/* Whether the dump holds what the options ask for; exits with one line when not. */
static void check_data(const struct options *o, const struct image *img,
		       const struct scan_result *s, const char *source)
{
	enum report_metric m = o->report.metric;

	if (s->join.region_unknown)
		unknown_region(s, o->join.region, source);
	if (o->report.events) {
		if (!s->join.rings)
			die(EXIT_NO_REPORT, "no event rings in '%s' (run with HEAPPROF_EVENTS=N)",
			    source);
		return;
	}
	if (m == METRIC_ALLOC_TIME && !s->join.have_time)
		die(EXIT_NO_REPORT, "alloc_time was not recorded (run with HEAPPROF_TIME=1)");
	if (m == METRIC_INUSE_SPACE || m == METRIC_INUSE_OBJECTS || !s->join.counted_sites) {
		if (!s->blocks)
			no_blocks(o, img, s, source);
	}
	if (m != METRIC_INUSE_SPACE && m != METRIC_INUSE_OBJECTS && m != METRIC_RETAINED_SPACE &&
	    !s->join.counted_sites)
		die(EXIT_NO_REPORT, "'%s' holds no allocation counts (blocks of format version 1, "
		    "or a heapprof.so before counters)", source);
}

static void warn_rejected(const struct scan_result *s)
{
	const struct join_info *j = &s->join;

	for (int i = 0; i < REJ_NREASONS; i++)
		if (s->rejected[i])
			warn("skipped %llu candidates: %s", (unsigned long long)s->rejected[i],
			     decode_reason((enum decode_reject)i));
	/* v2 tags that fail their check are mostly words that share 16 bits with the
	 * magic; only those naming a site that exists are worth a word */
	if (j->damaged)
		warn("skipped %llu damaged headers: bad check value on a block of a known site",
		     (unsigned long long)j->damaged);
	if (j->unknown_blocks)
		warn("%llu blocks (%llu bytes) have no readable stack record: shown as "
		     "[unknown stack]", (unsigned long long)j->unknown_blocks,
		     (unsigned long long)j->unknown_bytes);
	if (j->conflicts)
		warn("%llu stack or site ids are claimed by records that differ; their blocks are "
		     "under [unknown stack]", (unsigned long long)j->conflicts);
	if (j->unweighted)
		warn("%llu blocks are marked sampled but no process record gives the sample "
		     "period: counted one for one", (unsigned long long)j->sampled_blocks);
	if (j->procs_differ)
		warn("%u process records differ; using the one at 0x%llx", j->nprocs,
		     (unsigned long long)j->proc.addr);
}

static void write_report(const struct options *o, const struct report *r)
{
	FILE *f = stdout;

	if (o->output && !(f = fopen(o->output, "w")))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output, strerror(errno));
	if (o->format->write(r, f) < 0 || fflush(f) != 0 || (f != stdout && fclose(f) != 0))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output ? o->output : "stdout",
		    strerror(errno));
}

static void write_by(const struct options *o, const struct report *r)
{
	FILE *f = stdout;

	if (o->output && !(f = fopen(o->output, "w")))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output, strerror(errno));
	if (views_write_by(r, o->view.by, o->by_top, f) < 0 || fflush(f) != 0 ||
	    (f != stdout && fclose(f) != 0))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output ? o->output : "stdout",
		    strerror(errno));
}

static bool needs_graph(const struct options *o)
{
	return o->why || o->leak_mask || o->report.metric == METRIC_RETAINED_SPACE;
}

struct session;
static void write_why(const struct options *o, struct session *s);

struct sym_job {
	struct sym_opts opts;
	struct sym *sym;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t *pcs;		/* the stack records' native frames */
	size_t npcs;
	bool given;		/* pcs are given, or the scan is over without */
};

static void *sym_thread(void *arg)
{
	struct sym_job *job = arg;

	job->sym = sym_open(&job->opts);
	pthread_mutex_lock(&job->lock);
	while (!job->given)
		pthread_cond_wait(&job->cond, &job->lock);
	pthread_mutex_unlock(&job->lock);
	sym_lookup_ahead(job->sym, job->pcs, job->npcs);	/* as sym_stack will */
	free(job->pcs);
	job->pcs = NULL;
	return NULL;
}

static void give_pcs(struct sym_job *job, uint64_t *pcs, size_t n)
{
	pthread_mutex_lock(&job->lock);
	if (!job->given) {
		job->pcs = pcs;
		job->npcs = n;
		job->given = true;
		pcs = NULL;
	}
	pthread_cond_signal(&job->cond);
	pthread_mutex_unlock(&job->lock);
	free(pcs);
}

/* The scan's found hook: every stack record's native frames to the symbol thread, to
 * name while the scan joins the blocks to their stacks. */
static void found_stacks(const struct collect *c, void *arg)
{
	size_t n = 0, k = 0;
	uint64_t *pcs;

	for (size_t i = 0; i < c->nrecs; i++)
		if (c->recs[i].kind == DEC_STACK)
			n += c->recs[i].stack.nframes;
	pcs = xmalloc((n ? n : 1) * sizeof(*pcs));
	for (size_t i = 0; i < c->nrecs; i++) {
		const struct decoded_stack *s = &c->recs[i].stack;

		if (c->recs[i].kind != DEC_STACK)
			continue;
		for (unsigned j = 0; j < s->nframes && !hp2_is_pyframe_word(s->pcs[j]); j++)
			if (s->pcs[j])
				pcs[k++] = s->pcs[j];
	}
	give_pcs(arg, pcs, k);
}

/*
 * Reading the modules and their debug info takes tens of milliseconds whatever the
 * core's size; it runs beside the scan, which never touches libelf, and names the
 * stacks' frames beside the join. Its warnings wait until a report is certain.
 */
static struct sym *scan_and_open_symbols(const struct options *o, const struct image *img,
					 struct scan_result *scan)
{
	struct sym_job job = { .opts = {
		.program = o->program, .img = img, .sysroot = o->sysroot,
		.debug_dirs = o->debug_dirs, .ndebug_dirs = o->ndebug_dirs,
		.have_load_base = o->have_load_base, .load_base = o->load_base,
		.modules = o->modules, .nmodules = o->nmodules, .quiet = util_quiet,
		.python = o->python } };
	struct join_opts join = o->join;
	pthread_t t;
	bool threaded;

	pthread_mutex_init(&job.lock, NULL);
	pthread_cond_init(&job.cond, NULL);
	warn_hold();
	threaded = pthread_create(&t, NULL, sym_thread, &job) == 0;
	if (threaded) {
		join.found = found_stacks;
		join.found_arg = &job;
	}
	(needs_graph(o) ? scan_image_graph_with :
	 o->memory || o->age || o->lifetimes || o->older_than_ms >= 0 ? scan_image_blocks_with :
	 scan_image_with)(img, o->jobs, &join, scan);
	give_pcs(&job, NULL, 0);	/* over: none, if the scan gave none */
	if (threaded)
		pthread_join(t, NULL);
	else
		sym_thread(&job);
	pthread_cond_destroy(&job.cond);
	pthread_mutex_destroy(&job.lock);
	return job.sym;
}

/*
 * Give the free pages inside the heap back: the leak classes' tables (sizes of every
 * block, four times over) leave holes that the dominator tree's arrays, which come
 * next, do not fit, and a heap of a million blocks kept 20 MiB of them resident.
 */
static void release_free_pages(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* One core (or raw image set) from memory to a symbolized report. */
struct session {
	struct image img;
	struct scan_result scan;
	struct sym *sym;
	char *source;
	struct leak_summary leaks;	/* --leaks */
	struct age_summary ages;	/* --age, --older-than */
	struct lifetimes lifetimes;	/* --lifetimes */
	struct alloc alloc;		/* --leaks, --memory */
	struct memory_summary memory;
	struct pinned pinned;		/* --memory */
	struct graph *graph;		/* --leaks, --metric=retained_space, --why */
	struct graph_keying keying;	/* how retained bytes and --why pick blocks */
	struct timeline_data tl;	/* the timeline and, with --peak, the peak */
	struct report r;
	bool python;			/* some stack holds Python frames */
};

/*
 * Does a stack hold Python frames? Then stacks of different words can show the same
 * frames (--python=native or python leave some out; two records may name one line),
 * so the report is built whole and its equal stacks merged, as a view's are.
 */
static bool has_python(const struct scan_result *scan)
{
	size_t n;
	struct stack **all = stacks_list(&scan->stacks, &n);
	bool found = false;

	for (size_t i = 0; i < n && !found; i++)
		for (unsigned k = 0; k < all[i]->nframes && !found; k++)
			found = hp2_is_pyframe_word(all[i]->pcs[k]);
	free(all);
	return found;
}

/* The timeline, and with --peak the peak table in place of the blocks found. */
static void read_timeline(const struct options *o, struct session *s)
{
	const char *why;

	timeline_read(&s->tl, &s->r, &s->scan, &s->img);
	if (o->timeline && !s->tl.n)
		warn("'%s' holds no timeline (a heapprof.so before timelines, or "
		     "HEAPPROF_TIMELINE=0)", s->source);
	if (o->peak && !timeline_peak_apply(&s->tl, &s->scan, &s->img, &o->join, &why))
		die(EXIT_NO_REPORT, "'%s' %s", s->source, why);
}

static void make_report(const struct options *o, const struct report_opts *ro, struct session *s)
{
	struct report_opts with;

	memset(s, 0, sizeof(*s));
	open_memory(o, &s->img, &s->source);
	s->sym = scan_and_open_symbols(o, &s->img, &s->scan);
	sym_add_unloaded(s->sym, s->scan.found.mods, s->scan.found.nmods);
	check_data(o, &s->img, &s->scan, s->source);
	warn_release();
	warn_missing(&s->img, s->source);
	warn_rejected(&s->scan);
	s->r.program = sym_program(s->sym) ? sym_program(s->sym) : o->program;
	s->r.source = s->source;
	/* --leaks and --older-than regroup the stacks without their counters */
	report_count(&s->r, &s->scan);
	read_timeline(o, s);
	s->r.regrouped = o->leak_mask || o->older_than_ms >= 0;
	if (o->age || o->older_than_ms >= 0) {
		ages_apply(&s->img, &s->scan, o->older_than_ms, &s->ages);
		s->r.ages = &s->ages;
	}
	if (o->memory || needs_graph(o))
		alloc_open(&s->alloc, &s->img, s->sym, &s->scan.list, o->sysroot);
	if (o->memory) {
		memory_apply(&s->img, s->sym, &s->alloc, &s->memory);
		/* before graph_build and leaks_apply sort the blocks alloc's chunks name */
		pinned_apply(&s->pinned, &s->alloc, &s->img, &s->scan, s->sym, o->report.top);
		s->memory.pinned = &s->pinned;
		s->r.memory = &s->memory;
	}
	if (!o->why)	/* read by --why, after the report */
		alloc_drop_chunks(&s->alloc);
	if (needs_graph(o))	/* once: every consumer below shares it */
		s->graph = graph_build(&s->img, &s->scan, &s->alloc);
	if (!o->why)	/* the roots are marked */
		alloc_drop_nonroot(&s->alloc);
	s->keying = (struct graph_keying){ .by_thread = o->join.by_thread,
					   .region = o->join.region != NULL,
					   .region_id = s->scan.join.region_id };
	if (o->leak_mask) {
		leaks_apply(s->graph, &s->scan, s->sym, &s->alloc, o->supp, o->leak_mask,
			    &s->leaks);
		s->r.leaks = &s->leaks;
		s->keying.flags = leaks_block_flags;
		release_free_pages();
	}
	if (o->report.metric == METRIC_RETAINED_SPACE && !o->why)
		graph_add_retained(s->graph, &s->scan, &s->keying);
	with = *ro;
	if (o->lifetimes) {	/* after --older-than marked the blocks it leaves out */
		lifetimes_apply(&s->img, &s->scan, &s->lifetimes);
		s->r.lifetimes = &s->lifetimes.sum;
		with.lifetimes = &s->lifetimes;
	}
	if ((s->python = has_python(&s->scan))) {
		with.top = 0;	/* main merges and cuts */
		with.min_percent = 0;
	}
	if (!o->why) {	/* the report reads the stacks alone: the graph and the block
			 * list (60 bytes a block and more) go before symbolization's
			 * memory comes */
		graph_free(s->graph);
		s->graph = NULL;
		free(s->scan.list.v);
		s->scan.list = (struct scan_blocks){ 0 };
	}
	report_build(&s->r, &s->scan, &s->img, s->sym, &with);
	timeline_attach(&s->r, &s->tl);
	s->r.show_timeline = o->timeline;
}

static void write_why(const struct options *o, struct session *s)
{
	FILE *f = stdout;
	char err[300];
	int rc;

	if (o->output && !(f = fopen(o->output, "w")))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output, strerror(errno));
	rc = graph_why(s->graph, &s->scan, s->sym, &s->keying, o->why, o->report.top, f, err,
		       sizeof(err));
	if (rc < 0)
		die(EXIT_USAGE, "%s", err);
	if (rc > 0)
		die(EXIT_NO_REPORT, "no live block matches '%s'", o->why);
	if (fflush(f) != 0 || (f != stdout && fclose(f) != 0))
		die(EXIT_NO_REPORT, "cannot write '%s': %s", o->output ? o->output : "stdout",
		    strerror(errno));
}

static void end_session(struct session *s)
{
	report_free(&s->r);
	timeline_free(&s->tl);
	lifetimes_free(&s->lifetimes);
	graph_free(s->graph);
	pinned_free(&s->pinned);
	alloc_close(&s->alloc);
	sym_close(s->sym);
	scan_result_free(&s->scan);
	image_close(&s->img);
	free(s->source);
}

/* --base: the same program's other core, with NEW's symbol options */
static void make_base(const struct options *o, const struct report_opts *ro, struct session *s)
{
	struct options *b = xcalloc(1, sizeof(*b));

	*b = *o;
	b->core = o->peak_diff ? o->core : o->base;
	b->peak = b->peak_diff = false;	/* --peak-diff: the same dump, now */
	if (o->base_program)
		b->program = o->base_program;
	b->nraw = 0;
	b->nmodules = 0;
	b->have_load_base = false;
	make_report(b, ro, s);
	free(b);
}

int main(int argc, char **argv)
{
	struct options o;
	struct session news, olds;
	struct report d, *r = &news.r;
	struct report_opts ro;

	int status = 0;

	options_parse(&o, argc, argv);
	ro = o.report;
	if (o.base || o.peak_diff || views_active(&o.view)) {
		ro.top = 0;	/* the view or the difference cuts, later */
		ro.min_percent = 0;
	}
	make_report(&o, &ro, &news);
	if (o.fail_on_leak && news.leaks.blocks[LEAK_DEFINITE])
		status = EXIT_LEAKS;
	if (o.base || o.peak_diff) {
		make_base(&o, &ro, &olds);
		views_apply(&news.r, &o.view, false);
		views_apply(&olds.r, &o.view, false);
		diff_build(&d, &news.r, &olds.r);
		d.peak = news.r.peak;
		views_cut(&d, o.view.by != BY_NONE ? 0 : o.view.top, 0);
		r = &d;
	} else if (views_active(&o.view) || (news.python && !o.report.events)) {
		views_apply(&news.r, &o.view, true);
	}
	if (o.why) {
		write_why(&o, &news);
	} else if (o.view.by != BY_NONE && o.format == &out_text) {
		write_by(&o, r);
	} else {
		write_report(&o, r);
	}
	if (r->peak && !(o.format->can & OUT_SUMMARY) && !util_quiet)
		fprintf(stderr, "heapprof-analyze: peak: %" PRIu64 " bytes in %" PRIu64 " blocks at %.3f s (now: %" PRIu64
		     " bytes in %" PRIu64 " blocks)\n", r->peak->bytes, r->peak->blocks,
		     r->peak->time_s, r->peak->now_bytes, r->peak->now_blocks);
	if (o.base || o.peak_diff) {
		diff_free(&d);
		end_session(&olds);
	}
	end_session(&news);
	options_free(&o);
	return status;
}
