/*
 * Lean snapshots (snapshot_lean.h): an ELF core as snapshot_core.c writes one, whose
 * PT_LOADs hold heapprof's mappings that keep records (the map table lists them), each
 * module's ELF header page and the vDSO (modules are placed from them), the dynamic
 * linker's list (DT_DEBUG's entry, r_debug, each link_map's first words and name: the
 * names the program knew its libraries by), and each live sampled block's header,
 * 16 bytes (24 with the size word of a BIG one), from the registry (sampled.h). What
 * it costs follows heapprof's memory and the sampled blocks, not the heap.
 *
 * No fork: a fork costs in proportion to the heap (its page tables, then a fault on
 * each page the program writes while they are shared). The thread that asks writes,
 * and reads the program's memory through process_vm_readv, which fails where a free
 * or an munmap has just taken it away, as the program runs on. The headers are read
 * before heapprof's records, so that every site a header names is in the file.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "maps.h"
#include "sampled.h"
#include "snapshot_elf.h"
#include "snapshot_lean.h"
#include "util.h"

#define BATCH 1024		/* iovecs a process_vm_readv takes (IOV_MAX) */
#define MAX_LIBS 512		/* link_map entries followed, as the analyzer does */
#define MAX_NAME 4096		/* bytes of a library's name read */
#define CHUNK ((size_t)64 << 10)	/* heapprof's memory is copied this much at a time: what
				 * the copy adds to the process's resident memory */
#define LM_BYTES ((size_t)1 << 20)	/* room for the dynamic linker's pieces */

/* A small piece of the program's memory, its bytes copied at at in the arena. */
struct piece {
	uint64_t start;
	uint32_t len, at;
};

struct lean {
	pid_t pid;
	uint64_t page;
	struct piece *small;	/* headers and the dynamic linker's pieces */
	size_t nsmall, small_cap;
	unsigned char *arena;	/* their bytes */
	size_t used, arena_cap;
	uint64_t headers;	/* sampled blocks' headers kept */
	unsigned char *tmp;	/* CHUNK bytes of scratch */
};

/* len bytes of the program's memory at addr, or false: none there any more. */
static bool mem_read(const struct lean *l, void *dst, uint64_t addr, size_t len)
{
	struct iovec to = { dst, len }, from = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(l->pid, &to, 1, &from, 1, 0) == (ssize_t)len;
}

/* A piece of len bytes at start whose bytes follow; NULL when there is no room. */
static unsigned char *piece_add(struct lean *l, uint64_t start, size_t len)
{
	unsigned char *p;

	if (l->nsmall == l->small_cap || len > l->arena_cap - l->used)
		return NULL;
	l->small[l->nsmall++] = (struct piece){ start, (uint32_t)len, (uint32_t)l->used };
	p = l->arena + l->used;
	l->used += len;
	return p;
}

/* ---- the sampled blocks' headers ---------------------------------------------------- */

/* Whether the words below user make a live sampled block's header (decode.c's rules). */
static bool header_ok(uint64_t user, uint64_t info, uint64_t tag, uint64_t big)
{
	unsigned flags = (unsigned)(tag >> HP2_FLAGS_SHIFT) & HP2_FLAGS_MASK;
	unsigned shift = (unsigned)(tag >> HP2_OFFSET_SHIFT) & HP2_OFFSET_MASK;

	if ((tag >> 48) != HP2_MAGIC16 || (flags & ~HP2_F_KNOWN) || !(flags & HP2_F_SAMPLED) ||
	    shift > HP2_MAX_SHIFT || ((flags & HP2_F_BIG) && !shift))
		return false;
	return hp2_block_check(user, info, tag, big) == (tag & HP2_CHECK_MASK);
}

static void header_add(struct lean *l, uint64_t user, const uint64_t w[2])
{
	uint64_t big = 0, words[3];
	bool is_big = (w[1] >> HP2_FLAGS_SHIFT) & HP2_F_BIG;
	unsigned char *p;

	if (is_big && !mem_read(l, &big, user - 24, 8))
		return;
	if (!header_ok(user, w[0], w[1], big))
		return;	/* freed meanwhile, its header killed */
	words[0] = big;
	words[1] = w[0];
	words[2] = w[1];
	if (!(p = piece_add(l, user - (is_big ? 24 : 16), is_big ? 24 : 16)))
		return;
	memcpy(p, is_big ? words : words + 1, is_big ? 24 : 16);
	l->headers++;
}

/* Each address's 16 bytes below it, BATCH at a time; one that fails is passed over. */
static void read_headers(struct lean *l, const uint64_t *a, size_t n, struct iovec *to,
			 struct iovec *from)
{
	uint64_t (*w)[2] = (uint64_t (*)[2])l->tmp;	/* BATCH * 16 bytes */

	for (size_t i = 0; i < n;) {
		size_t k = n - i < BATCH ? n - i : BATCH, good;
		ssize_t r;

		for (size_t m = 0; m < k; m++) {
			to[m] = (struct iovec){ w[m], 16 };
			from[m] = (struct iovec){ (void *)(uintptr_t)(a[i + m] - 16), 16 };
		}
		/* a transfer stops at the first element it cannot read, never within one */
		r = process_vm_readv(l->pid, to, k, from, k, 0);
		good = r > 0 ? (size_t)r / 16 : 0;
		for (size_t m = 0; m < good; m++)
			header_add(l, a[i + m], w[m]);
		i += good < k ? good + 1 : good;
	}
}

/* ---- the dynamic linker's list --------------------------------------------------- */

static uint64_t auxv_get(const char *auxv, size_t len, uint64_t type)
{
	const ElfW(auxv_t) *a = (const ElfW(auxv_t) *)auxv;

	for (size_t i = 0; (i + 1) * sizeof(*a) <= len && a[i].a_type != AT_NULL; i++)
		if (a[i].a_type == type)
			return a[i].a_un.a_val;
	return 0;
}

/* The library's name at name, NUL and all, as a piece from the 8-byte word it starts in
 * to the one it ends in. */
static void name_add(struct lean *l, uint64_t name)
{
	uint64_t from = name & ~(uint64_t)7;
	size_t n = 0, skip = (size_t)(name - from), lo;
	char *s = (char *)l->tmp;

	while (n < MAX_NAME) {
		if (!mem_read(l, s + n, from + n, 8))
			return;
		n += 8;
		lo = n - 8 > skip ? n - 8 : skip;	/* the bytes before name are not its */
		if (memchr(s + lo, 0, n - lo))
			break;
	}
	if (n < MAX_NAME) {
		unsigned char *p = piece_add(l, from, n);

		if (p)
			memcpy(p, s, n);
	}
}

/*
 * The executable's DT_DEBUG entry (found through AT_PHDR, as the loader placed it),
 * r_debug's first two words, each link_map's first four (l_addr, l_name, l_ld, l_next)
 * and its name: what the analyzer reads to name the libraries.
 */
static void link_map_add(struct lean *l, const char *auxv, size_t auxv_len)
{
	uint64_t phdr = auxv_get(auxv, auxv_len, AT_PHDR), bias = 0, dyn = 0, dyn_n = 0;
	bool placed = false;	/* PT_PHDR seen: bias is known (0 for a fixed-address one) */
	uint64_t phnum = auxv_get(auxv, auxv_len, AT_PHNUM), r_debug = 0, lm, w[4];
	ElfW(Phdr) ph;
	ElfW(Dyn) d;
	unsigned char *p;

	for (uint64_t i = 0; phdr && i < phnum && i < 256; i++) {
		if (!mem_read(l, &ph, phdr + i * sizeof(ph), sizeof(ph)))
			return;
		if (ph.p_type == PT_PHDR) {
			bias = phdr - ph.p_vaddr;
			placed = true;
		}
		else if (ph.p_type == PT_DYNAMIC) {
			dyn = ph.p_vaddr;
			dyn_n = ph.p_memsz / sizeof(d);
		}
	}
	if (!placed || !dyn)
		return;	/* static, or no program headers in memory */
	dyn += bias;
	for (uint64_t i = 0; i < dyn_n && i < 1024 && !r_debug; i++) {
		if (!mem_read(l, &d, dyn + i * sizeof(d), sizeof(d)) || d.d_tag == DT_NULL)
			return;
		if (d.d_tag == DT_DEBUG && d.d_un.d_ptr && (p = piece_add(l, dyn + i * sizeof(d), sizeof(d)))) {
			memcpy(p, &d, sizeof(d));
			r_debug = d.d_un.d_ptr;
		}
	}
	/* struct r_debug: r_version (an int, padded to a word), r_map */
	if (!r_debug || !mem_read(l, w, r_debug, 2 * sizeof(void *)) ||
	    !(p = piece_add(l, r_debug, 2 * sizeof(void *))))
		return;
	memcpy(p, w, 2 * sizeof(void *));
	lm = ((uintptr_t *)w)[1];
	for (unsigned n = 0; lm && n < MAX_LIBS; n++) {
		uintptr_t f[4];

		if (!mem_read(l, f, lm, sizeof(f)) || !(p = piece_add(l, lm, sizeof(f))))
			return;
		memcpy(p, f, sizeof(f));
		if (f[1])
			name_add(l, f[1]);
		lm = f[3];
	}
}

/* ---- what is written --------------------------------------------------------------- */

/* What a mapping of heapprof's holds is read by the analyzer: records of some kind. */
static bool own_kept(unsigned own)
{
	switch (own) {
	case HP2_OWN_INDEX:	/* directories of pointers, rebuilt from the records */
	case HP2_OWN_REPLAY:	/* the unwinder's memory of walks */
	case HP2_OWN_UNWIND:	/* and of unwind rules */
	case HP2_OWN_SIGSTACKS:
	case HP2_OWN_SNAPSHOT:
	case HP2_OWN_RESERVE:
		return false;
	default:
		return true;	/* the records, and what an older or newer table does not say */
	}
}

/* Pieces by start: heapsort (no allocation, tens of thousands of headers in any order). */
static void sift_piece(struct piece *v, size_t i, size_t n)
{
	struct piece x = v[i];
	size_t c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && v[c + 1].start > v[c].start)
			c++;
		if (v[c].start <= x.start)
			break;
		v[i] = v[c];
		i = c;
	}
	v[i] = x;
}

static void sort_pieces(struct piece *v, size_t n)
{
	for (size_t k = n / 2; k-- > 0;)
		sift_piece(v, k, n);
	while (n > 1) {
		struct piece top = v[0];

		v[0] = v[--n];
		v[n] = top;
		sift_piece(v, 0, n);
	}
}

/* The pages by start: a few hundred at most. */
static void sort_vmas(struct vma *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct vma x = v[i];
		size_t k = i;

		for (; k > 0 && v[k - 1].start > x.start; k--)
			v[k] = v[k - 1];
		v[k] = x;
	}
}

static bool in_pages(const struct vma *v, size_t n, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < n; i++)
		if (a < v[i].start + v[i].dump && v[i].start < b)
			return true;
	return false;
}

/*
 * The small pieces as segments after the pages in v[*nv...], pieces that overlap or
 * touch joined, their bytes in file order in out (returned; *len its length). A piece
 * in a page already kept is left to the page.
 */
static unsigned char *join_small(struct lean *l, struct vma *v, size_t npages, size_t *nv,
				 size_t *len)
{
	unsigned char *out = snap_elf_grab(l->used ? l->used : 1);
	size_t n = 0;

	*len = 0;
	if (!out)
		return NULL;
	sort_pieces(l->small, l->nsmall);
	for (size_t i = 0; i < l->nsmall; i++) {
		const struct piece *p = &l->small[i];
		uint64_t end = p->start + p->len;
		struct vma *last = n ? &v[npages + n - 1] : NULL;

		if (in_pages(v, npages, p->start, end))
			continue;
		if (last && p->start <= last->start + last->dump) {
			uint64_t have = last->start + last->dump;

			if (end > have) {
				memcpy(out + *len, l->arena + p->at + (have - p->start), end - have);
				*len += end - have;
				last->end = end;
				last->dump = end - last->start;
			}
			continue;
		}
		v[npages + n] = (struct vma){ .start = p->start, .end = end, .path = "",
					      .perms = "rw-p", .dump = p->len };
		memcpy(out + *len, l->arena + p->at, p->len);
		*len += p->len;
		n++;
	}
	*nv = npages + n;
	return out;
}

/* The pages kept: heapprof's record mappings (holes for zero pages), each module's
 * first page, the vDSO. */
static size_t choose_pages(const struct vma *maps, size_t nmaps, uint64_t (*own)[3], size_t nown,
			   struct vma *v, uint64_t page)
{
	size_t n = 0;

	for (size_t i = 0; i < nown; i++)
		if (own_kept((unsigned)own[i][2]) && own[i][1] > own[i][0])
			v[n++] = (struct vma){ .start = own[i][0], .end = own[i][1], .path = "",
					       .perms = "rw-p", .dump = own[i][1] - own[i][0],
					       .holes = true };
	for (size_t i = 0; i < nmaps; i++) {
		const struct vma *m = &maps[i];
		bool file = m->path[0] == '/' && strncmp(m->path, "/dev/", 5);

		if (m->perms[0] != 'r' || snap_elf_is_scratch(m->start, m->end))
			continue;
		if (!strcmp(m->path, "[vdso]"))
			v[n++] = (struct vma){ .start = m->start, .end = m->end, .path = m->path,
					       .dump = m->end - m->start };
		else if (file && m->pgoff == 0)
			v[n++] = (struct vma){ .start = m->start, .end = m->end, .path = m->path,
					       .dump = page };
		else
			continue;
		memcpy(v[n - 1].perms, m->perms, sizeof(m->perms));
	}
	sort_vmas(v, n);
	return n;
}

/* heapprof's mapping v at off: copied CHUNK at a time, its non-zero pages written. A
 * page that cannot be read (unmapped meanwhile) stays a hole. */
static int write_own(struct lean *l, int fd, const struct vma *v, uint64_t off, uint64_t *data)
{
	uint64_t page = l->page;

	for (uint64_t at = 0; at < v->dump; at += CHUNK) {
		size_t len = v->dump - at < CHUNK ? (size_t)(v->dump - at) : CHUNK;
		unsigned char *b = l->tmp;

		if (!mem_read(l, b, v->start + at, len))
			for (size_t i = 0; i < len; i += page)
				if (!mem_read(l, b + i, v->start + at + i, page))
					memset(b + i, 0, page);
		for (size_t i = 0, run; i < len; i = run) {
			int err;

			while (i < len && snap_elf_zero_page(b + i, page))
				i += page;
			for (run = i; run < len && !snap_elf_zero_page(b + run, page);)
				run += page;
			if (run == i)
				continue;
			if ((err = snap_elf_pwrite(fd, b + i, run - i, off + at + i)))
				return err;
			*data += run - i;
		}
	}
	return 0;
}

/* A module's page or the vDSO, straight from memory: a page gone (EFAULT) is a hole. */
static int write_direct(int fd, const struct vma *v, uint64_t off, uint64_t page, uint64_t *data)
{
	for (uint64_t i = 0; i < v->dump; i += page) {
		int err = snap_elf_pwrite(fd, (const void *)(uintptr_t)(v->start + i), page, off + i);

		if (err && err != EFAULT)
			return err;
		*data += err ? 0 : page;
	}
	return 0;
}

/* ---- the snapshot ------------------------------------------------------------------- */

/* The registry's live addresses; -1 if it is not whole. */
static long copy_registry(uint64_t **out)
{
	long n = sampled_copy(NULL, 0);

	for (int tries = 0; n >= 0 && tries < 8; tries++) {
		size_t room = (size_t)n + 64 + (size_t)n / 8;
		uint64_t *a = snap_elf_grab(room * sizeof(*a));

		if (!a)
			return -1;
		n = sampled_copy(a, room);
		if (n >= 0 && (size_t)n <= room) {
			*out = a;
			return n;
		}
	}
	return -1;
}

/* heapprof's own mappings from the map table; -1 if it cannot list them all. */
static long copy_own(uint64_t (**out)[3])
{
	long n = maps_own ? maps_own(NULL, 0) : -1;

	for (int tries = 0; n >= 0 && tries < 8; tries++) {
		size_t room = (size_t)n + 16;
		uint64_t (*o)[3] = snap_elf_grab(room * sizeof(*o));

		if (!o)
			return -1;
		n = maps_own(o, room);
		if (n >= 0 && (size_t)n <= room) {
			*out = o;
			return n;
		}
	}
	return -1;
}

/* What the lean note says: the headers it holds (heapprof_format.h). */
static void note_lean(struct notes *nb, const struct lean *l)
{
	uint64_t w[HP_LEAN_WORDS] = { l->headers, 0 };

	snap_elf_note_of(nb, HP_NOTE_OWNER, HP_NOTE_LEAN, w, sizeof(w));
}

/*
 * The snapshot's moment is when the copy ended: the records were read last, and the
 * analyzer's "now" must not come before the newest time they show. The time note,
 * last of the notes at at in nb, is written again with it.
 */
static int note_time_again(struct snap_job *j, struct notes *nb, size_t at, uint64_t notes_off)
{
	struct timespec ts;

	j->at_mono_ns = hp_clock_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	j->at_real_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	nb->n = at;
	snap_elf_note_time(nb, j);
	return snap_elf_pwrite(j->fd, nb->p + at, nb->n - at, notes_off + at);
}

static int fail(struct snap_job *j, int err, const char *what)
{
	snap_elf_say(j, err, what, 0, 0);
	snap_elf_release();
	return err;
}

/* Everything read from the process: the pieces in v (pages, then small ones). */
static int gather(struct snap_job *j, struct lean *l, uint64_t *a, size_t na,
		  uint64_t (*own)[3], size_t nown, struct vma **out, size_t *npages, size_t *nout,
		  unsigned char **bytes, size_t *nbytes, struct notes *nb, size_t *time_at)
{
	size_t len, auxv_len, nmaps = 1;
	char *maps = snap_elf_slurp("/proc/self/maps", &len, 64 << 20), *auxv;
	struct iovec *io = snap_elf_grab(2 * BATCH * sizeof(*io));
	struct vma *m, *v;

	if (!maps || !len)
		return maps ? EIO : errno;
	if (!(auxv = snap_elf_slurp("/proc/self/auxv", &auxv_len, 1 << 16)))
		return errno;
	for (size_t i = 0; i < len; i++)
		nmaps += maps[i] == '\n';
	l->small_cap = na + 2 * MAX_LIBS + 8;
	l->arena_cap = na * 24 + LM_BYTES;
	if (!io || !(m = snap_elf_grab(nmaps * sizeof(*m))) ||
	    !(l->small = snap_elf_grab(l->small_cap * sizeof(*l->small))) ||
	    !(l->arena = snap_elf_grab(l->arena_cap)))
		return ENOMEM;
	nmaps = snap_elf_maps(maps, m, nmaps);
	read_headers(l, a, na, io, io + BATCH);
	link_map_add(l, auxv, auxv_len);
	if (!(v = snap_elf_grab((nown + nmaps + l->nsmall + 1) * sizeof(*v))))
		return ENOMEM;
	*npages = choose_pages(m, nmaps, own, nown, v, l->page);
	if (!(*bytes = join_small(l, v, *npages, nout, nbytes)))
		return ENOMEM;
	*out = v;
	nb->max = 4096 + auxv_len + len * 2 + sizeof(struct elf_prstatus);
	if (!(nb->p = snap_elf_grab(nb->max)))
		return ENOMEM;
	snap_elf_note_status(nb, j, j->tid, j->regs, true);
	snap_elf_note_psinfo(nb, j);
	snap_elf_note(nb, NT_AUXV, auxv, auxv_len);
	snap_elf_note_files(nb, m, nmaps, l->page);
	note_lean(nb, l);
	*time_at = nb->n;	/* last: written again once the copy is over */
	snap_elf_note_time(nb, j);
	return 0;
}

int snap_lean_write(struct snap_job *j, const char **why_not)
{
	struct lean l = { .pid = getpid(), .page = (uint64_t)sysconf(_SC_PAGESIZE) };
	uint64_t *a = NULL, (*own)[3] = NULL, end = 0, data = 0, off, probe = 1, got = 0;
	long na, nown;
	size_t nv = 0, nbytes = 0, npages = 0, time_at = 0;
	struct notes nb = { 0 };
	unsigned char *bytes = NULL;
	struct vma *v = NULL;
	int err;

	*why_not = NULL;
	if (!(l.tmp = snap_elf_grab(CHUNK)) || !mem_read(&l, &got, (uintptr_t)&probe, sizeof(probe)))
		*why_not = "process_vm_readv is not allowed here";
	else if ((na = copy_registry(&a)) < 0)
		*why_not = "the registry of sampled blocks is not whole";
	else if ((nown = copy_own(&own)) < 0)
		*why_not = "the map table cannot list heapprof's mappings (HEAPPROF_MAPS)";
	if (*why_not) {
		snap_elf_release();
		return -1;
	}
	if ((err = gather(j, &l, a, (size_t)na, own, (size_t)nown, &v, &npages, &nv, &bytes, &nbytes,
			  &nb, &time_at)))
		return fail(j, err, "");
	if ((err = snap_elf_headers(j, v, nv, &nb, l.page, nv, &end)))
		return fail(j, err, "cannot write: ");
	off = end - nbytes;
	for (size_t i = npages; i-- > 0 && !err;) {	/* backwards from the small ones */
		off -= v[i].dump;
		err = v[i].holes ? write_own(&l, j->fd, &v[i], off, &data)
				 : write_direct(j->fd, &v[i], off, l.page, &data);
	}
	if (!err && nbytes && !(err = snap_elf_pwrite(j->fd, bytes, nbytes, end - nbytes)))
		data += nbytes;
	if (!err && ftruncate(j->fd, (off_t)end) < 0)
		err = errno;
	if (!err)
		err = note_time_again(j, &nb, time_at, snap_elf_notes_at(nv));
	if (err)
		return fail(j, err, "cannot write: ");
	if ((err = snap_elf_publish(j)))
		return fail(j, err, "cannot name it: ");
	if (!j->quiet)
		snap_elf_say(j, 0, NULL, end, data);
	snap_elf_release();
	return 0;
}
