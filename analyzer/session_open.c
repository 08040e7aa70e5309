/*
 * A session's dump opened and read (session_int.h): the memory the options name, the
 * scan of it beside the symbols' reading, and what the dump lacks for the options,
 * said in one line (no report) or as warnings once a report is certain.
 */
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"
#include "pyobj.h"
#include "session_int.h"
#include "util.h"

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

/* No heapprof block: exits with the reason when heapprof.so ran or its blocks were all
 * rejected; else returns, and the allocator's chunks are the blocks (untagged.c). */
static void no_blocks(const struct scan_result *s, const char *source)
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

/* Whether the dump holds what the options ask for; exits with one line when not.
 * True when it holds no heapprof block, and the allocator's chunks are to be its. */
bool session_check_dump(const struct options *o, const struct scan_result *s,
			const char *source)
{
	bool untagged = false;

	enum report_metric m = o->report.metric;

	if (s->join.region_unknown)
		unknown_region(s, o->join.region, source);
	if (o->report.events) {
		if (!s->join.rings)
			die(EXIT_NO_REPORT, "no event rings in '%s' (run with HEAPPROF_EVENTS=N)",
			    source);
		return false;
	}
	if (m == METRIC_ALLOC_TIME && !s->join.have_time)
		die(EXIT_NO_REPORT, "alloc_time was not recorded (run with HEAPPROF_TIME=1)");
	if (m == METRIC_INUSE_SPACE || m == METRIC_INUSE_OBJECTS || !s->join.counted_sites) {
		if (!s->blocks) {
			no_blocks(s, source);
			untagged = true;
		}
	}
	if (m != METRIC_INUSE_SPACE && m != METRIC_INUSE_OBJECTS && m != METRIC_RETAINED_SPACE &&
	    !s->join.counted_sites)
		die(EXIT_NO_REPORT, "'%s' holds no allocation counts (blocks of format version 1, "
		    "or a heapprof.so before counters)", source);
	return untagged;
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
	if (s->slots_bad)
		warn("skipped %llu slab table slots: a size of 0 or over the stride, or an unknown "
		     "flag", (unsigned long long)s->slots_bad);
	if (j->unknown_blocks)
		warn("%llu blocks (%llu bytes) have no readable stack record: shown as "
		     "[unknown stack]", (unsigned long long)j->unknown_blocks,
		     (unsigned long long)j->unknown_bytes);
	if (j->broken_stacks)
		warn("%llu stack records name parts that are missing, damaged or do not add up; "
		     "their blocks are under [unknown stack]", (unsigned long long)j->broken_stacks);
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

void session_warn_dump(const struct image *img, const struct scan_result *s, const char *source)
{
	warn_missing(img, source);
	warn_rejected(s);
}

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
					 enum session_scan kind, struct scan_result *scan)
{
	struct sym_job job = { .opts = {
		.program = o->program, .img = img, .sysroot = o->sysroot,
		.debug_dirs = o->debug_dirs, .ndebug_dirs = o->ndebug_dirs,
		.have_load_base = o->have_load_base, .load_base = o->load_base,
		.modules = o->modules, .nmodules = o->nmodules, .quiet = util_quiet,
		.python = o->python, .no_names = o->report.no_symbols } };
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
	(kind == SESSION_SCAN_GRAPH ? scan_image_graph_with :
	 kind == SESSION_SCAN_LIST ? scan_image_blocks_with :
	 kind == SESSION_SCAN_FIRSTS ? scan_image_firsts_with : scan_image_with)(img, o->jobs,
										   &join, scan);
	give_pcs(&job, NULL, 0);	/* over: none, if the scan gave none */
	if (threaded)
		pthread_join(t, NULL);
	else
		sym_thread(&job);
	pthread_cond_destroy(&job.cond);
	pthread_mutex_destroy(&job.lock);
	return job.sym;
}

void session_open(struct session *s, enum session_scan kind, const char *heap)
{
	const struct options *o = s->o;

	open_memory(o, &s->img, &s->source);
	if (s->img.lean && heap)
		die(EXIT_NO_REPORT, "%s needs the heap's contents, and '%s' is a lean snapshot "
		    "(heapprof's records and the sampled blocks' headers): take a compact one "
		    "(HEAPPROF_SNAPSHOT=compact, or gcore)", heap, s->source);
	/* a Python object's type is read from its block: types.c names them from the list */
	if (kind == SESSION_SCAN_FIRSTS && pyobj_in_image(&s->img))
		kind = SESSION_SCAN_LIST;
	s->sym = scan_and_open_symbols(o, &s->img, kind, &s->scan);
	sym_add_unloaded(s->sym, s->scan.found.mods, s->scan.found.nmods);
	/* with no heapprof block the allocator must be read first: untagged.c says */
	if (!(s->untagged_dump = session_check_dump(o, &s->scan, s->source)))
		warn_release();
	session_warn_dump(&s->img, &s->scan, s->source);
	s->r.program = sym_program(s->sym) ? sym_program(s->sym) : o->program;
	s->r.source = s->source;
	s->keying = (struct graph_keying){ .by_thread = o->join.by_thread,
					   .region = o->join.region != NULL,
					   .region_id = s->scan.join.region_id };
}
