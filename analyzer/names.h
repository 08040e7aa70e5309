/* Short function names for reports (--short-names): a pure string function. */
#ifndef HP_NAMES_H
#define HP_NAMES_H

#include <stddef.h>

/*
 * demangled without template arguments and parameter lists, as pprof and heaptrack
 * shorten names: "std::vector<int>::push_back(int&&)" -> "std::vector::push_back".
 * Operator names stay whole ("operator<", "operator()", "operator<<", "operator->"),
 * "(anonymous namespace)" stays, lambdas lose their parameters ("{lambda#1}"), a Rust
 * qualified path keeps its brackets ("<Vec as Drop>::drop"), and what follows the
 * function's own parameter list (" const", " [clone .cold]") goes, and so does the
 * return type a function template's name carries ("void std::vector<int>::
 * _M_realloc_insert<int>(...)" -> "std::vector::_M_realloc_insert"). Names that are not
 * C++ or Rust come back as they are. Writes at most size bytes to buf, always
 * NUL-terminated (a longer result is cut); size must be at least 1. Returns buf.
 */
const char *short_name(const char *demangled, char *buf, size_t size);

#endif
