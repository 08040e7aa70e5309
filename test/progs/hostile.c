/*
 * The program of t4011-hostile-names.sh, built with -g in a directory whose name holds
 * an escape sequence, Latin-1 bytes and a C1 control, so that its source path and
 * module path hold them too; the sites with hostile names (hostile.h) are in a library
 * beside it. Live bytes per site: esc_site 1,000, latin_site 2 x 1,500, c1_site 5,000,
 * wide_a 7,000, wide_bb 9,000 and in_dir (this file) 11,000. Prints "ready" and waits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostile.h"

void *keep[8];

__attribute__((noinline)) static void *in_dir(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	keep[0] = esc_site(1000);
	keep[1] = latin_site(1500);
	keep[2] = latin_site(1500);
	keep[3] = c1_site(5000);
	keep[4] = wide_a(7000);
	keep[5] = wide_bb(9000);
	keep[6] = in_dir(11000);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
