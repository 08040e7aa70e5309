/*
 * Test program for t2015: one block of 777 bytes allocated by asm_alloc, a function of
 * assembly (asmsite_x86_64.S): its compilation unit has an address range and no
 * function in its debug info. Prints "ready" and waits for the core.
 */
#include <stdio.h>
#include <unistd.h>

void *asm_alloc(void);

static void *volatile sink;

int main(void)
{
	sink = asm_alloc();
	setvbuf(stdout, NULL, _IONBF, 0);
	fputs("ready\n", stdout);
	for (;;)
		pause();
}
