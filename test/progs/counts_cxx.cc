// The C++ site of progs/counts: operator new and new[] reach malloc through libstdc++.
#include <cstddef>

struct obj48 {
	char bytes[48];
};

extern "C" __attribute__((noinline)) void f_cxx(void **keep)
{
	for (int i = 0; i < 4; i++)
		keep[i] = new char[300];	// 4 calls, 1,200 bytes
	for (int i = 0; i < 3; i++)
		keep[4 + i] = new obj48;	// 3 calls, 144 bytes
	asm volatile("" ::: "memory");
}
