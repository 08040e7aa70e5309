/*
 * heapprof.h: control heapprof.so from the program it profiles. C and C++.
 *
 * Nothing to link: each call below finds heapprof.so through a weak reference to
 * heapprof_api_v1, which only heapprof.so defines. A program built with this header
 * runs unchanged without LD_PRELOAD=heapprof.so: the calls then do nothing, and
 * heapprof_snapshot() returns ENOSYS. Code built without -fPIC/-fPIE (a non-PIE
 * executable) asks dlsym instead, which glibc before 2.34 keeps in libdl (-ldl).
 *
 *   #include <heapprof.h>
 *   heapprof_region_begin("parse");   ... blocks made here carry region "parse"
 *   heapprof_region_end();
 *   heapprof_snapshot(NULL);          ... a core-like file heapprof-analyze reads
 *
 * All calls are safe from any thread, and heapprof_snapshot() also from a signal
 * handler (it takes no lock malloc could hold and allocates nothing), except in code
 * built without -fPIC/-fPIE, where each call goes through dlsym.
 */
#ifndef HEAPPROF_H
#define HEAPPROF_H

#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The table heapprof.so hands out. size: bytes of it that heapprof.so fills; a later
 * version only appends fields. Use the wrappers below instead. */
struct heapprof_api {
	unsigned size;
	int (*snapshot)(const char *path);
	void (*enable)(int on);
	void (*thread_enable)(int on);
	void (*region_begin)(const char *name);
	void (*region_end)(void);
	int (*snapshot_wait)(int timeout_ms);	/* since heapprof 0.2 */
};

extern const struct heapprof_api *heapprof_api_v1(void) __attribute__((weak));

#if !defined(__PIC__) && !defined(__PIE__)
/* A non-PIE executable settles a weak reference that nothing defines at link time to
 * "absent" for good: ask the dynamic linker instead (in libc since glibc 2.34; older
 * ones need -ldl). 0 is RTLD_DEFAULT, spelled out to need no _GNU_SOURCE. */
#include <dlfcn.h>
#endif

static inline const struct heapprof_api *heapprof_api_(void)
{
#if !defined(__PIC__) && !defined(__PIE__)
	const struct heapprof_api *(*get)(void) = 0;
	void *sym;

	if (heapprof_api_v1)	/* linked in (libheapprof.a) */
		return heapprof_api_v1();
	sym = dlsym((void *)0, "heapprof_api_v1");

	__builtin_memcpy(&get, &sym, sizeof(get));
	return get ? get() : 0;
#else
	return heapprof_api_v1 ? heapprof_api_v1() : 0;
#endif
}

/*
 * Write a snapshot of the process: an ELF core holding the heap and heapprof's tables,
 * read by `heapprof-analyze PROGRAM SNAPSHOT` like a core from gcore. path: the file
 * to create (never overwritten), or NULL for the HEAPPROF_OUTPUT pattern (default
 * heapprof.%p.%n.snap: pid, then 1, 2, ..., passing over names already taken). The
 * caller is paused for about one fork; a child writes the file (under path ".part",
 * renamed when complete) while the program runs on, and says on stderr when it is
 * written or why not. One child writes at a time: a call while an earlier snapshot is
 * still being written first waits for it (HEAPPROF_WAIT_MS, default 60 s, at most).
 *
 * Returns 0 once the child has its copy of the process: the file is complete when
 * heapprof_snapshot_wait() returns 0, and at the latest when the process has exited
 * (exit waits for it, HEAPPROF_WAIT_MS at most). Otherwise an errno value: EEXIST
 * (the file exists), ENOENT, EACCES and the like (the file cannot be created), EAGAIN
 * or ENOMEM (no fork), EBUSY (an earlier snapshot still being written after
 * HEAPPROF_WAIT_MS, or called from a signal handler that interrupted a snapshot on this
 * very thread), ENOSYS (heapprof.so is not loaded).
 */
static inline int heapprof_snapshot(const char *path)
{
	const struct heapprof_api *a = heapprof_api_();

	return a ? a->snapshot(path) : ENOSYS;
}

/*
 * Wait up to timeout_ms milliseconds (negative: as long as it takes) for the snapshot
 * being written, if any. Returns 0 when the last snapshot's file is complete under
 * its final name (or none was asked for), ETIMEDOUT when it is still being written,
 * or the errno value its writing failed with (EIO: the writer died). ENOSYS without
 * heapprof.so or with one older than this header. Safe in a signal handler.
 */
static inline int heapprof_snapshot_wait(int timeout_ms)
{
	const struct heapprof_api *a = heapprof_api_();

	if (!a || a->size < __builtin_offsetof(struct heapprof_api, snapshot_wait) +
				   sizeof(a->snapshot_wait))
		return ENOSYS;
	return a->snapshot_wait(timeout_ms);
}

/* Switch tagging off (0) or on (non-zero) for the whole process. While off, new blocks
 * are neither tagged nor counted; blocks tagged before stay in reports until freed,
 * and free() works on both. HEAPPROF_START=off starts the process switched off. */
static inline void heapprof_enable(int on)
{
	const struct heapprof_api *a = heapprof_api_();

	if (a)
		a->enable(on);
}

/* The same for the calling thread alone (both switches must be on to tag). */
static inline void heapprof_thread_enable(int on)
{
	const struct heapprof_api *a = heapprof_api_();

	if (a)
		a->thread_enable(on);
}

/* Regions of code, per thread and nested: blocks allocated between begin and the
 * matching end carry the innermost region's name (a copy is kept, so name may be
 * freed after). heapprof-analyze --region=NAME reports those blocks alone. */
static inline void heapprof_region_begin(const char *name)
{
	const struct heapprof_api *a = heapprof_api_();

	if (a)
		a->region_begin(name);
}

static inline void heapprof_region_end(void)
{
	const struct heapprof_api *a = heapprof_api_();

	if (a)
		a->region_end();
}

#ifdef __cplusplus
}
#endif

#endif
