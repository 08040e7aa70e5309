/*
 * HEAPPROF_OOM (oom.h): where the limits are, how near the use is, and when to take
 * the snapshot; snapshot.c writes it. Syscalls only (open, read, getrlimit), under one
 * flag taken without waiting: a look runs inside malloc, on any thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "live.h"
#include "oom.h"
#include "options.h"
#include "sigthread.h"
#include "snapshot.h"
#include "util.h"

#define WATCHES 16		/* cgroup levels from the process's up, and RLIMIT_AS */
#define REARM_POINTS 5		/* armed again below PERCENT - 5 of the limit (or half) */
#define MIN_STEP ((int64_t)64 << 10)	/* the least live growth between two looks */
#define LOOK_NS 1000000u	/* the flush looks once a ms at most */
#define POLL_MIN_MS 5
#define POLL_MAX_MS 200
#define FAST_PER_MS ((int64_t)1 << 20)	/* the growth outside malloc the poll allows for */
#define LIMITS_NS 1000000000u	/* the limits are read again every second */
#define HANDOFF_MS 10		/* a crossing the thread finds waits for a malloc so long */
/* Address space a RLIMIT_AS process keeps for the snapshot's writer: its copy of the
 * process has as much as the process, and its own few mappings need room. */
#define AS_RESERVE ((size_t)4 << 20)

enum kind { CG2, CG1, AS };

struct watch {
	enum kind kind;
	size_t len;		/* cgroups: the level's directory, cg_dir's first len bytes */
	uint64_t limit;		/* bytes; 0: none now */
};

static struct watch watches[WATCHES];
static unsigned n_watches;
static char cg_dir[PATH_MAX];	/* the process's own cgroup directory */
static char path[PATH_MAX + 32], text[16384];	/* scratch, whoever holds busy */

static int busy;
static HP_TLS bool holding;	/* this thread holds busy (a signal handler's malloc) */
static bool armed = true;	/* the next crossing takes a snapshot */
static bool null_armed = true;	/* ... and so does the next NULL near the limit */
static uint64_t looked_ns, limits_ns;
/* Where a crossing waits for the next tagged allocation (oom_init): the caller's word and
 * oom's bit in it. */
static unsigned *due_word, due_bit;

/* ---- reading --------------------------------------------------------------------- */

/* The file at p into text (cut to fit); its length, or -1. */
static ssize_t slurp(const char *p)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, r;

	if (fd < 0)
		return -1;
	while (n < (ssize_t)sizeof(text) - 1 &&
	       ((r = read(fd, text + n, sizeof(text) - 1 - (size_t)n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? r : 0;
	close(fd);
	text[n] = 0;
	return n;
}

static uint64_t number(const char *s)
{
	uint64_t v = 0;

	while (*s == ' ')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

/* path = the directory of w, then "/" name. */
static const char *file_of(const struct watch *w, const char *name)
{
	size_t n = strlen(name);

	if (w->len + 1 + n + 1 > sizeof(path))
		return "";
	memcpy(path, cg_dir, w->len);
	path[w->len] = '/';
	memcpy(path + w->len + 1, name, n + 1);
	return path;
}

/* The limit of w in bytes, 0 for none (v2 "max", v1's "no limit" near 2^63). */
static uint64_t limit_of(const struct watch *w)
{
	struct rlimit rl;
	uint64_t v;

	if (w->kind == AS)
		return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 0;
	if (slurp(file_of(w, w->kind == CG2 ? "memory.max" : "memory.limit_in_bytes")) <= 0 ||
	    text[0] < '0' || text[0] > '9')
		return 0;
	v = number(text);
	return v >= (uint64_t)1 << 62 ? 0 : v;
}

/* The value of "key N" in text, 0 if absent. */
static uint64_t stat_of(const char *key)
{
	size_t n = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, n) && l[n] == ' ')
			return number(l + n);
	return 0;
}

/*
 * What w uses, in bytes; UINT64_MAX if it cannot be read. A cgroup's charge holds its
 * page cache, which the kernel takes back before it kills: past the line (only there,
 * memory.stat costs more to read) the file pages are left out.
 */
static uint64_t use_of(const struct watch *w, uint64_t line)
{
	uint64_t use, files;

	if (w->kind == AS)
		return slurp("/proc/self/statm") > 0 ? number(text) * (uint64_t)getpagesize() : UINT64_MAX;
	if (slurp(file_of(w, w->kind == CG2 ? "memory.current" : "memory.usage_in_bytes")) <= 0)
		return UINT64_MAX;
	use = number(text);
	if (use < line || slurp(file_of(w, "memory.stat")) <= 0)
		return use;
	files = w->kind == CG2 ? stat_of("active_file") + stat_of("inactive_file")
			       : stat_of("total_active_file") + stat_of("total_inactive_file");
	return files < use ? use - files : 0;
}

/* PERCENT of limit, and the re-arm line below it. */
static uint64_t share(uint64_t limit, uint64_t points)
{
	return limit / 100 * points + limit % 100 * points / 100;
}

/* The re-arm line, in percent of the limit. */
static uint64_t rearm_points(void)
{
	return hp_opt.oom > 2 * REARM_POINTS ? hp_opt.oom - REARM_POINTS : hp_opt.oom / 2;
}

/* The watch nearest its line at the last look, and its use then (for the line said). */
static unsigned near_watch;
static uint64_t near_use;

/*
 * Each watch's use against its line (under busy). Returns the least margin, in bytes
 * to the line (negative: past it), INT64_MAX when no watch has a limit; *low: every
 * watch is below its re-arm line. extra: bytes about to be asked for, added to each use.
 */
static int64_t look(uint64_t extra, bool *low)
{
	uint64_t rearm = rearm_points();
	int64_t least = INT64_MAX;

	*low = true;
	for (unsigned i = 0; i < n_watches; i++) {
		const struct watch *w = &watches[i];
		uint64_t line = share(w->limit, hp_opt.oom), use;

		if (!w->limit || (use = use_of(w, line > extra ? line - extra : 0)) == UINT64_MAX)
			continue;
		use += extra;
		if (use >= share(w->limit, rearm))
			*low = false;
		if ((int64_t)line - (int64_t)use < least) {
			least = (int64_t)line - (int64_t)use;
			near_watch = i;
			near_use = use;
		}
	}
	return least;
}

/* One line on what crossed: "memory cgroup '/sys/fs/cgroup/app' at 95% of its limit
 * (255012864 of 268435456 bytes): a snapshot" (under busy). */
static void say_crossed(size_t failed)
{
	const struct watch *w = &watches[near_watch];
	struct hp_line l = { .n = 0 };
	char dir[PATH_MAX];

	if (failed) {
		hp_line_add(&l, "an allocation of ");
		hp_line_num(&l, failed);
		hp_line_add(&l, " bytes failed: ");
	}
	if (w->kind == AS) {
		hp_line_add(&l, "the address space at ");
	} else {
		memcpy(dir, cg_dir, w->len);
		dir[w->len] = 0;
		hp_line_add(&l, "memory cgroup '");
		hp_line_add(&l, dir);
		hp_line_add(&l, "' at ");
	}
	hp_line_num(&l, near_use / (w->limit / 100 ? w->limit / 100 : 1));
	hp_line_add(&l, w->kind == AS ? "% of RLIMIT_AS (" : "% of its limit (");
	hp_line_num(&l, near_use);
	hp_line_add(&l, " of ");
	hp_line_num(&l, w->limit);
	hp_line_add(&l, " bytes): a snapshot");
	hp_line_say(&l);
}

/* ---- finding the limits ------------------------------------------------------------ */

/* "\040" and the like, as /proc/self/mountinfo writes a blank, undone in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = 0;
}

/* Whether the comma-separated list s (up to end) holds word. */
static bool has_word(const char *s, const char *end, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = s; p < end;) {
		const char *c = memchr(p, ',', (size_t)(end - p));

		if (!c)
			c = end;
		if ((size_t)(c - p) == n && !memcmp(p, word, n))
			return true;
		p = c + 1;
	}
	return false;
}

/* The memory cgroup's path from /proc/self/cgroup into cg (v1's memory line if there
 * is one: the controller is there then, else v2's "0::"); false if neither. */
static bool own_cgroup(char *cg, size_t size, bool *v2)
{
	bool found = false;

	if (slurp("/proc/self/cgroup") <= 0)
		return false;
	for (char *l = text; l && *l;) {
		char *eol = strchr(l, '\n'), *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (eol)
			*eol = 0;
		if (c2 && strlen(c2 + 1) < size) {
			bool v1_mem = has_word(c1 + 1, c2, "memory");

			if (v1_mem || (!found && c2 == c1 + 1 && !strncmp(l, "0:", 2))) {
				strcpy(cg, c2 + 1);
				*v2 = !v1_mem;
				found = true;
				if (v1_mem)
					return true;
			}
		}
		l = eol ? eol + 1 : NULL;
	}
	return found;
}

/*
 * The directory of cgroup cg under the mount of line (one of /proc/self/mountinfo,
 * cut in place) into cg_dir, if it is a mount of its hierarchy; its length, or 0.
 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTIONS"
 */
static size_t mount_dir(char *line, const char *cg, bool v2)
{
	char *f[5], *dash = strstr(line, " - "), *type, *opts, *p = line, *end;
	size_t root_len, mnt_len;

	if (!dash)
		return 0;
	*dash = 0;
	type = dash + 3;
	opts = strchr(type, ' ');
	opts = opts ? strchr(opts + 1, ' ') : NULL;
	if (!opts || strncmp(type, v2 ? "cgroup2 " : "cgroup ", v2 ? 8 : 7))
		return 0;
	end = opts + 1 + strcspn(opts + 1, " \n");
	if (!v2 && !has_word(opts + 1, end, "memory"))
		return 0;
	for (int i = 0; i < 5; i++) {
		f[i] = p;
		p = strchr(p, ' ');
		if (!p && i < 4)
			return 0;
		if (p)
			*p++ = 0;
	}
	unescape(f[3]);
	unescape(f[4]);
	root_len = strcmp(f[3], "/") ? strlen(f[3]) : 0;
	if (strncmp(cg, f[3], root_len) || (cg[root_len] && cg[root_len] != '/'))
		return 0;	/* a mount of another part of the hierarchy */
	mnt_len = strlen(f[4]);
	if (mnt_len + strlen(cg + root_len) + 1 > sizeof(cg_dir))
		return 0;
	memcpy(cg_dir, f[4], mnt_len);
	strcpy(cg_dir + mnt_len, cg + root_len);
	return mnt_len;
}

/* cg_dir from the first mount of the hierarchy that holds cg; the mount point's length
 * in *mnt_len. */
static bool find_dir(const char *cg, bool v2, size_t *mnt_len)
{
	ssize_t n = slurp("/proc/self/mountinfo");

	for (char *l = n > 0 ? text : NULL; l && *l;) {
		char *eol = strchr(l, '\n');

		if (eol)
			*eol = 0;
		if ((*mnt_len = mount_dir(l, cg, v2)) && access(cg_dir, F_OK) == 0)
			return true;
		l = eol ? eol + 1 : NULL;
	}
	return false;
}

/* A watch per level from the process's cgroup up to the hierarchy's root (v2's root
 * has no limit: left out). */
static void watch_cgroups(void)
{
	char cg[PATH_MAX];
	size_t mnt_len, len;
	bool v2;

	if (!own_cgroup(cg, sizeof(cg), &v2) || !find_dir(cg, v2, &mnt_len))
		return;
	for (len = strlen(cg_dir); n_watches < WATCHES - 1; len--) {
		while (len > mnt_len && cg_dir[len - 1] == '/')
			len--;	/* "/" alone, or a trailing one */
		if (len <= mnt_len && (v2 || len < mnt_len))
			break;
		watches[n_watches++] = (struct watch){ v2 ? CG2 : CG1, len, 0 };
		while (len > mnt_len && cg_dir[len - 1] != '/')
			len--;
		if (len <= mnt_len)
			break;
	}
}

/* Under busy: each watch's limit read again; whether any has one. */
static bool read_limits(void)
{
	bool any = false;

	for (unsigned i = 0; i < n_watches; i++)
		any |= (watches[i].limit = limit_of(&watches[i])) != 0;
	return any;
}

/* busy, if no one holds it */
static bool try_claim(void)
{
	if (holding || __atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		return false;
	holding = true;
	return true;
}

/* busy, waited for: a look holds it for a few reads of small files. false if this
 * thread holds it already. */
static bool claim(void)
{
	if (holding)
		return false;
	while (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	holding = true;
	return true;
}

static void release(void)
{
	holding = false;
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}

/* ---- taking it --------------------------------------------------------------------- */

static void say_rearmed(void)
{
	struct hp_line l = { .n = 0 };

	hp_line_add(&l, "memory use back below ");
	hp_line_num(&l, rearm_points());
	hp_line_add(&l, "% of its limits: the next crossing of ");
	hp_line_num(&l, hp_opt.oom);
	hp_line_add(&l, "% takes a snapshot");
	hp_line_say(&l);
}

/* RLIMIT_AS: room for the writer, kept for good and unmapped by each writer in its own
 * copy (snapshot_reserve): the program's threads never grow into it. */
static void hold_reserve(void)
{
	void *p;

	if (!n_watches || watches[n_watches - 1].kind != AS || !watches[n_watches - 1].limit)
		return;
	hp_own_map = HP2_OWN_RESERVE;
	p = mmap(NULL, AS_RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	hp_own_map = 0;
	if (p != MAP_FAILED)
		snapshot_reserve(p, AS_RESERVE);
}

static void take(void)
{
	snapshot_take(NULL, NULL, 0, SNAP_OOM);
}

/* Under busy: a look at live bytes live, its margin into *margin; true when it finds a
 * crossing, which it disarms. Otherwise the flush's next mark: live plus an eighth of
 * the margin, as a live byte may cost up to eight in the charge (an 8-byte block, its
 * header and malloc's), so no step passes the line by much. */
static bool step(int64_t live, int64_t *margin_out)
{
	bool low;
	int64_t margin = *margin_out = look(0, &low);

	looked_ns = hp_clock_ns();
	if (!armed && low) {
		armed = null_armed = true;
		say_rearmed();
	}
	if (armed && margin <= 0) {
		armed = false;
		__atomic_store_n(&live_mark, INT64_MAX, __ATOMIC_RELAXED);
		say_crossed(0);
		return true;
	}
	__atomic_store_n(&live_mark,
			 !armed || margin == INT64_MAX ? INT64_MAX
						       : live + (margin / 8 > MIN_STEP ? margin / 8 : MIN_STEP),
			 __ATOMIC_RELAXED);
	return false;
}

static void oom_flushed(int64_t live)
{
	int saved = errno;	/* inside the program's malloc */
	int64_t margin;

	if (!try_claim())
		return;
	if (hp_clock_ns() - looked_ns < LOOK_NS)
		__atomic_store_n(&live_mark, live + MIN_STEP, __ATOMIC_RELAXED);
	else if (step(live, &margin))
		__atomic_or_fetch(due_word, due_bit, __ATOMIC_RELAXED);
	release();
	errno = saved;
}

/* The crossing waiting in *due_word, claimed: true for one caller only. */
static bool claim_due(void)
{
	return __atomic_fetch_and(due_word, ~due_bit, __ATOMIC_RELAXED) & due_bit;
}

void oom_take_due(void)
{
	if (claim_due())
		take();
}

/*
 * heapprof's thread found a crossing: it leaves it to the next tagged allocation for
 * HANDOFF_MS, since the thread that takes it waits while the file is written, and a
 * thread that allocates is the one to hold back; past that (growth outside malloc,
 * or no thread allocating) it takes it itself.
 */
static void hand_off(void)
{
	struct timespec ms = { 0, 1000000 };

	__atomic_or_fetch(due_word, due_bit, __ATOMIC_RELAXED);
	for (int i = 0; i < HANDOFF_MS; i++) {
		nanosleep(&ms, NULL);
		if (!(__atomic_load_n(due_word, __ATOMIC_RELAXED) & due_bit))
			return;	/* an allocating thread took it */
	}
	if (claim_due())
		take();
}


void oom_null(size_t size)
{
	int saved = errno;	/* the program is to see malloc's ENOMEM */
	bool low, crossed = false;

	/* the last chance: waits for a look under way rather than miss it */
	if (!hp_opt.oom || !__atomic_load_n(&null_armed, __ATOMIC_RELAXED) || !claim())
		return;
	for (unsigned i = 0; i < n_watches; i++)
		crossed |= watches[i].limit && size <= watches[i].limit;
	if (crossed && look(size, &low) <= 0) {
		null_armed = armed = false;
		__atomic_store_n(&live_mark, INT64_MAX, __ATOMIC_RELAXED);
		say_crossed(size);
	} else {
		crossed = false;
	}
	release();
	if (crossed)
		take();
	errno = saved;
}

/* On heapprof's thread: the limits every second, a look, and the next in as many ms
 * as growth outside malloc at FAST_PER_MS would take to reach the line. */
static long tick(void)
{
	uint64_t now = hp_clock_ns();
	int64_t margin;
	bool crossed, any = true;

	if (!try_claim())
		return 1;	/* a flush is looking */
	if (now - limits_ns >= LIMITS_NS) {
		any = read_limits();
		limits_ns = now;
	}
	crossed = step(__atomic_load_n(&live_sums.bytes, __ATOMIC_RELAXED), &margin);
	release();
	if (crossed)
		hand_off();
	if (!any || margin == INT64_MAX)
		return 1000;
	if (!armed)
		return 50;	/* until the use is back below the re-arm line */
	margin /= FAST_PER_MS;
	return margin < POLL_MIN_MS ? POLL_MIN_MS : margin > POLL_MAX_MS ? POLL_MAX_MS : (long)margin;
}

void oom_init(unsigned *work, unsigned bit)
{
	due_word = work;
	due_bit = bit;
	if (!hp_opt.oom)
		return;
	live_watch(oom_flushed);
	watch_cgroups();
	watches[n_watches++] = (struct watch){ AS, 0, 0 };
	if (!read_limits()) {
		hp_warn("HEAPPROF_OOM: no memory limit to watch (no memory cgroup limit, no "
			"RLIMIT_AS)", NULL, NULL);
		n_watches = 0;
		return;
	}
	limits_ns = hp_clock_ns();
	hold_reserve();
	sigthread_every(tick);
}

void oom_after_fork(void)
{
	holding = false;
	__atomic_store_n(&busy, 0, __ATOMIC_RELAXED);
}
