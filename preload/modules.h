/*
 * Module records (modules.c): what heapprof.so writes into its own mappings about a
 * library being unloaded, so that a dump can still name its frames.
 */
#ifndef HP_MODULES_H
#define HP_MODULES_H

#include "compiler.h"

/* Before the real dlclose(handle): a module record for the library, or NULL. */
HP_HIDDEN void *modules_before_close(void *handle);

/* After a dlclose that succeeded: rec (from modules_before_close, NULL: nothing) is
 * published if the library is really gone; real_dlclose closes the handle the check
 * opens when another handle still holds it. */
HP_HIDDEN void modules_after_close(void *rec, int (*real_dlclose)(void *));

#endif
