/*
 * Many dumps, one report (session_int.h): each dump is read, scanned and let go in
 * turn (-j of them at a time), its stacks keyed by module and offset so that the same
 * code matches whatever ASLR did; the merged stacks are placed in one made-up address
 * space and symbolized once, at the end, as raw mode does; then one report.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "fmt.h"
#include "heapprof_format.h"
#include "session_int.h"
#include "util.h"

/* A merged stack's pc: module id + 1 above this bit, its offset below; id 0: no
 * module, the pc as it was. */
#define KEY_SHIFT 48
#define KEY_OFF ((1ull << KEY_SHIFT) - 1)
/* Where the made-up address space puts the modules that are not ET_EXEC: one span
 * each, above any ET_EXEC program's link address. */
#define PLACE_BASE (1ull << 44)
#define PLACE_SPAN (1ull << 36)

static const uint64_t no_pcs[1];	/* a stack key's pcs when it has no frame */

/* A module of the dumps: the same file and build in every dump that maps it. */
struct fleet_mod {
	const char *path;	/* fleet-owned copy */
	char build_id[129];
	bool exec;
	uint64_t bias;		/* ET_EXEC: where it is linked; else placed at the end */
	uint64_t start_off;	/* its first address less its bias */
	const char *dump;	/* the first dump seen with it, for messages */
};

/* One dump's live bytes for a stack. */
struct presence {
	uint32_t dump;
	uint64_t bytes;
};

/* What a merged stack (by its pointer in a table) has per dump, then its figures. */
struct per_stack {
	const struct stack *s;
	struct presence *v;
	uint32_t n, cap;
	uint64_t dumps, median, p95;
};

struct stack_map {
	struct per_stack *slots;
	size_t n, cap;
};

struct fleet {
	const struct options *o;
	pthread_mutex_t lock;
	size_t next;			/* the next dump to read */
	unsigned scan_jobs;		/* threads each dump is scanned with */
	struct fleet_mod *mods;
	size_t nmods;
	ssize_t prog;			/* the executable's module, -1: none seen */
	struct stacks merged;		/* pcs keyed (KEY_SHIFT) */
	struct stack_map per;		/* ... their dumps */
	struct stacks final;		/* pcs placed */
	struct stack_map fig;		/* ... their figures */
	/* summed over the dumps */
	uint64_t scanned, missing, unknown_blocks, unknown_bytes, damaged, rejected[REJ_NREASONS];
	uint64_t counted_sites, site_recs, period;
	size_t segments;
	unsigned missing_segs;
	size_t lean_dumps;		/* lean snapshots among them, and their headers */
	uint64_t lean_headers;
	bool have_time, have_proc;
	char source[64];
};

/* ---- a map from a stack to its dumps --------------------------------------------- */

static size_t ptr_hash(const void *p, size_t cap)
{
	return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

static struct per_stack *map_get(struct stack_map *m, const struct stack *s)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct stack_map g = { xcalloc(m->cap ? m->cap * 2 : 64, sizeof(*g.slots)), m->n,
				       m->cap ? m->cap * 2 : 64 };

		for (size_t k = 0; k < m->cap; k++)
			if (m->slots[k].s) {
				for (i = ptr_hash(m->slots[k].s, g.cap); g.slots[i].s; i = (i + 1) & (g.cap - 1))
					;
				g.slots[i] = m->slots[k];
			}
		free(m->slots);
		*m = g;
	}
	for (i = ptr_hash(s, m->cap); m->slots[i].s && m->slots[i].s != s; i = (i + 1) & (m->cap - 1))
		;
	if (!m->slots[i].s) {
		m->slots[i].s = s;
		m->n++;
	}
	return &m->slots[i];
}

static const struct per_stack *map_find(const struct stack_map *m, const struct stack *s)
{
	if (!m->cap)
		return NULL;
	for (size_t i = ptr_hash(s, m->cap); m->slots[i].s; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].s == s)
			return &m->slots[i];
	return NULL;
}

static void map_free(struct stack_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].v);
	free(m->slots);
	*m = (struct stack_map){ 0 };
}

static void presence_add(struct per_stack *p, uint32_t dump, uint64_t bytes)
{
	if (p->n == p->cap)
		p->v = xrealloc(p->v, (p->cap = p->cap ? p->cap * 2 : 4) * sizeof(*p->v));
	p->v[p->n++] = (struct presence){ dump, bytes };
}

/* ---- one dump -------------------------------------------------------------------- */

static int dump_mod_cmp(const void *a, const void *b)
{
	const struct sym_dump_module *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The fleet's module for a dump's (under the lock); exits when the dumps hold two
 * builds of one file. */
static size_t fleet_mod(struct fleet *f, const struct sym_dump_module *m, const char *dump)
{
	for (size_t i = 0; i < f->nmods; i++) {
		struct fleet_mod *g = &f->mods[i];

		if (strcmp(g->path, m->path))
			continue;
		if (*g->build_id && *m->build_id && strcmp(g->build_id, m->build_id))
			die(EXIT_NO_REPORT, "'%s' and '%s' hold different builds of '%s' (build-id "
			    "%s, %s): merge dumps of one build, or compare two with --base",
			    g->dump, dump, m->path, g->build_id, m->build_id);
		if (!*g->build_id)
			memcpy(g->build_id, m->build_id, sizeof(g->build_id));
		return i;
	}
	f->mods = xrealloc(f->mods, (f->nmods + 1) * sizeof(*f->mods));
	f->mods[f->nmods] = (struct fleet_mod){ .path = xstrdup(m->path), .exec = m->exec,
						.bias = m->bias, .start_off = m->lo - m->bias,
						.dump = xstrdup(dump) };
	memcpy(f->mods[f->nmods].build_id, m->build_id, sizeof(m->build_id));
	return f->nmods++;
}

/* The dump's executable: the module holding AT_ENTRY, else the one named as PROGRAM. */
static ssize_t dump_program(const struct image *img, const struct sym_dump_module *m, size_t n,
			    const char *program)
{
	for (size_t i = 0; i < n; i++)
		if (img->have_auxv && img->at_entry >= m[i].lo && img->at_entry < m[i].hi)
			return (ssize_t)i;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(base_name(m[i].path), base_name(program)))
			return (ssize_t)i;
	return -1;
}

/* A native pc as its module's id and offset. */
static uint64_t key_pc(uint64_t pc, const struct sym_dump_module *m, const size_t *gid, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pc < m[mid].lo)
			hi = mid;
		else if (pc >= m[mid].hi)
			lo = mid + 1;
		else
			return ((uint64_t)(gid[mid] + 1) << KEY_SHIFT) | ((pc - m[mid].bias) & KEY_OFF);
	}
	return pc & KEY_OFF;
}

/* A sampled counter (units of 1/HP2_COUNT_ONE) in calls, rounded half up, as one
 * dump's report shows it. */
static uint64_t units(uint64_t v, bool sampled)
{
	return sampled ? v / HP2_COUNT_ONE + (v % HP2_COUNT_ONE >= HP2_COUNT_ONE / 2) : v;
}

/* The dump's stacks into the merged table (under the lock). */
static void merge_stacks(struct fleet *f, uint32_t dump, const struct scan_result *scan,
			 const struct sym_dump_module *m, const size_t *gid, size_t nm)
{
	size_t n;
	struct stack **all = stacks_list(&scan->stacks, &n);
	bool sampled = scan->join.sampled_counts;
	uint64_t *pcs = NULL;
	unsigned cap = 0;

	for (size_t i = 0; i < n; i++) {
		const struct stack *s = all[i];
		unsigned k = 0;
		struct stack_counts c = s->counts;
		uint64_t bytes = stack_bytes(s);
		struct stack_key key;

		if (s->nframes > cap)
			pcs = xrealloc(pcs, (cap = s->nframes) * sizeof(*pcs));
		for (; k < s->nframes && !hp2_is_pyframe_word(s->pcs[k]); k++)
			pcs[k] = s->pcs[k] ? key_pc(s->pcs[k], m, gid, nm) : 0;
		key = (struct stack_key){ pcs ? pcs : no_pcs, k, s->flags, 0 };
		c.calls = units(c.calls, sampled);
		c.frees = units(c.frees, sampled);
		stacks_add_group(&f->merged, &key, &(struct stack_add){ .bytes = bytes,
				 .blocks = stack_blocks(s), .counts = c });
		if (bytes || s->nsizes || s->blocks)
			presence_add(map_get(&f->per, stacks_lookup(&f->merged, &key)), dump, bytes);
	}
	free(pcs);
	free(all);
}

/* What the dump says of itself, summed (under the lock). */
static void add_summary(struct fleet *f, const struct image *img, const struct scan_result *s)
{
	f->lean_dumps += img->lean;
	f->lean_headers += img->lean_headers;
	f->scanned += img->bytes;
	f->segments += img->nsegs;
	f->missing += img->missing_bytes;
	f->missing_segs += img->missing_segs + img->truncated_segs;
	f->unknown_blocks += s->join.unknown_blocks;
	f->unknown_bytes += s->join.unknown_bytes;
	f->damaged += s->join.damaged;
	for (int i = 0; i < REJ_NREASONS; i++)
		f->rejected[i] += s->rejected[i];
	f->counted_sites += s->join.counted_sites;
	f->site_recs += s->join.site_recs;
	f->have_proc |= s->join.have_proc;
	f->have_time |= s->join.have_time;
	if (s->join.sampled_blocks && s->join.have_proc && s->join.proc.sample_period > f->period)
		f->period = s->join.proc.sample_period;
}

/* Python frames name records in each dump's memory: nothing to match them by yet. */
static void check_python(const struct options *o, const struct scan_result *scan,
			 const char *path)
{
	size_t n;
	struct stack **all = stacks_list(&scan->stacks, &n);
	bool py = false;

	for (size_t i = 0; i < n && !py; i++)
		for (unsigned k = 0; k < all[i]->nframes && !py; k++)
			py = hp2_is_pyframe_word(all[i]->pcs[k]);
	free(all);
	if (py && o->python != SYM_PY_NATIVE)
		die(EXIT_NO_REPORT, "'%s' holds Python frames, which a report of many dumps cannot "
		    "match from dump to dump yet: give --python=native, or read it alone", path);
}

static void read_dump(struct fleet *f, uint32_t i, uint16_t machine, unsigned wsize)
{
	const struct options *o = f->o;
	const char *path = o->cores[i];
	struct image img;
	struct scan_result scan;
	struct sym_dump_module *m;
	size_t nm, *gid;
	ssize_t prog;
	char err[1024];

	if (image_open(&img, &(struct image_spec){ .core = path }, err, sizeof(err)) < 0)
		die(EXIT_NO_REPORT, "%s", err);
	if (img.machine != machine || img.wsize != wsize)
		die(EXIT_NO_REPORT, "'%s' is not a core of '%s' (another machine or word size)",
		    path, o->program);
	scan_image_with(&img, f->scan_jobs, &o->join, &scan);
	if (session_check_dump(o, &scan, path))
		die(EXIT_NO_REPORT, "'%s' holds no heapprof block: a report of many dumps sums "
		    "heapprof's stacks (read it alone for its untagged chunks)", path);
	check_python(o, &scan, path);
	session_warn_dump(&img, &scan, path);
	m = sym_dump_modules(&img, &nm);
	if (nm > 1)
		qsort(m, nm, sizeof(*m), dump_mod_cmp);
	gid = xcalloc(nm ? nm : 1, sizeof(*gid));
	prog = dump_program(&img, m, nm, o->program);
	pthread_mutex_lock(&f->lock);
	for (size_t k = 0; k < nm; k++)
		gid[k] = fleet_mod(f, &m[k], path);
	if (prog >= 0 && f->prog >= 0 && (size_t)f->prog != gid[prog])
		die(EXIT_NO_REPORT, "'%s' and '%s' are dumps of different programs ('%s', '%s')",
		    f->mods[f->prog].dump, path, f->mods[f->prog].path, m[prog].path);
	if (prog >= 0)
		f->prog = (ssize_t)gid[prog];
	merge_stacks(f, i, &scan, m, gid, nm);
	add_summary(f, &img, &scan);
	pthread_mutex_unlock(&f->lock);
	free(gid);
	free(m);
	scan_result_free(&scan);
	image_close(&img);
}

struct reader_arg {
	struct fleet *f;
	uint16_t machine;
	unsigned wsize;
};

static void *reader(void *arg)
{
	struct reader_arg *a = arg;
	struct fleet *f = a->f;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&f->lock);
		i = f->next++;
		pthread_mutex_unlock(&f->lock);
		if (i >= f->o->ncores)
			return NULL;
		read_dump(f, (uint32_t)i, a->machine, a->wsize);
	}
}

/* ---- the end: one address space, figures, symbols --------------------------------- */

static int mod_cmp(const void *a, const void *b)
{
	const struct fleet_mod *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : strcmp(x->build_id, y->build_id);
}

static int presence_cmp(const void *a, const void *b)
{
	const struct presence *x = a, *y = b;

	return (x->dump > y->dump) - (x->dump < y->dump);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The value of nearest rank ceil(q * n) of n values, the first zeros of them 0. */
static uint64_t rank(const uint64_t *v, size_t nv, size_t n, unsigned percent)
{
	size_t r = (n * percent + 99) / 100, zeros = n - nv;

	if (r == 0)
		r = 1;
	return r <= zeros ? 0 : v[r - zeros - 1];
}

/* A stack's dumps and percentiles; its presences summed per dump first. */
static void figures_of(struct per_stack *p, size_t ndumps)
{
	uint64_t *v = xcalloc(p->n ? p->n : 1, sizeof(*v));
	size_t k = 0;

	if (p->n > 1)	/* v is NULL for a stack in no dump: all its blocks were freed */
		qsort(p->v, p->n, sizeof(*p->v), presence_cmp);
	for (uint32_t i = 0; i < p->n; i++) {
		if (i && p->v[i].dump == p->v[i - 1].dump)
			v[k - 1] += p->v[i].bytes;
		else
			v[k++] = p->v[i].bytes;
	}
	qsort(v, k, sizeof(*v), u64_cmp);
	p->dumps = k;
	p->median = rank(v, k, ndumps, 50);
	p->p95 = rank(v, k, ndumps, 95);
	free(v);
}

/*
 * Every module gets its place: an ET_EXEC where it is linked, the others one span
 * each, the program's first and then in the order of their paths, so that the same
 * dumps in any order give the same addresses, and so the same report. bias_of[i] gets
 * the place of the module seen i-th, which the keyed pcs name; f->mods is sorted.
 */
static void place_modules(struct fleet *f, uint64_t *bias_of)
{
	size_t *order = xcalloc(f->nmods ? f->nmods : 1, sizeof(*order)), k = 0;
	struct fleet_mod *sorted = xcalloc(f->nmods ? f->nmods : 1, sizeof(*sorted));
	const char *prog = f->prog >= 0 ? f->mods[f->prog].path : NULL;

	if (f->nmods)	/* mods is NULL while empty */
		memcpy(sorted, f->mods, f->nmods * sizeof(*sorted));
	qsort(sorted, f->nmods, sizeof(*sorted), mod_cmp);
	for (size_t i = 0; i < f->nmods; i++)	/* the program first, as pprof's main mapping */
		if (!sorted[i].exec && sorted[i].path == prog)
			sorted[i].bias = PLACE_BASE + k++ * PLACE_SPAN;
	for (size_t i = 0; i < f->nmods; i++) {
		struct fleet_mod *s = &sorted[i];

		if (!s->exec && s->path != prog)
			s->bias = PLACE_BASE + k++ * PLACE_SPAN;
		for (size_t j = 0; j < f->nmods; j++)
			if (f->mods[j].path == s->path)
				order[j] = i;
	}
	for (size_t j = 0; j < f->nmods; j++)
		bias_of[j] = sorted[order[j]].bias;
	if (f->nmods)
		memcpy(f->mods, sorted, f->nmods * sizeof(*sorted));
	if (prog)
		for (size_t i = 0; i < f->nmods; i++)
			if (f->mods[i].path == prog)
				f->prog = (ssize_t)i;
	free(sorted);
	free(order);
}

/* The merged stacks at their places (f->final), and each one's dumps and percentiles. */
static void place_stacks(struct fleet *f, const uint64_t *bias_of)
{
	size_t n;
	struct stack **all = stacks_list(&f->merged, &n);
	uint64_t *pcs = NULL;
	unsigned cap = 0;

	for (size_t i = 0; i < n; i++) {
		const struct stack *s = all[i];
		struct per_stack *from = map_get(&f->per, s), *to;
		struct stack_key key;

		if (s->nframes > cap)
			pcs = xrealloc(pcs, (cap = s->nframes) * sizeof(*pcs));
		for (unsigned j = 0; j < s->nframes; j++) {
			uint64_t id = s->pcs[j] >> KEY_SHIFT;

			pcs[j] = id ? bias_of[id - 1] + (s->pcs[j] & KEY_OFF) : s->pcs[j];
		}
		key = (struct stack_key){ pcs ? pcs : no_pcs, s->nframes, s->flags, 0 };
		stacks_add_group(&f->final, &key, &(struct stack_add){ .bytes = s->bytes,
				 .blocks = s->blocks, .counts = s->counts });
		to = map_get(&f->fig, stacks_lookup(&f->final, &key));
		for (uint32_t j = 0; j < from->n; j++)
			presence_add(to, from->v[j].dump, from->v[j].bytes);
	}
	free(pcs);
	free(all);
	map_free(&f->per);
	stacks_free(&f->merged);
	for (size_t i = 0; i < f->fig.cap; i++)
		if (f->fig.slots[i].s)
			figures_of(&f->fig.slots[i], f->o->ncores);
}

/*
 * The symbols of the placed modules, as raw mode reads them: PROGRAM at its place and
 * each other module from its file (under --sysroot); a file of another build than the
 * dumps' would name the wrong functions, and is refused.
 */
static struct sym *open_symbols(struct fleet *f)
{
	const struct options *o = f->o;
	struct sym_module *mods = xcalloc(f->nmods ? f->nmods : 1, sizeof(*mods));
	struct sym_opts so = { .program = o->program, .sysroot = o->sysroot,
			       .debug_dirs = o->debug_dirs, .ndebug_dirs = o->ndebug_dirs,
			       .quiet = util_quiet, .python = o->python, .modules = mods };
	struct sym_module_info *info;
	struct sym *sym;
	size_t ni;

	for (size_t i = 0; i < f->nmods; i++) {
		if ((ssize_t)i == f->prog) {
			so.have_load_base = !f->mods[i].exec;
			so.load_base = f->mods[i].exec ? 0 : f->mods[i].bias;
			continue;
		}
		mods[so.nmodules++] = (struct sym_module){ f->mods[i].path, f->mods[i].bias };
	}
	sym = sym_open(&so);
	free(mods);
	info = sym_modules(sym, &ni);
	for (size_t i = 0; i < f->nmods; i++) {
		const struct fleet_mod *m = &f->mods[i];
		uint64_t at = m->bias + m->start_off;

		for (size_t k = 0; k < ni; k++) {
			char why[8192];	/* a path of PATH_MAX and two build-ids */

			if (at < info[k].start || at >= info[k].end || !*m->build_id ||
			    !*info[k].build_id || !strcmp(m->build_id, info[k].build_id))
				continue;
			snprintf(why, sizeof(why), "'%s' here is another build than the dumps' "
				 "(build-id %s, not %s): give the dumps' build (PROGRAM, --sysroot, "
				 "--debug-dir)", info[k].path, info[k].build_id, m->build_id);
			/* closed first: a die that comes back (test/fuzz/fuzz_fleet.c's)
			 * finds nothing left open */
			free(info);
			sym_close(sym);
			die(EXIT_NO_REPORT, "%s", why);
		}
	}
	free(info);
	return sym;
}

/* report_build's hook: a shown stack's dumps and percentiles */
static void stack_figures(const void *arg, const struct stack *s, struct report_stack *out)
{
	const struct per_stack *p = map_find(&((const struct fleet *)arg)->fig, s);

	if (p) {
		out->dumps = p->dumps;
		out->median_bytes = p->median;
		out->p95_bytes = p->p95;
	}
}

/* ---- the section ----------------------------------------------------------------- */

static void dumps_text(const struct report *r, const void *data, FILE *f)
{
	char a[32];

	(void)data;
	fprintf(f, "  dumps:      %s merged; each stack: in how many dumps, its live bytes per "
		"dump (0 where absent) at the median and 95th percentile\n",
		fmt_thousands(r->ndumps, a));
}

static void dumps_json(const struct report *r, const void *data, const struct report_out *o)
{
	(void)data;
	fprintf(o->f, "  \"dumps\": {\"merged\": %zu},\n", r->ndumps);
}

static void dumps_stack_text(const struct report_stack *s, FILE *f)
{
	char a[32], b[32], c[32];

	if (!s->dumps)
		return;
	fprintf(f, "  in %s dumps; live bytes per dump: median %s, p95 %s\n",
		fmt_thousands(s->dumps, a), fmt_thousands(s->median_bytes, b),
		fmt_thousands(s->p95_bytes, c));
}

static void dumps_stack_json(const struct report_stack *s, FILE *f)
{
	fprintf(f, ",\n     \"dumps\": %" PRIu64 ", \"median_bytes\": %" PRIu64
		", \"p95_bytes\": %" PRIu64, s->dumps, s->median_bytes, s->p95_bytes);
}

static const struct section_ops dumps_section = {
	.name = "dumps", .gives = "figures per dump", .text = dumps_text, .json = dumps_json,
	.stack_text = dumps_stack_text, .stack_json = dumps_stack_json,
};

/* ---- the session ----------------------------------------------------------------- */

static void read_all(struct fleet *f)
{
	const struct options *o = f->o;
	unsigned readers = o->jobs < o->ncores ? o->jobs : (unsigned)o->ncores, started = 0;
	pthread_t *t = xcalloc(readers, sizeof(*t));
	struct reader_arg arg = { f, 0, 0 };
	char err[1024];
	bool be, pie;

	if (image_program_info(o->program, &arg.wsize, &be, &arg.machine, &pie, err,
			       sizeof(err)) < 0)
		die(EXIT_NO_REPORT, "%s", err);
	f->scan_jobs = o->jobs / readers ? o->jobs / readers : 1;
	for (unsigned i = 1; i < readers; i++)
		started += pthread_create(&t[started], NULL, reader, &arg) == 0;
	reader(&arg);
	for (unsigned i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
}

void session_fleet(struct session *s, const struct options *o, const struct report_opts *ro)
{
	struct fleet *f = s->fleet = xcalloc(1, sizeof(*f));
	uint64_t *bias_of;
	struct report_opts with = *ro;
	bool be, pie;
	uint16_t machine;
	char err[1024];

	f->o = o;
	f->prog = -1;
	pthread_mutex_init(&f->lock, NULL);
	stacks_init(&f->merged);
	stacks_init(&f->final);
	read_all(f);
	bias_of = xcalloc(f->nmods ? f->nmods : 1, sizeof(*bias_of));
	place_modules(f, bias_of);
	place_stacks(f, bias_of);
	free(bias_of);
	s->sym = open_symbols(f);

	/* the report of one dump, from the sums: its scan and its image */
	s->scan.stacks = f->final;
	f->final = (struct stacks){ 0 };
	s->scan.join.counted_sites = f->counted_sites;
	s->scan.join.site_recs = f->site_recs;
	s->scan.join.have_proc = f->have_proc;
	s->scan.join.have_time = f->have_time;
	s->scan.join.unknown_blocks = f->unknown_blocks;
	s->scan.join.unknown_bytes = f->unknown_bytes;
	s->scan.join.damaged = f->damaged;
	memcpy(s->scan.rejected, f->rejected, sizeof(f->rejected));
	if (image_program_info(o->program, &s->img.wsize, &be, &machine, &pie, err,
			       sizeof(err)) < 0)
		die(EXIT_NO_REPORT, "%s", err);
	s->img.big_endian = be;
	s->img.fd = -1;
	s->img.bytes = f->scanned;
	s->img.nsegs = f->segments;
	s->img.missing_bytes = f->missing;
	s->img.missing_segs = f->missing_segs;
	with.sizes = false;	/* every block's size of every dump: not kept */
	with.stack_figures = stack_figures;
	with.stack_arg = f;
	report_build(&s->r, &s->scan, &s->img, s->sym, &with);
	snprintf(f->source, sizeof(f->source), "%zu dumps", o->ncores);
	s->r.source = f->source;
	s->r.program = sym_program(s->sym) ? sym_program(s->sym) : o->program;
	s->r.ndumps = o->ncores;
	s->r.lean_dumps = f->lean_dumps;
	s->r.lean_headers = f->lean_headers;
	s->r.sample_period = f->period;
	report_add_section(&s->r, &dumps_section, f);
}

void session_fleet_free(struct fleet *f)
{
	if (!f)
		return;
	map_free(&f->fig);
	stacks_free(&f->final);
	for (size_t i = 0; i < f->nmods; i++) {
		free((void *)f->mods[i].path);
		free((void *)f->mods[i].dump);
	}
	free(f->mods);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
