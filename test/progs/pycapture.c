/*
 * Loaded into a Python interpreter with ctypes: calls heapprof's Python capture and
 * name records (preload/interp_python.c) from C, as the hooks will, and decodes them in the
 * process through the analyzer's decoder (analyzer/python.c), for t1005 and t3014.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "../../analyzer/python.h"
#include "../../preload/interp_python.h"
#include "../../preload/table.h"

#define EXPORT __attribute__((visibility("default")))

/* table.c's record memory and check, for records made outside heapprof.so */
void *table_alloc_record(size_t size, unsigned own)
{
	static char *cur;
	static size_t left;
	void *p;

	(void)own;
	size = (size + 63) & ~(size_t)63;
	if (size > left) {
		size_t len = size > (1u << 20) ? size : 1u << 20;

		cur = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (cur == MAP_FAILED)
			return NULL;
		left = len;
	}
	p = cur;
	cur += size;
	left -= size;
	return p;
}

uint64_t table_record_check(const void *rec, const uint64_t *w, unsigned nw)
{
	uint64_t x = hp_mix(HP2_SEED, (uint64_t)(uintptr_t)rec);

	for (unsigned i = 0; i < nw; i++)
		x = hp_mix(x, w[i]);
	return hp_check_final(x);
}

/* this process's memory, through the kernel: a bad address is false, not a crash */
static bool read_self(const void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static size_t put(char *out, size_t cap, size_t n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (n >= cap)
		return n;
	va_start(ap, fmt);
	k = vsnprintf(out + n, cap - n, fmt, ap);
	va_end(ap);
	return k < 0 ? n : n + (size_t)k;
}

EXPORT unsigned pyc_init(void)
{
	return python_init();
}

/*
 * The calling thread's Python frames into out, one line each, innermost first:
 *   "record NAME FILE LINE|code NAME FILE LINE|entry|CODE OFFSET RECORD"
 * names from the name record, from the live code object, the loop-entry flag, and
 * the addresses (for t3014, which names them again from a core). Returns the count.
 */
EXPORT int pyc_capture(char *out, size_t cap)
{
	struct interp_frame f[64];
	struct py_mem m = { read_self, NULL };
	unsigned n = python_capture(f, 64), version = python_init();
	size_t len = 0;

	out[0] = 0;
	for (unsigned i = 0; i < n; i++) {
		const void *rec = python_remember(f[i].code);
		struct py_name r, c;

		python_name_record(&m, (uintptr_t)rec, f[i].offset, &r);
		python_name_code(&m, version, f[i].code, f[i].offset, &c);
		len = put(out, cap, len, "record %s %s %d|code %s %s %d|%s|%#lx %u %#lx\n", r.func,
			  r.file, r.line, c.func, c.file, c.line,
			  f[i].flags & PYTHON_F_ENTRY ? "entry" : "-", (unsigned long)f[i].code,
			  f[i].offset, (unsigned long)(uintptr_t)rec);
	}
	return (int)n;
}

/* The cost of a capture of the calling thread's frames, and of naming them, in ns. */
EXPORT double pyc_bench(int iterations, int remember)
{
	struct interp_frame f[64];
	struct timespec a, b;
	unsigned n = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < iterations; i++) {
		n = python_capture(f, 64);
		for (unsigned k = 0; remember && k < n; k++)
			python_remember(f[k].code);
		__asm__ volatile("" ::: "memory");
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iterations;
}

/* The name record at rec, as "NAME FILE LINE" (t1005: after its code object is gone). */
EXPORT int pyc_name_record(unsigned long rec, unsigned offset, char *out, size_t cap)
{
	struct py_mem m = { read_self, NULL };
	struct py_name r;
	bool ok = python_name_record(&m, rec, offset, &r);

	snprintf(out, cap, "%s %s %d", r.func, r.file, r.line);
	return ok;
}
