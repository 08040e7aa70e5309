/*
 * A C++ global whose destructor frees its block at exit (t6004): in an at-exit
 * snapshot of a static program as of a dynamic one, big's 100,001 bytes are gone (the
 * snapshot comes after the destructors), while kept's block, which nothing frees, stays.
 */
#include <cstdlib>
#include <string>

std::string big(100001, 'x');
void *volatile kept;

static __attribute__((noinline)) void *alloc_kept(size_t n)
{
	return kept = std::malloc(n);
}

int main()
{
	alloc_kept(120);
	return big.size() == 100001 ? 0 : 1;
}
