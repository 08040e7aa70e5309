/*
 * libgcc's unwinder linked: for libheapprof.a and the Rust crate (a static program has
 * no libgcc_s to load; a Rust program links it), and for heapprof.so where libgcc is
 * the default unwinder (gcc_unwind.c). glibc only, as unwind_libgcc.c: the libgcc at
 * hand for musl may call glibc's _dl_find_object.
 */
#include <stddef.h>
#include <stdlib.h>	/* __GLIBC__ */

#include "gcc_unwind.h"

#ifdef __GLIBC__
static _Unwind_Ptr get_ip(struct _Unwind_Context *ctx)
{
	return _Unwind_GetIP(ctx);
}

static _Unwind_Word get_gr(struct _Unwind_Context *ctx, int reg)
{
	return _Unwind_GetGR(ctx, reg);
}

static _Unwind_Word get_cfa(struct _Unwind_Context *ctx)
{
	return _Unwind_GetCFA(ctx);
}

static const struct gcc_unwind fns = {
	_Unwind_Backtrace, get_ip, get_gr, get_cfa,
#ifdef __ARM_EABI_UNWINDER__
	NULL,
#else
	_Unwind_FindEnclosingFunction,
#endif
};

const struct gcc_unwind *gcc_unwind(void)
{
	return &fns;
}
#else
const struct gcc_unwind *gcc_unwind(void)
{
	return NULL;
}
#endif
