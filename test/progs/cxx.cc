// Every form of C++ new and delete. Under heapprof.so the live ones must be counted
// exactly, per function, and the program must behave as without it.
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>
#include <unistd.h>
#include <csignal>

struct alignas(128) Wide {
	char b[200];
};

static volatile size_t sink;

__attribute__((noinline)) static void *cxx_plain() { auto p = new char[1000]; sink += (size_t)p; return p; }
__attribute__((noinline)) static void *cxx_object() { auto p = new long(7); sink += (size_t)p; return p; }
__attribute__((noinline)) static void *cxx_nothrow() { auto p = new (std::nothrow) char[3000]; sink += (size_t)p; return p; }
__attribute__((noinline)) static void *cxx_aligned() { auto p = new Wide; sink += (size_t)p; return p; }
__attribute__((noinline)) static void *cxx_aligned_array() { auto p = new Wide[3]; sink += (size_t)p; return p; }
__attribute__((noinline)) static void *cxx_aligned_nothrow() { auto p = new (std::nothrow) Wide; sink += (size_t)p; return p; }

__attribute__((noinline)) static void churn()
{
	// every delete form, each on a block that must vanish from the report
	delete[] static_cast<char *>(cxx_plain());
	delete static_cast<long *>(cxx_object());
	::operator delete(::operator new(64), (size_t)64);            // sized
	delete static_cast<Wide *>(cxx_aligned());                       // aligned, sized
	delete[] static_cast<Wide *>(cxx_aligned_array());
	::operator delete(cxx_aligned_nothrow(), std::align_val_t(128)); // aligned unsized
	::operator delete[](cxx_nothrow(), std::nothrow);
	std::vector<std::string> v(100, std::string(100, 'x'));
}

int main(int argc, char **argv)
{
	int keep = argc > 1 ? atoi(argv[1]) : 1;

	churn();
	for (int i = 0; i < keep; i++) {
		cxx_plain();
		cxx_object();
		cxx_nothrow();
		cxx_aligned();
		cxx_aligned_array();
	}
	for (int i = 0; i < keep; i++)
		if (reinterpret_cast<uintptr_t>(cxx_aligned()) % 128)
			return 1;
	std::printf("ready\n");
	std::fflush(stdout);
	if (getenv("SITES_EXIT"))
		return 0;
	for (;;)
		pause();
}
