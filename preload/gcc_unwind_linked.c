/*
 * libgcc's unwinder for libheapprof.a and the Rust crate: linked (a static program has
 * no libgcc_s to load; a Rust program links it). The table is gcc_unwind_fns.h's.
 */
#include "gcc_unwind_fns.h"

const struct gcc_unwind *gcc_unwind(void)
{
	return gcc_linked;
}
