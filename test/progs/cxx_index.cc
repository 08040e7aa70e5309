// An index built by std::vector growth in build_index, which -O2 inlines into main:
// the blocks' innermost frames are heapprof's operator new and the library's
// allocation (std::vector::_M_realloc_insert), and previews must reach build_index.
// The vectors' growth frees their smaller buffers between the kept ones, so their
// blocks pin free memory (--memory's pinned list).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <unistd.h>

static std::vector<std::vector<int> *> *kept;

static inline void build_index(int vectors, int ints)
{
	kept = new std::vector<std::vector<int> *>;
	kept->reserve(vectors);
	for (int i = 0; i < vectors; i++) {
		auto *v = new std::vector<int>;

		for (int k = 0; k < ints; k++)
			v->push_back(k);
		kept->push_back(v);
	}
}

int main()
{
	build_index(64, 4096);	/* each vector's buffer 16,384 bytes */
	std::printf("ready\n");
	std::fflush(stdout);
	for (;;)
		pause();
}
