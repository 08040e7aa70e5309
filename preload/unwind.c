/*
 * Stack capture for heapprof.so: picks one unwinder (struct unwinder, unwinder.h) once
 * by HEAPPROF_UNWIND, and counts dlclose() calls so that unwinders which cache what
 * they read from a library can tell when that library may be gone.
 */
#define _GNU_SOURCE
#include "unwinder.h"

#include <dlfcn.h>
#include <string.h>

#include "util.h"

/* Module records (modules.c); weak, so that the unwinders also link alone (tests). */
void *modules_before_close(void *handle) __attribute__((weak, visibility("hidden")));
void modules_after_close(void *rec, int (*real_dlclose)(void *))
	__attribute__((weak, visibility("hidden")));

#define HP_EXPORT __attribute__((visibility("default")))

/* In order of preference for the default; libgcc works everywhere. */
static const struct unwinder *const unwinders[] = { &unwinder_cfi, &unwinder_fp, &unwinder_libgcc };
#define N_UNWINDERS (sizeof(unwinders) / sizeof(unwinders[0]))

/* Written while the library boots, before any thread can capture. NULL: pcs[0] only. */
static const struct unwinder *chosen;

unsigned unwind_gen;

static const struct unwinder *by_name(const char *name)
{
	for (unsigned i = 0; i < N_UNWINDERS; i++)
		if (strcmp(name, unwinders[i]->name) == 0)
			return unwinders[i];
	return NULL;
}

void unwind_init(const char *name)
{
	const struct unwinder *want;

	unwind_stack_init();
	if (name && *name) {
		want = by_name(name);
		if (!strcmp(name, "libunwind"))
			/* README, "Unwinders": its pipe of its own, syscalls while unwinding */
			hp_warn("HEAPPROF_UNWIND=libunwind: dropped (unsafe in a preload, see the "
				"README); using the default", NULL, NULL);
		else if (!want)
			hp_warn("HEAPPROF_UNWIND=", name, ": unknown unwinder, using the default");
		else if (!want->init())
			hp_warn("HEAPPROF_UNWIND=", name, ": not available here, using the default");
		else {
			chosen = want;
			return;
		}
	}
	/* the default: cfi where it works (x86_64, glibc >= 2.35), else libgcc */
	chosen = unwinder_cfi.init() ? &unwinder_cfi : &unwinder_libgcc;
}

const char *unwind_name(void)
{
	return chosen ? chosen->name : "none";
}

unsigned unwind_capture(uintptr_t *pcs, unsigned max, const struct unwind_start *st)
{
	if (max == 0)
		return 0;
	if (max > HP_UNWIND_MAX + 1)
		max = HP_UNWIND_MAX + 1;
	pcs[0] = st->pc;
	if (max == 1 || !chosen)
		return 1;
	return chosen->capture(pcs, max, st);
}

/*
 * Every unload goes through here (the program's and its libraries' calls of dlclose
 * bind to the first definition in the process, ours), so the generation moves
 * before a library loaded at the same address can allocate. Bumped after the real
 * dlclose: a rule cached meanwhile from the old object carries the old generation.
 * glibc's internal unloads (NSS and iconv modules, __libc_dlclose) bypass it; glibc
 * unloads those at exit only.
 */
HP_EXPORT int dlclose(void *handle)
{
	static int (*real)(void *);
	int (*fn)(void *) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	void *rec;
	int rc;

	if (!fn) {
		fn = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!fn)
			return -1;	/* no libc below us: nothing was loaded by it */
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	rec = modules_before_close ? modules_before_close(handle) : NULL;
	rc = fn(handle);
	__atomic_add_fetch(&unwind_gen, 1, __ATOMIC_RELEASE);
	if (rc == 0 && modules_after_close)
		modules_after_close(rec, fn);
	return rc;
}
