/*
 * The port of docs/PORTING.md, compiled and run by the tests on the host and on each
 * foreign target: a firmware's own allocator (a toy bump allocator over a RAM array)
 * wrapped with the portable tagging core, preload/hp_tag.c. At the end it writes the
 * RAM to a file, as OpenOCD's dump_image would, and prints "ram ADDR" for --raw.
 */
#include <stdint.h>
#include <stdio.h>

#include "hp_tag.h"

#define NOINLINE __attribute__((noinline))

/* ---- the firmware's allocator: the port does not change it ---- */

static _Alignas(16) unsigned char ram[64 * 1024];
static size_t ram_used;

static void *fw_alloc(size_t size)
{
	size_t start = (ram_used + 15) & ~(size_t)15;

	if (size > sizeof(ram) - start)
		return NULL;
	ram_used = start + size;
	return ram + start;
}

static void fw_release(void *p)
{
	(void)p;	/* a bump allocator never reuses memory */
}

/* ---- the port ---- */

#define HP_FRAMES 8

struct hp_where {
	void *frame;		/* the wrapper's frame record */
	uintptr_t ret;		/* the wrapper's return address: pcs[0] */
};

static uintptr_t stack_top;	/* a frame walk stops below this (main's frame) */

/*
 * The backtrace callback. With frame records ([fp] = caller's fp, [fp + 1] = return
 * address: x86_64 and AArch64 built with -fno-omit-frame-pointer) it walks them while
 * they climb the stack below stack_top; anywhere else it gives the caller alone.
 */
static unsigned hp_backtrace(uintptr_t *pcs, unsigned max, void *arg)
{
	const struct hp_where *w = arg;
	unsigned n = 0;

	pcs[n++] = w->ret;
#if defined(__x86_64__) || defined(__aarch64__)
	for (uintptr_t *fp = w->frame, *next; n < max; fp = next) {
		next = (uintptr_t *)fp[0];
		if (next <= fp || (uintptr_t)next >= stack_top)
			break;
		pcs[n++] = next[1];
	}
#else
	(void)max;
#endif
	return n;
}

/* What the firmware calls instead of fw_alloc: the block plus room for a header. */
NOINLINE static void *hp_malloc(size_t size)
{
	struct hp_where w = { __builtin_frame_address(0), (uintptr_t)__builtin_return_address(0) };
	struct hp_tagger t = { .max_frames = HP_FRAMES, .backtrace = hp_backtrace, .arg = &w };
	size_t reserve = hp_tag_reserve(HP_FRAMES, 16);
	void *real = size <= SIZE_MAX - reserve ? fw_alloc(reserve + size) : NULL;

	return real ? hp_tag_block(&t, real, reserve, size) : NULL;
}

/* ... and instead of fw_release: blocks without a live header pass straight through. */
static void hp_free(void *user)
{
	void *real = user ? hp_tag_real(user) : NULL;

	if (!real) {
		fw_release(user);
		return;
	}
	hp_tag_erase(user);	/* before the memory goes back: no scan counts it again */
	fw_release(real);
}

/* ---- the firmware's code, and a debugger's dump_image at the end ---- */

static void *volatile sink;	/* keeps each call a real call, never a tail jump */

NOINLINE static void *sensor_buffer(size_t n) { void *p = hp_malloc(n); sink = p; return p; }
NOINLINE static void *packet_buffer(size_t n) { void *p = hp_malloc(n); sink = p; return p; }

int main(int argc, char **argv)
{
	FILE *f;

	stack_top = (uintptr_t)__builtin_frame_address(0);
	for (int i = 0; i < 3; i++)
		sensor_buffer(100);
	packet_buffer(1000);
	hp_free(packet_buffer(5000));
	if (argc != 2 || !(f = fopen(argv[1], "wb")) || fwrite(ram, 1, sizeof(ram), f) != sizeof(ram) ||
	    fclose(f) != 0) {
		fputs("usage: firmware_example IMAGE (writes the RAM image)\n", stderr);
		return 2;
	}
	printf("ram %#lx\n", (unsigned long)(uintptr_t)ram);
	return 0;
}
