/*
 * Unit test of analyzer/util.h's small helpers: sorted_find_u64, the lookup the scan's
 * page filter and the heap graph's region index share, against a linear search.
 */
#include <stdint.h>
#include <stdlib.h>

#include "util.h"
#include "tap.h"

/* the answer sorted_find_u64 must give, found the slow way */
static size_t linear(const uint64_t *v, size_t n, uint64_t key)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == key)
			return i;
	return SIZE_MAX;
}

/* every key in v, each gap between keys and both ends, for each prefix length */
static void sorted_find(void)
{
	const uint64_t v[] = { 0, 1, 5, 6, 100, 0x7fffffffffffULL, UINT64_MAX - 1, UINT64_MAX };
	const size_t nv = sizeof(v) / sizeof(v[0]);
	unsigned bad = 0, checked = 0;

	for (size_t n = 0; n <= nv; n++)
		for (size_t i = 0; i < nv; i++) {
			uint64_t keys[3] = { v[i], v[i] + 1, v[i] - 1 };

			for (int k = 0; k < 3; k++, checked++)
				bad += sorted_find_u64(v, n, keys[k]) != linear(v, n, keys[k]);
		}
	ok(bad == 0, "sorted_find_u64: %u of %u keys as a linear search finds them", checked - bad,
	   checked);
	ok(sorted_find_u64(NULL, 0, 0) == SIZE_MAX, "sorted_find_u64: nothing in an empty array");
	ok(sorted_find_u64(v + 2, 1, 5) == 0 && sorted_find_u64(v + 2, 1, 6) == SIZE_MAX,
	   "sorted_find_u64: one element, found and not");
}

int main(void)
{
	sorted_find();
	return tap_done();
}
