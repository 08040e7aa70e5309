// C++ under heapprof.so with another allocator preloaded (jemalloc): aligned new and
// delete in a loop must pair up, and the live blocks of new, plain and aligned, must
// be counted exactly whichever operator new the allocator exports.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <unistd.h>

struct alignas(64) Line {
	char b[192];
};

static volatile size_t sink;

// 100 blocks of 1,000 bytes from new[] and 10 of 192 from aligned new: 101,920 bytes
__attribute__((noinline)) static void cxx_keep()
{
	for (int i = 0; i < 100; i++)
		sink += (size_t) new char[1000];
	for (int i = 0; i < 10; i++)
		sink += (size_t) new Line;
}

// 10,000 aligned new and delete: a delete of the wrong allocator would crash here
__attribute__((noinline)) static void cxx_churn()
{
	for (int i = 0; i < 10000; i++) {
		Line *l = new Line;
		sink += (size_t)l;
		delete l;
	}
}

// a std::map of 1,000 nodes, built through inlined templates
__attribute__((noinline)) static std::map<int, int> *cxx_map()
{
	auto m = new std::map<int, int>;
	for (int i = 0; i < 1000; i++)
		(*m)[i] = i;
	return m;
}

int main()
{
	cxx_churn();
	cxx_keep();
	sink += (size_t)cxx_map();
	std::printf("ready\n");
	std::fflush(stdout);
	for (;;)
		pause();
}
