/*
 * Diagnostics and environment parsing for heapprof.so: no stdio, no malloc, so they
 * are safe inside the hooks and before the real allocator is known.
 */
#ifndef HP_UTIL_H
#define HP_UTIL_H

#include <stdbool.h>
#include <stdint.h>

/* Write "heapprof: " a b c "\n" to stderr with write(2); NULL parts are left out. */
void hp_warn(const char *a, const char *b, const char *c);

/*
 * Parse a decimal integer in [lo, hi] from the environment variable name. Unset or
 * empty: *out = def, true. Malformed or out of range: one warning, *out = def, false.
 */
bool hp_env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t def, uint64_t *out);

#endif
