/*
 * libgcc's unwinder linked, as a table (gcc_unwind.h): for gcc_unwind_linked.c and for
 * heapprof.so where libgcc is the default unwinder (gcc_unwind.c). Some of its
 * functions are macros on ARM: the table points at functions that expand them. glibc
 * only, as unwind_libgcc.c: the libgcc at hand for musl may call glibc's
 * _dl_find_object (gcc_linked is then NULL).
 */
#ifndef HP_GCC_UNWIND_FNS_H
#define HP_GCC_UNWIND_FNS_H

#include <stddef.h>
#include <stdlib.h>	/* __GLIBC__ */

#include "gcc_unwind.h"

#ifdef __GLIBC__
static _Unwind_Ptr gcc_get_ip(struct _Unwind_Context *ctx)
{
	return _Unwind_GetIP(ctx);
}

static _Unwind_Word gcc_get_gr(struct _Unwind_Context *ctx, int reg)
{
	return _Unwind_GetGR(ctx, reg);
}

static _Unwind_Word gcc_get_cfa(struct _Unwind_Context *ctx)
{
	return _Unwind_GetCFA(ctx);
}

static const struct gcc_unwind gcc_linked_fns = {
	_Unwind_Backtrace, gcc_get_ip, gcc_get_gr, gcc_get_cfa,
#ifdef __ARM_EABI_UNWINDER__
	NULL,
#else
	_Unwind_FindEnclosingFunction,
#endif
};
#define gcc_linked (&gcc_linked_fns)
#else
#define gcc_linked ((const struct gcc_unwind *)NULL)
#endif

#endif
