/*
 * realloc under the preload: growth and shrinking stay in place where the allocator
 * can do it, and a block that moves leaves no live tag at its old address.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof_format.h"

static int failed;
static char *volatile pin;	/* volatile: gcc drops a malloc that is only freed */

static void expect(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL: %s\n", what);
		failed = 1;
	}
}

int main(void)
{
	/* the last chunk before glibc's top chunk grows into it without moving */
	char *p = malloc(1000), *q;
	uint64_t old_magic;

	memset(p, 'a', 1000);
	q = realloc(p, 5000);
	expect(q == p, "growth into free space stays in place");
	p = q;
	q = realloc(p, 100);
	expect(q == p, "shrinking stays in place");
	expect(q[99] == 'a', "contents kept");

	pin = malloc(100);	/* keeps q from growing in place */
	/* an integer: the compiler may assume anything of a pointer after realloc */
	volatile uintptr_t old = (uintptr_t)q;

	q = realloc(q, 100000);
	expect((uintptr_t)q != old, "a pinned block moves");
	/* freed, but a small chunk stays mapped */
	old_magic = *(volatile uint64_t *)(old - 8);
	expect(old_magic != HP_MAGIC, "no live tag left at the old address");
	expect(q[0] == 'a' && q[99] == 'a', "contents moved");
	free(q);
	free(pin);
	if (!failed)
		printf("realloc ok\n");
	return failed;
}
