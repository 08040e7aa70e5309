/*
 * Leaks at exit as the stack decides them (t6004): a block held by a local of main,
 * whose frame is live when exit() is called, and one whose only pointers sit in a
 * dead frame below exit()'s, which exit's own frames do not reach. With "near", one
 * more (alloc_near) whose pointers fill the dead frame right below main's, where
 * exit's handlers then put their frames: what those frames leave unwritten still
 * holds it, and is no root either.
 */
#include <stdlib.h>
#include <string.h>

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

static __attribute__((noinline)) void *alloc_near(void)
{
	return malloc(56);
}

static __attribute__((noinline)) void near_frame(void)
{
	void *volatile slots[2048] __attribute__((unused));
	void *p = alloc_near();

	for (int i = 0; i < 2048; i++)
		slots[i] = p;
}

/* held is made last: in a static program (whose allocator the analyzer does not know)
 * malloc's pointer to the top chunk, just past the last block, is a root */
int main(int argc, char **argv)
{
	void *volatile held;

	dead_frame();
	if (argc > 1 && !strcmp(argv[1], "near"))
		near_frame();
	held = alloc_held();
	exit(held ? 0 : 1);
}
