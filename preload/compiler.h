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
#define HP_TLS __thread __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
