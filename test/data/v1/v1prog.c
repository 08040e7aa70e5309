/*
 * The program of the v1 fixture (v1prog.core.gz): run once under heapprof 0.1.0's
 * heapprof.so (block format 1), dumped with gcore, and cut down to the core's notes
 * and the segments holding blocks by test/data/v1/shrink.py. Kept with its binary so
 * that the analyzer is tested on a v1 core for as long as it reads version 1.
 *
 * The binary, built in test/data/v1 with Debian 12's gcc 12.2:
 *	gcc -g -O2 -fno-pie -no-pie -fdebug-prefix-map=$PWD=test/data/v1 -o v1prog v1prog.c
 * The prefix map keeps the checkout's path out of its DWARF, so the golden reports
 * name test/data/v1/v1prog.c; the code is byte for byte the one the core ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *keep[8];	/* global: the blocks stay reachable, the calls stay in */

NOINLINE static void v1_small(void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = malloc(100);
}

NOINLINE static void v1_big(void)
{
	keep[3] = malloc(5000);
	free(malloc(777));	/* freed: not in the report */
}

int main(void)
{
	v1_small();
	v1_big();
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
