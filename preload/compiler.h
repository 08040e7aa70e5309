/*
 * The compiler words every file of heapprof.so uses: symbol visibility, thread-local
 * storage and branch hints. Nothing else, so that any file may include it.
 */
#ifndef HP_COMPILER_H
#define HP_COMPILER_H

#define HP_HIDDEN __attribute__((visibility("hidden")))
/* the libc and C++ names heapprof.so stands in for, and heapprof_api_v1: nothing else
 * (the exports layer: hooks.c, new_delete.c, exports.c, sigmask.c, api.c) */
#define HP_EXPORT __attribute__((visibility("default")))
#ifdef HP_ATTACH
/* heapprof-attach.so is dlopen()ed into a running process: the static TLS was sized at
 * its start, without room for ours */
#define HP_TLS_MODEL __attribute__((tls_model("global-dynamic")))
#else
#define HP_TLS_MODEL __attribute__((tls_model("initial-exec")))
#endif
#define HP_TLS __thread HP_TLS_MODEL
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
