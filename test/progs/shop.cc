// A shop's heap for cores taken without heapprof (t3024): 2,000 Order of 64 bytes and 500
// Customer of 96 kept, 300 Session of 48 dropped on purpose (definitely lost), 1,000
// plain 200-byte buffers kept: the first 500 only by a Customer each (its notes), so
// a Customer retains its own bytes and its buffer's. Prints the usable size the
// allocator gives each kind of block, then "ready", and waits; with
// "exit", returns instead (for valgrind memcheck's leak check at exit); with "more",
// 500 more Orders first (a later moment, for --base). Every other pointer kept lives
// in a global.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <unistd.h>

struct Order {
	virtual ~Order() {}
	virtual long total() const { return qty * price; }
	long id = 0, qty = 1, price = 2, when = 0, who = 0, state = 0, flags = 0;
};
static_assert(sizeof(Order) == 64, "Order is 64 bytes");

struct Customer {
	virtual ~Customer() {}
	virtual const char *name() const { return name_buf; }
	char name_buf[80] = { 0 };
	void *notes = nullptr;
};
static_assert(sizeof(Customer) == 96, "Customer is 96 bytes");

struct Session {
	virtual ~Session() {}
	virtual long age() const { return now - start; }
	long start = 0, now = 0, user = 0, flags = 0, id = 0;
};
static_assert(sizeof(Session) == 48, "Session is 48 bytes");

Order *orders[2500];	/* not static: a store to a static array never read is gone */
Customer *customers[500];
void *buffers[500];		/* the other 500 are the Customers' notes */

__attribute__((noinline)) static void make_orders(int n)
{
	for (int i = 0; i < n; i++)
		orders[i] = new Order;
}

__attribute__((noinline)) static void make_customers()
{
	for (int i = 0; i < 500; i++)
		customers[i] = new Customer;
}

static size_t session_usable;

/* each Session's pointer dies with the next iteration: nothing holds one */
__attribute__((noinline)) static void drop_sessions()
{
	for (int i = 0; i < 300; i++) {
		Session *s = new Session;

		s->id = i;
		session_usable = malloc_usable_size(s);
		__asm__ volatile("" : : "r"(s) : "memory");
	}
}

__attribute__((noinline)) static void make_buffers()
{
	for (int i = 0; i < 500; i++)
		customers[i]->notes = memset(malloc(200), 'n', 200);
	for (int i = 0; i < 500; i++)
		buffers[i] = memset(malloc(200), 'b', 200);
}

/* the stack below main's frame, where drop_sessions' locals were: zeroed */
__attribute__((noinline)) static void scrub_stack()
{
	volatile char pad[16384];

	memset((char *)pad, 0, sizeof(pad));
}

int main(int argc, char **argv)
{
	bool more = false, exit_now = false;

	for (int i = 1; i < argc; i++) {
		more |= !strcmp(argv[i], "more");
		exit_now |= !strcmp(argv[i], "exit");
	}
	make_orders(more ? 2500 : 2000);
	make_customers();
	drop_sessions();
	make_buffers();
	scrub_stack();
	/* what the allocator gives each: the blocks' sizes in a core taken without heapprof */
	std::printf("usable Order %zu Customer %zu Session %zu buffer %zu\n",
		    malloc_usable_size(orders[0]), malloc_usable_size(customers[0]),
		    session_usable, malloc_usable_size(buffers[0]));
	std::printf("ready\n");
	std::fflush(stdout);
	if (exit_now)
		return 0;
	for (;;)
		pause();
}
