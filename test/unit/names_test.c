/*
 * short_name() on C++, Rust and C names, and sym_name()'s demangling of C++ and of
 * Rust's legacy and v0 manglings. "names_test --demangle SYM..." prints each SYM
 * demangled, one a line, for test/t2004-names.sh to try on a real Rust program.
 */
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "sym_dwfl.h"
#include "tap.h"

static const struct { const char *in, *out; } shorts[] = {
	{ "main", "main" },
	{ "", "" },
	{ "std::vector<int, std::allocator<int> >::push_back(int&&)", "std::vector::push_back" },
	{ "operator new(unsigned long)", "operator new" },
	{ "operator delete[](void*)", "operator delete[]" },
	{ "bool operator< <int>(Foo<int> const&, Foo<int> const&)", "operator<" },
	{ "operator<(A const&, A const&)", "operator<" },
	{ "Foo::operator()(int) const", "Foo::operator()" },
	{ "Foo::operator->() const", "Foo::operator->" },
	{ "Foo::operator>>=(int)", "Foo::operator>>=" },
	{ "Foo::operator<=>(Foo const&) const", "Foo::operator<=>" },
	{ "std::operator<< <std::char_traits<char> >(std::basic_ostream<char, "
	  "std::char_traits<char> >&, char const*)", "std::operator<<" },
	{ "foo(int)::{lambda()#1}::operator()() const", "foo::{lambda#1}::operator()" },
	{ "main::{lambda(int, char)#2}::operator()(int, char) const",
	  "main::{lambda#2}::operator()" },
	{ "(anonymous namespace)::helper(int)", "(anonymous namespace)::helper" },
	{ "site_big() [clone .cold]", "site_big" },
	{ "ns::holder<int>::grow(unsigned long)", "ns::holder::grow" },
	{ "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop", "<alloc::vec::Vec as core::ops::drop::Drop>::drop" },
	{ "<hello::heap::Heap>::grow", "<hello::heap::Heap>::grow" },
	{ "alloc::raw_vec::RawVec<T,A>::reserve_for_push", "alloc::raw_vec::RawVec::reserve_for_push" },
	{ "void (anonymous namespace)::f<std::pair<int, int> >()", "(anonymous namespace)::f" },
	/* a function template's name carries its return type: it goes */
	{ "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
	  "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, "
	  "int const&)", "std::vector::_M_realloc_insert" },
	{ "std::vector<int, std::allocator<int> >& ns::pick<int>(int)", "ns::pick" },
	{ "char const* (anonymous namespace)::name<3>() const", "(anonymous namespace)::name" },
	{ "bool ns::Foo::operator==<int>(ns::Foo const&) const", "ns::Foo::operator==" },
	{ "ns::Foo::operator unsigned long<int>() const", "ns::Foo::operator unsigned long" },
	{ "void f<int>(int)::{lambda(int)#1}::operator()(int) const",
	  "f::{lambda#1}::operator()" },
	/* no template, no return type: spaces that are part of the name stay */
	{ "non-virtual thunk to Foo::bar(int)", "non-virtual thunk to Foo::bar" },
	{ "unsigned long vtable_like", "unsigned long vtable_like" },
	{ "a<b<c<d<e<f>>>>>::g", "a::g" },
	{ "<<A as B>::C as D>::e", "<<A as B>::C as D>::e" },
	{ "odd>name)", "odd>name)" },
	{ "unclosed<int", "unclosed" },
};

static const struct { const char *in, *out; } mangled[] = {
	{ "_ZN2ns6holderIiE4growEm", "ns::holder<int>::grow(unsigned long)" },
	{ "_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place" },
	{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h1d4e8f9a2b3c4d5eE",
	  "std::rt::lang_start::{{closure}}" },
	{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
	{ "_RNvMNtCs7u3sxuA0Fiq_5hello4heapNtB2_4Heap4grow", "<hello::heap::Heap>::grow" },
	{ "malloc", "malloc" },
	{ "_Znot_a_name", "_Znot_a_name" },
	{ "_Rbad", "_Rbad" },
};

/* What sym_close() would free of a struct sym that only sym_name() used. */
static void strs_free(struct sym *s)
{
	for (size_t i = 0; i < s->strs.cap; i++)
		free(s->strs.v[i]);
	free(s->strs.v);
}

int main(int argc, char **argv)
{
	struct sym s;
	char buf[256];

	memset(&s, 0, sizeof(s));
	if (argc > 1 && !strcmp(argv[1], "--demangle")) {
		for (int i = 2; i < argc; i++)
			puts(sym_name(&s, argv[i]));
		strs_free(&s);
		return 0;
	}
	for (size_t i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++) {
		const char *got = short_name(shorts[i].in, buf, sizeof(buf));

		if (!ok(!strcmp(got, shorts[i].out), "short_name(\"%s\")", shorts[i].in))
			printf("# got \"%s\", expected \"%s\"\n", got, shorts[i].out);
	}
	short_name("std::vector<int>::push_back(int&&)", buf, 8);
	ok(!strcmp(buf, "std::ve"), "a small buffer cuts the result and ends it");
	short_name("x", buf, 1);
	ok(buf[0] == '\0', "a one-byte buffer gets an empty string");
	for (size_t i = 0; i < sizeof(mangled) / sizeof(mangled[0]); i++) {
		const char *got = sym_name(&s, mangled[i].in);

		if (!ok(got && !strcmp(got, mangled[i].out), "sym_name(\"%s\")", mangled[i].in))
			printf("# got \"%s\", expected \"%s\"\n", got ? got : "(null)", mangled[i].out);
	}
	strs_free(&s);
	return tap_done();
}
