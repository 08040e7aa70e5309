/*
 * heapprof-attach.so (attach.c): heapprof loaded into a process that is already
 * running, by `heapprof attach`. The process's references to the malloc family are
 * pointed at hooks.c's entry points; blocks from before stay the allocator's.
 */
#ifndef HP_ATTACH_H
#define HP_ATTACH_H

#include <stdbool.h>

#include "compiler.h"

/*
 * What `heapprof attach` calls in the target once the library is loaded (exported, as
 * heapprof_attach): points the references of every loaded module, and of those loaded
 * later by dlopen, at our hooks. Returns how many references now lead to heapprof, or
 * a refusal, with nothing changed:
 */
#define ATTACH_OTHER_HEAPPROF (-1)	/* heapprof is in the process already */
#define ATTACH_OTHER_MALLOC (-2)	/* the process's malloc is not the libc's */
#define ATTACH_AGAIN (-3)		/* attached already */
#define ATTACH_UNSUPPORTED (-4)	/* no relocation types known for this architecture */
int heapprof_attach(void);

#endif
