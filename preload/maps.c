/*
 * mmap, mmap64, munmap and mremap of heapprof.so: each call is made as the system call
 * it is, and its effect on anonymous memory kept in the map table
 * (include/heapprof_format.h): every mapping the program makes, with its stack, and
 * heapprof's own. The table is a sorted array under a spin lock held only across the
 * call and a memmove: calls that map are rare beside malloc's, and each is a syscall.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "compiler.h"
#include "maps.h"
#include "options.h"
#include "table.h"
#include "unwind.h"
#include "util.h"

struct map_table {
	uint64_t magic, check, w2;
	uint64_t used;		/* entries in use */
	uint64_t writes;	/* odd while a change is under way */
	uint64_t lost;		/* calls whose effect is not recorded */
	uint64_t reserved[2];
	uint64_t e[][HP2_MAP_ENTRY_WORDS];
};

static struct map_table *maps;
static size_t maps_cap;
static int maps_lock;		/* 0 free, 1 held */
static uintptr_t page_mask;
/* The thread holds maps_lock: a signal handler's call in it passes untracked. */
static HP_TLS bool maps_busy;

/* The object of the allocator heapprof passes blocks to (maps_allocator): a call from
 * there may hold the allocator's lock, so it gets no stack (unwinding may allocate). */
static uintptr_t alloc_lo, alloc_hi;

/* heapprof.so's own bytes, from its ELF header to its end: a call from in there is
 * heapprof's (its tables, the signal thread's stack, snapshot buffers). */
extern const char __ehdr_start[] HP_HIDDEN;
extern const char _end[] HP_HIDDEN;

/* ---- the system calls themselves -------------------------------------------------- */

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
#if defined(__s390x__)
	long args[6] = { (long)addr, (long)len, prot, flags, fd, (long)off };

	return (void *)syscall(SYS_mmap, args);
#elif defined(SYS_mmap2) && !defined(__LP64__)
	if (off & 4095) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap2, addr, len, prot, flags, fd, (long)(off >> 12));
#else
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
#endif
}

/* ---- the table --------------------------------------------------------------------- */

static void lock(void)
{
	for (unsigned spins = 0; __atomic_exchange_n(&maps_lock, 1, __ATOMIC_ACQUIRE); spins++)
		if (spins > 64)
			sched_yield();
	maps_busy = true;
	__atomic_store_n(&maps->writes, maps->writes + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void unlock(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&maps->writes, maps->writes + 1, __ATOMIC_RELAXED);
	maps_busy = false;
	__atomic_store_n(&maps_lock, 0, __ATOMIC_RELEASE);
}

/*
 * Entries are sorted by start, highest first: the kernel maps top-down, so a new
 * mapping usually lands at the end of the array and the memmoves stay short.
 * The first entry that starts below b.
 */
static size_t first_below(uintptr_t b)
{
	size_t lo = 0, hi = maps->used;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps->e[mid][0] >= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool room_at(size_t i)
{
	if (maps->used >= maps_cap) {
		__atomic_add_fetch(&maps->lost, 1, __ATOMIC_RELAXED);
		return false;
	}
	memmove(maps->e[i + 1], maps->e[i], (maps->used - i) * sizeof(maps->e[0]));
	maps->used++;
	return true;
}

/* [a, b) is no longer mapped (or no longer what it was): cut it out of every entry. */
static void cut(uintptr_t a, uintptr_t b)
{
	size_t i = first_below(b), j;

	if (i < maps->used && maps->e[i][0] < a && maps->e[i][1] > b) {	/* a hole inside */
		if (room_at(i + 1)) {
			memcpy(maps->e[i + 1], maps->e[i], sizeof(maps->e[0]));
			maps->e[i + 1][1] = a;
		}
		maps->e[i][0] = b;
		return;
	}
	if (i < maps->used && maps->e[i][1] > b) {	/* its start is inside */
		maps->e[i][0] = b;
		i++;
	}
	for (j = i; j < maps->used && maps->e[j][0] >= a; j++)
		;	/* entries wholly inside go */
	if (j < maps->used && maps->e[j][1] > a)
		maps->e[j][1] = a;
	memmove(maps->e[i], maps->e[j], (maps->used - j) * sizeof(maps->e[0]));
	maps->used -= j - i;
}

/* [a, b) is a new mapping: after cut(a, b). */
static void add(uintptr_t a, uintptr_t b, uint64_t what)
{
	size_t i = first_below(b);

	if (!room_at(i))
		return;
	maps->e[i][0] = a;
	maps->e[i][1] = b;
	maps->e[i][2] = what;
}

/* What the entry holding a says (0: none). */
static uint64_t what_at(uintptr_t a)
{
	size_t i = first_below(a + 1);

	return i < maps->used && maps->e[i][1] > a ? maps->e[i][2] : 0;
}

static uint64_t entry_word(uint32_t stack, unsigned origin, unsigned flags)
{
	return stack | (uint64_t)origin << 32 | (uint64_t)flags << 40;
}

/* The id of the stack of a caller (maps.h): the hooks' own, given at maps_init(). */
static uint32_t (*stack_id)(const struct unwind_start *st);

/* Made once the options are read (hooks_boot.c), before heapprof maps its own tables;
 * calls before that pass untracked. */
void maps_init(uint32_t (*id)(const struct unwind_start *st))
{
	size_t size;
	struct map_table *t;

	stack_id = id;
	page_mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	size = sizeof(*t) + hp_opt.maps * sizeof(t->e[0]);
	t = hp_opt.maps ? sys_mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
	if (t == MAP_FAILED)
		return;
	t->w2 = hp_opt.maps | (uint64_t)HP2_MAP_ENTRY_WORDS << 32;
	t->check = table_record_check(t, &t->w2, 1);
	maps_cap = hp_opt.maps;
	t->used = 1;	/* itself */
	t->e[0][0] = (uintptr_t)t;
	t->e[0][1] = ((uintptr_t)t + size + page_mask) & ~page_mask;
	t->e[0][2] = entry_word(HP2_OWN_MAPS, HP2_MAP_HEAPPROF, 0);
	t->magic = HP2_MAPS_MAGIC;
	__atomic_store_n(&maps, t, __ATOMIC_RELEASE);
}

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t fn = (uintptr_t)arg, lo = UINTPTR_MAX, hi = 0;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (fn < lo || fn >= hi)
		return 0;
	alloc_lo = lo;
	alloc_hi = hi;
	return 1;
}

void maps_allocator(void *fn)
{
	if (fn)
		dl_iterate_phdr(find_object, fn);
}

long maps_own(uint64_t (*out)[3], size_t max)
{
	size_t n = 0;

	/* the table's lock: it may be held by this thread (a signal handler's snapshot) */
	if (!__atomic_load_n(&maps, __ATOMIC_ACQUIRE) || maps_busy)
		return -1;
	lock();
	if (maps->lost) {
		unlock();
		return -1;	/* one of ours may be among the calls not recorded */
	}
	for (size_t i = 0; i < maps->used; i++) {
		if ((maps->e[i][2] >> 32 & 0xFF) != HP2_MAP_HEAPPROF)
			continue;
		if (n < max) {
			out[n][0] = maps->e[i][0];
			out[n][1] = maps->e[i][1];
			out[n][2] = (uint32_t)maps->e[i][2];
		}
		n++;
	}
	unlock();
	return (long)n;
}

void maps_after_fork(void)
{
	maps_lock = 0;	/* the thread that held it is not in the child */
	maps_busy = false;
}

static bool from_heapprof(uintptr_t pc)
{
	return pc >= (uintptr_t)__ehdr_start && pc < (uintptr_t)_end;
}

/* Whether this call is recorded: the table made, and not a signal handler's call in a
 * thread that is changing it. */
static bool tracking(void)
{
	if (!__atomic_load_n(&maps, __ATOMIC_ACQUIRE))
		return false;
	if (maps_busy) {
		__atomic_add_fetch(&maps->lost, 1, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

/* ---- the calls ----------------------------------------------------------------------- */

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off,
		     const struct unwind_start *st)
{
	uint64_t what = 0;
	uintptr_t a;
	void *r;

	if (!tracking())
		return sys_mmap(addr, len, prot, flags, fd, off);
	if (flags & MAP_ANONYMOUS) {
		unsigned mf = (flags & MAP_TYPE) == MAP_SHARED ? HP2_MAPF_SHARED : 0;

		/* before the lock: the stack table may map memory for the record */
		if (from_heapprof(st->pc))
			what = entry_word(hp_own_map, HP2_MAP_HEAPPROF, mf);
		else if (st->pc >= alloc_lo && st->pc < alloc_hi)
			what = entry_word(0, HP2_MAP_ALLOCATOR, mf);
		else
			what = entry_word(stack_id(st), HP2_MAP_PROGRAM, mf);
	}
	lock();
	r = sys_mmap(addr, len, prot, flags, fd, off);
	if (r != MAP_FAILED) {
		a = (uintptr_t)r;
		cut(a, (a + len + page_mask) & ~page_mask);	/* MAP_FIXED replaces */
		if (what)
			add(a, (a + len + page_mask) & ~page_mask, what);
	}
	unlock();
	return r;
}

HP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct unwind_start st;

	UNWIND_START(st);
	return do_mmap(addr, len, prot, flags, fd, off, &st);
}

#if !defined(__LP64__)
HP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	struct unwind_start st;

	UNWIND_START(st);
	if (off != (off_t)off) {
		errno = EOVERFLOW;
		return MAP_FAILED;
	}
	return do_mmap(addr, len, prot, flags, fd, (off_t)off, &st);
}
#else
/* glibc's mmap64 is mmap on 64-bit targets: the same walk, its own entry */
HP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct unwind_start st;

	UNWIND_START(st);
	return do_mmap(addr, len, prot, flags, fd, off, &st);
}
#endif

HP_EXPORT int munmap(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	int r;

	if (!tracking())
		return (int)syscall(SYS_munmap, addr, len);
	lock();
	r = (int)syscall(SYS_munmap, addr, len);
	if (r == 0 && len)
		cut(a, (a + len + page_mask) & ~page_mask);
	unlock();
	return r;
}

HP_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	uintptr_t o = (uintptr_t)old, n;
	void *want = NULL, *r;
	uint64_t what;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (!tracking())
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
	lock();
	what = what_at(o);
	r = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
	if (r != MAP_FAILED) {
		n = (uintptr_t)r;
		if (old_len)	/* 0: a second mapping of shared memory, the first stays */
			cut(o, (o + old_len + page_mask) & ~page_mask);
		cut(n, (n + new_len + page_mask) & ~page_mask);
		if (what)
			add(n, (n + new_len + page_mask) & ~page_mask,
			    what | (uint64_t)HP2_MAPF_REMAPPED << 40);
	}
	unlock();
	return r;
}
