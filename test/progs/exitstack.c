/*
 * Leaks at exit as the stack decides them (t6004): a block held by a local of main,
 * whose frame is live when exit() is called, and one whose only pointers sit in a
 * dead frame below exit()'s, which exit's own frames do not reach.
 */
#include <stdlib.h>

static __attribute__((noinline)) void *alloc_held(void)
{
	return malloc(24);
}

static __attribute__((noinline)) void *alloc_dead(void)
{
	return malloc(40);
}

/* The pointer in the deep part of a big frame only: the 512 bytes nearest main's
 * frame, which exit's frames overwrite in part, keep none. */
static __attribute__((noinline)) void dead_frame(void)
{
	void *volatile slots[512] __attribute__((unused));
	void *p = alloc_dead();

	for (int i = 0; i < 448; i++)
		slots[i] = p;
}

int main(void)
{
	void *volatile held = alloc_held();

	dead_frame();
	exit(held ? 0 : 1);
}
