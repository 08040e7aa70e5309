/*
 * Which function's frame holds a stack address: the thread is unwound from its
 * registers (as the image's reader reported them) with the modules' CFI, through
 * libdwfl's state callbacks reading the target's memory from the image. x86-64 only;
 * elsewhere, and when the unwind fails, the answer is "not known".
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "sym_dwfl.h"
#include "util.h"

#define X86_64_DWARF_REGS 17	/* rax ... r15, then the return address (rip) */
#define X86_64_DWARF_SP 7
#define MAX_FRAMES 256

struct uframe {
	uint64_t pc, sp;
	bool activation;	/* the innermost frame, or one a signal interrupted */
};

struct uthread {
	uint32_t tid;
	struct uframe *f;
	size_t n;
};

struct sym_unwind {
	struct sym *s;
	bool attached, failed;
	const uint64_t *regs;	/* the thread being unwound, pr_reg words */
	unsigned nregs;
	uint32_t tid;
	struct uthread *t;	/* threads unwound so far */
	size_t nt;
};

/* user_regs_struct's word of each DWARF register 0..16 */
static const unsigned x86_64_pr_reg[X86_64_DWARF_REGS] = {
	10, 12, 11, 5, 13, 14, 4, 19, 9, 8, 7, 6, 3, 2, 1, 0, 16
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sym_unwind *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct sym_unwind *u = arg;

	(void)dwfl;
	*thread_argp = u;
	return (uint32_t)tid == u->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct sym_unwind *u = arg;
	uint64_t v;

	(void)dwfl;
	if (!image_read(u->s->img, addr, &v, sizeof(v)))
		return false;
	*result = v;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct sym_unwind *u = arg;
	Dwarf_Word dw[X86_64_DWARF_REGS];

	for (unsigned r = 0; r < X86_64_DWARF_REGS; r++)
		dw[r] = u->regs[x86_64_pr_reg[r]];
	return dwfl_thread_state_registers(thread, 0, X86_64_DWARF_REGS, dw) &&
	       (dwfl_thread_state_register_pc(thread, dw[16]), true);
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct uthread *t = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool act;

	if (!dwfl_frame_pc(state, &pc, &act) || dwfl_frame_reg(state, X86_64_DWARF_SP, &sp) != 0)
		return DWARF_CB_ABORT;
	t->f = xrealloc(t->f, (t->n + 1) * sizeof(*t->f));
	t->f[t->n++] = (struct uframe){ pc, sp, act };
	return t->n < MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static struct uthread *unwind(struct sym *s, uint32_t tid, const uint64_t *regs, unsigned nregs)
{
	struct sym_unwind *u = s->unwind;
	struct uthread *t;

	for (size_t i = 0; i < u->nt; i++)
		if (u->t[i].tid == tid)
			return &u->t[i];
	if (!u->attached && !u->failed) {
		u->attached = dwfl_attach_state(s->dwfl, NULL, 1, &callbacks, u);
		u->failed = !u->attached;
	}
	u->t = xrealloc(u->t, (u->nt + 1) * sizeof(*u->t));
	t = &u->t[u->nt++];
	*t = (struct uthread){ tid, NULL, 0 };
	if (u->failed)
		return t;
	u->tid = tid;
	u->regs = regs;
	u->nregs = nregs;
	/* a frame that does not unwind ends the list: the frames before it stand */
	dwfl_getthread_frames(s->dwfl, (pid_t)tid, frame_cb, t);
	return t;
}

const char *sym_stack_frame(struct sym *s, uint32_t tid, const uint64_t *regs, unsigned nregs,
			    uint64_t addr)
{
	struct uthread *t;

	if (!s || !s->dwfl || !s->img || s->img->machine != EM_X86_64 || nregs <= 19)
		return NULL;
	if (!s->unwind) {
		s->unwind = xcalloc(1, sizeof(*s->unwind));
		s->unwind->s = s;
	}
	t = unwind(s, tid, regs, nregs);
	/* frame k's own words lie from its stack pointer up to its caller's */
	for (size_t k = 0; k + 1 < t->n; k++)
		if (addr < t->f[k + 1].sp && addr + 128 >= t->f[k].sp) {
			const struct sym_pc *p = sym_lookup(s, t->f[k].pc, !t->f[k].activation);

			return p->nframes ? p->frames[0].func : NULL;
		}
	return NULL;
}

void sym_unwind_free(struct sym *s)
{
	if (!s->unwind)
		return;
	for (size_t i = 0; i < s->unwind->nt; i++)
		free(s->unwind->t[i].f);
	free(s->unwind->t);
	free(s->unwind);
	s->unwind = NULL;
}
