/*
 * End-to-end test program: allocations made while the thread runs on a stack other
 * than its own, or from code without unwind tables. A coroutine (makecontext/
 * swapcontext) on a malloc'd stack and on an mmap'd one, and a signal handler on a
 * sigaltstack, each allocate a known number of blocks of a known size from a named
 * function, with named callers. The mmap'd stacks have unreadable guard pages on both
 * sides: a walk that reads past a stack's top faults. On x86_64, two functions without
 * unwind tables allocate: one whose caller a stack scan finds, one whose 8 KiB frame
 * hides it. When done it prints "ready" and waits for SIGUSR2, so the test can take a
 * core. Arguments: any of coro-heap, coro-mmap, altstack, no-tables, in the order
 * wanted (no-tables exits 77 where it is not built).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define STACK_SIZE (256 * 1024)	/* glibc gives a malloc of this size a mapping of its own */
#define PAGE 4096

static volatile size_t sink;
void *kept[64];	/* not static: the blocks stay reachable, for a leak checker too */
static unsigned n_kept;

static void keep(void *p)
{
	if (!p || n_kept == sizeof(kept) / sizeof(kept[0]))
		abort();
	kept[n_kept++] = p;
	sink += (size_t)p;
}

static ucontext_t main_ctx, coro_ctx;

/* ---- a coroutine on a malloc'd stack: 3 blocks of 1000 bytes ---- */

NOINLINE static void coro_heap_alloc(void) { keep(malloc(1000)); }

NOINLINE static void coro_heap_work(void)
{
	for (int i = 0; i < 3; i++)
		coro_heap_alloc();
	sink++;
}

static void coro_heap_entry(void)
{
	coro_heap_work();
	swapcontext(&coro_ctx, &main_ctx);
}

/* ---- a coroutine on an mmap'd stack between guard pages: 5 blocks of 300 bytes ---- */

NOINLINE static void coro_mmap_alloc(void) { keep(calloc(1, 300)); }

NOINLINE static void coro_mmap_work(void)
{
	for (int i = 0; i < 5; i++)
		coro_mmap_alloc();
	sink++;
}

static void coro_mmap_entry(void)
{
	coro_mmap_work();
	swapcontext(&coro_ctx, &main_ctx);
}

/* size bytes of stack with a PROT_NONE page below and above */
static void *guarded_stack(size_t size)
{
	char *p = mmap(NULL, size + 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + PAGE, size, PROT_READ | PROT_WRITE) != 0)
		abort();
	return p + PAGE;
}

NOINLINE static void run_coroutine(void (*entry)(void), void *stack)
{
	if (getcontext(&coro_ctx) != 0)
		abort();
	coro_ctx.uc_stack.ss_sp = stack;
	coro_ctx.uc_stack.ss_size = STACK_SIZE;
	coro_ctx.uc_link = &main_ctx;
	makecontext(&coro_ctx, entry, 0);
	if (swapcontext(&main_ctx, &coro_ctx) != 0)
		abort();
}

/* ---- a signal handler on an alternate stack: 2 blocks of 4000 bytes ---- */

NOINLINE static void sig_alloc(void) { keep(malloc(4000)); }

static void on_signal(int sig)
{
	(void)sig;
	sig_alloc();
	sig_alloc();
	sink++;	/* no tail call: both calls keep on_signal's frame */
}

NOINLINE static void raise_on_altstack(void)
{
	stack_t ss = { .ss_sp = guarded_stack(STACK_SIZE), .ss_size = STACK_SIZE };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		abort();
	raise(SIGUSR1);
	sink++;
}

/* ---- code without unwind tables: 600 bytes whose caller is found, 700 whose is not ---- */

#if defined(__x86_64__) && defined(__LP64__)
void *untabled_small(size_t size);
void *untabled_big(size_t size);
void *big_leaf(size_t size);

/* untabled_small calls malloc itself; untabled_big, with an 8 KiB frame of zeros
 * (larger than a stack scan reads), calls big_leaf, which has tables, to allocate */
__asm__(".text\n"
	".globl untabled_small\n"
	".type untabled_small, @function\n"
	"untabled_small:\n"
	"	pushq $0\n	pushq $0\n	pushq $0\n	pushq $0\n	pushq $0\n"
	"	call malloc@PLT\n"
	"	addq $40, %rsp\n"
	"	ret\n"
	".size untabled_small, .-untabled_small\n"
	".globl untabled_big\n"
	".type untabled_big, @function\n"
	"untabled_big:\n"
	"	subq $8200, %rsp\n"
	"	movq %rdi, %r8\n"
	"	movq %rsp, %rdi\n"
	"	movl $1025, %ecx\n"
	"	xorl %eax, %eax\n"
	"	rep stosq\n"
	"	movq %r8, %rdi\n"
	"	call big_leaf\n"
	"	addq $8200, %rsp\n"
	"	ret\n"
	".size untabled_big, .-untabled_big\n");

NOINLINE void *big_leaf(size_t size)
{
	void *p = malloc(size);

	sink += (size_t)p;
	return p;
}

NOINLINE static void tabled_caller(void)
{
	keep(untabled_small(600));
	sink++;
}

NOINLINE static void big_caller(void)
{
	keep(untabled_big(700));
	sink++;
}

static void no_tables(void)
{
	tabled_caller();
	big_caller();
}
#else
static void no_tables(void)
{
	exit(77);
}
#endif

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "coro-heap"))
			run_coroutine(coro_heap_entry, malloc(STACK_SIZE));
		else if (!strcmp(argv[i], "coro-mmap"))
			run_coroutine(coro_mmap_entry, guarded_stack(STACK_SIZE));
		else if (!strcmp(argv[i], "altstack"))
			raise_on_altstack();
		else if (!strcmp(argv[i], "no-tables"))
			no_tables();
		else {
			fprintf(stderr, "otherstacks: unknown argument '%s'\n", argv[i]);
			return 64;
		}
	}
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
