// A shop's heap for cores taken without heapprof (t3021): 2,000 Order of 64 bytes and 500
// Customer of 96 kept, 300 Session of 48 dropped on purpose (definitely lost), 1,000
// plain 200-byte buffers kept. Prints "ready" and waits; with "exit", returns instead
// (for valgrind memcheck's leak check at exit). Every pointer kept lives in a global.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
	long orders = 0;
};
static_assert(sizeof(Customer) == 96, "Customer is 96 bytes");

struct Session {
	virtual ~Session() {}
	virtual long age() const { return now - start; }
	long start = 0, now = 0, user = 0, flags = 0, id = 0;
};
static_assert(sizeof(Session) == 48, "Session is 48 bytes");

Order *orders[2000];	/* not static: a store to a static array never read is gone */
Customer *customers[500];
void *buffers[1000];

__attribute__((noinline)) static void make_orders()
{
	for (int i = 0; i < 2000; i++)
		orders[i] = new Order;
}

__attribute__((noinline)) static void make_customers()
{
	for (int i = 0; i < 500; i++)
		customers[i] = new Customer;
}

/* each Session's pointer dies with the next iteration: nothing holds one */
__attribute__((noinline)) static void drop_sessions()
{
	for (int i = 0; i < 300; i++) {
		Session *s = new Session;

		s->id = i;
		__asm__ volatile("" : : "r"(s) : "memory");
	}
}

__attribute__((noinline)) static void make_buffers()
{
	for (int i = 0; i < 1000; i++)
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
	make_orders();
	make_customers();
	drop_sessions();
	make_buffers();
	scrub_stack();
	std::printf("ready\n");
	std::fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "exit"))
		return 0;
	for (;;)
		pause();
}
