// operator new out of memory, as the standard wants it: the new_handler is called until
// it gives up, then std::bad_alloc (nothrow: nullptr), for every form. Under heapprof.so,
// whose operator new is its own, the program must see exactly this. Prints ok lines.
// Calls of ::operator new itself: a new-expression whose result goes unused may be elided.
#include <cstdio>
#include <cstdlib>
#include <new>

static const size_t huge = (size_t)1 << 62;	// no allocator gives this
static int handler_calls;

static void give_up_third_time()
{
	if (++handler_calls == 3)
		std::set_new_handler(nullptr);
}

static int check(bool ok, const char *what)
{
	std::printf("%s - %s\n", ok ? "ok" : "not ok", what);
	return ok ? 0 : 1;
}

template <typename F> static bool throws(F f)
{
	try {
		f();
	} catch (const std::bad_alloc &) {
		return true;
	}
	return false;
}

int main()
{
	volatile size_t n = huge;
	int bad = 0;

	bad += check(throws([&] { return ::operator new[](n); }), "new[] throws bad_alloc");
	bad += check(throws([&] { return ::operator new(n); }), "new throws bad_alloc");
	bad += check(throws([&] { return ::operator new(n, std::align_val_t(64)); }),
		     "aligned new throws bad_alloc");
	bad += check(throws([&] { return ::operator new[](n, std::align_val_t(64)); }),
		     "aligned new[] throws bad_alloc");
	bad += check(::operator new[](n, std::nothrow) == nullptr, "nothrow new[] gives nullptr");
	bad += check(::operator new(n, std::align_val_t(64), std::nothrow) == nullptr,
		     "aligned nothrow new gives nullptr");
	std::set_new_handler(give_up_third_time);
	bad += check(throws([&] { return ::operator new[](n); }) && handler_calls == 3,
		     "the new_handler is called until it gives up, then bad_alloc");
	handler_calls = 0;
	std::set_new_handler(give_up_third_time);
	bad += check(::operator new(n, std::nothrow) == nullptr && handler_calls == 3,
		     "nothrow new calls the new_handler too, then gives nullptr");
	void *p = ::operator new[](100);
	bad += check(p != nullptr, "and a normal new still works");
	::operator delete[](p);
	return bad;
}
