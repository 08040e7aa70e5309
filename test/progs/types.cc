// Live objects of known classes, for --by=type (t3021): 2,000 Order of 64 bytes (1,500
// from make_orders, 500 from reorder, which make_orders calls: two stacks), 500
// Customer of 96, 300 Cart<int> of 48 (a template: "Cart" with --short-names), 40
// PriorityOrder of 80 (a class derived from Order: its own vtable), and blocks with no
// vtable: 100 char[200] and a std::string's buffer of 1,000. Prints "ready" and waits.
// "types chain" (t3034) keeps instead 40,000 Node of 1,000 bytes, each starting with a
// pointer to the one before (the first with a null one), and from the 4,000th on an
// Order after every 18th: 2,000 Orders among blocks whose first words all differ.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

struct Order {
	virtual ~Order() {}
	virtual long total() const { return qty * price; }
	long id = 0, qty = 1, price = 2, when = 0, who = 0, state = 0, flags = 0;
};
static_assert(sizeof(Order) == 64, "Order is 64 bytes");

struct PriorityOrder : Order {
	long total() const override { return 2 * Order::total(); }
	long rank = 0, due = 0;
};
static_assert(sizeof(PriorityOrder) == 80, "PriorityOrder is 80 bytes");

struct Customer {
	virtual ~Customer() {}
	virtual const char *name() const { return "x"; }
	char name_buf[80] = { 0 };
	long orders = 0;
};
static_assert(sizeof(Customer) == 96, "Customer is 96 bytes");

template <typename T> struct Cart {
	virtual ~Cart() {}
	virtual T count() const { return n; }
	T n = 0;
	void *items[4] = { nullptr };
};
static_assert(sizeof(Cart<int>) == 48, "Cart<int> is 48 bytes");

struct Node {
	Node *prev;
	char pad[992];
};
static_assert(sizeof(Node) == 1000, "Node is 1,000 bytes");

static std::vector<void *> keep;

__attribute__((noinline)) static void make_chain()
{
	Node *prev = nullptr;

	for (int i = 0; i < 40000; i++) {
		Node *n = new Node();

		n->prev = prev;
		keep.push_back(prev = n);
		if (i >= 4000 && i % 18 == 0)
			keep.push_back(new Order);
	}
}

__attribute__((noinline)) static void reorder() { for (int i = 0; i < 500; i++) keep.push_back(new Order); }
__attribute__((noinline)) static void make_orders()
{
	for (int i = 0; i < 1500; i++)
		keep.push_back(new Order);
	reorder();
	__asm__ volatile("" ::: "memory");	/* not a tail call: make_orders stays on the stack */
}
__attribute__((noinline)) static void make_priority() { for (int i = 0; i < 40; i++) keep.push_back(new PriorityOrder); }
__attribute__((noinline)) static void make_customers() { for (int i = 0; i < 500; i++) keep.push_back(new Customer); }
__attribute__((noinline)) static void make_carts() { for (int i = 0; i < 300; i++) keep.push_back(new Cart<int>); }
__attribute__((noinline)) static void make_buffers() { for (int i = 0; i < 100; i++) keep.push_back(new char[200]()); }

int main(int argc, char **argv)
{
	if (argc > 1 && std::string(argv[1]) == "chain") {
		keep.reserve(50000);
		make_chain();
		std::printf("ready\n");
		std::fflush(stdout);
		for (;;)
			pause();
	}
	keep.reserve(4000);
	make_orders();
	make_priority();
	make_customers();
	make_carts();
	make_buffers();
	std::string *s = new std::string(999, 'y');	// its buffer: 1,000 bytes, untyped
	keep.push_back(s);
	std::printf("ready\n");
	std::fflush(stdout);
	for (;;)
		pause();
}
