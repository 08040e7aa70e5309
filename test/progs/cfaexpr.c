/*
 * An allocation whose caller's frame the cfi unwinder's rule cache cannot hold (its CFA
 * is a DWARF expression): heapprof hands that stack to libgcc's unwinder, which
 * heapprof.so loads at that moment (t1016). x86_64 only; elsewhere a plain call.
 * Allocates 4000 bytes through it and 1000 bytes plainly, prints "ready", waits.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *expr_malloc(size_t size);

#if defined(__x86_64__)
__asm__(".text\n"
	".globl expr_malloc\n"
	".type expr_malloc, @function\n"
	"expr_malloc:\n"
	".cfi_startproc\n"
	"	subq $8, %rsp\n"
	"	.cfi_escape 0x0f, 0x02, 0x77, 0x10\n"	/* def_cfa_expression: breg7 (rsp) +16 */
	"	call malloc@PLT\n"
	"	addq $8, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size expr_malloc, .-expr_malloc\n");
#else
NOINLINE void *expr_malloc(size_t size)
{
	return malloc(size);
}
#endif

static void *volatile keep[2];

NOINLINE void site_expr(void)
{
	keep[0] = expr_malloc(4000);
}

NOINLINE void site_plain(void)
{
	keep[1] = malloc(1000);
}

int main(void)
{
	site_plain();
	site_expr();
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
