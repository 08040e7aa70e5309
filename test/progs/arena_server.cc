/*
 * arena_server: a server's memory in small (t3026). Sessions live in an arena the
 * program maps itself (arena_map: mmap, every page touched) and serves them from with
 * placement new; requests come and go through ordinary new and delete in two worker
 * threads, which keep every third response (make_response: new char[n]) and wait,
 * alive, for more. Once they wait it prints
 *   arena BYTES                  the arena's mapping
 *   expect make_response BYTES   the responses kept
 *   mallinfo2 ...                glibc's own figures (mallinfo.h)
 * then ready, and waits to be dumped.
 */
#include <sys/mman.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

extern "C" {
#include "mallinfo.h"
}

#define NOINLINE __attribute__((noinline))

static const size_t ARENA_BYTES = 6u << 20;
static const unsigned REQUESTS = 20000;	/* per worker */

struct Session {
	unsigned id;
	std::string user;	/* past 15 characters: its own block, by new */
	char state[200];
};

/* A bump arena of the program's own: mapped once, never given back. */
struct Arena {
	char *base = nullptr, *next = nullptr, *end = nullptr;

	template <class T, class... A> T *make(A &&...a)
	{
		size_t n = (sizeof(T) + alignof(T) - 1) & ~(alignof(T) - 1);

		if ((size_t)(end - next) < n)
			throw std::bad_alloc();
		T *p = new (next) T(std::forward<A>(a)...);
		next += n;
		return p;
	}
};

NOINLINE static void arena_map(Arena &a)
{
	void *p = mmap(nullptr, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED) {
		perror("arena_server: mmap");
		exit(1);
	}
	memset(p, 0, ARENA_BYTES);
	a.base = a.next = static_cast<char *>(p);
	a.end = a.base + ARENA_BYTES;
}

NOINLINE static char *make_response(size_t n)
{
	char *r = new char[n];

	memset(r, 'r', n);
	return r;
}

struct Worker {
	std::vector<char *> kept;
	size_t kept_bytes = 0;
};

static std::mutex mu;
static std::condition_variable cv;
static unsigned waiting;

/* Requests parsed into a map, answered, two in three forgotten; then wait for more. */
NOINLINE static void serve(Worker *w, unsigned seed)
{
	for (unsigned i = 0; i < REQUESTS; i++) {
		auto *req = new std::unordered_map<std::string, std::string>;
		size_t n = 16 + (seed * 7919 + i * 104729) % 2000;
		char *resp;

		(*req)["path"] = "/items/" + std::to_string(i) + "/details/of/the/request";
		(*req)["agent"] = "a client that sends a long user agent string";
		resp = make_response(n);
		if (i % 3 == 0) {
			w->kept.push_back(resp);
			w->kept_bytes += n;
		} else {
			delete[] resp;
		}
		delete req;
	}
	std::unique_lock<std::mutex> lk(mu);
	waiting++;
	cv.notify_all();
	cv.wait(lk, [] { return false; });
}

int main()
{
	Arena arena;
	std::vector<Session *> sessions;
	Worker w[2];
	char line[96];

	arena_map(arena);
	for (unsigned i = 0; i < 20000; i++)
		sessions.push_back(arena.make<Session>(Session{ i, "user-" + std::to_string(i) +
							"@example.org", {} }));
	for (Worker &x : w)
		x.kept.reserve(REQUESTS);	/* made here, not under make_response */
	std::thread t0(serve, &w[0], 1), t1(serve, &w[1], 2);
	{
		std::unique_lock<std::mutex> lk(mu);
		cv.wait(lk, [] { return waiting == 2; });
	}
	snprintf(line, sizeof(line), "arena %zu\nexpect make_response %zu\n", ARENA_BYTES,
		 w[0].kept_bytes + w[1].kept_bytes);
	say(line);
	say_mallinfo2();
	say("ready\n");
	t0.join();	/* never: the workers wait for more */
	t1.join();
	return 0;
}
