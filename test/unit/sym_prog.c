/*
 * Helper for sym_test.c, which compiles it (PIE, non-PIE, without -g, for other
 * architectures): known functions, an always-inlined callee, and return addresses
 * taken at run time. "print" prints them; "wait" prints them, then waits for gcore.
 * sym_test.c finds line numbers by the "@name" markers: keep one marker per line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile int sym_prog_sink;
static void *ra[2];

__attribute__((noipa)) void sym_prog_probe(int slot)
{
	ra[slot] = __builtin_return_address(0);
}

static inline __attribute__((always_inline)) void sym_prog_leaf(int x)
{
	sym_prog_sink += x;
	sym_prog_probe(1); /* @leaf_probe */
	sym_prog_sink += x;
}

__attribute__((noipa)) void sym_prog_outer(int x) /* @outer_decl */
{
	sym_prog_probe(0); /* @outer_probe */
	sym_prog_leaf(x); /* @leaf_call */
	sym_prog_sink += x;
}

/* A C function under a C++ mangled name: demangling without a C++ compiler. */
__attribute__((noipa)) int sym_prog_cxx(int x) __asm__("_ZN2hp6widget4growEi");
int sym_prog_cxx(int x)
{
	return x + sym_prog_sink;
}

/* In .text.unlikely: with main in .text.startup and the rest in .text the unit has
 * several code ranges and crt1's _start sits in a gap between them. */
__attribute__((cold, noinline)) static void sym_prog_die(int argc)
{
	fprintf(stderr, "sym_prog: %d arguments\n", argc);
	abort();
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	/* the first object is the executable; dlpi_addr is its load bias */
	*(unsigned long *)arg = (unsigned long)info->dlpi_addr;
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long base = 0;

	if (argc > 1000)
		sym_prog_die(argc);
	sym_prog_outer(argc);
	sym_prog_sink += sym_prog_cxx(argc);
	dl_iterate_phdr(first_object, &base);
	printf("base %#lx\n", base);
	printf("ra_outer %p\n", ra[0]);
	printf("ra_leaf %p\n", ra[1]);
	printf("fn_outer %p\n", (void *)sym_prog_outer);
	printf("fn_cxx %p\n", (void *)sym_prog_cxx);
	printf("malloc %p\n", dlsym(RTLD_DEFAULT, "malloc"));
	printf("ready\n");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "wait"))
		for (;;)
			pause();
	return 0;
}
