/*
 * heapprof's demo: a toy request server with three kinds of memory, as a real service
 * would hold them: a bounded connection pool, a session cache that is never pruned
 * (the leak), and per-request parse buffers that are freed again. After its requests
 * it prints "ready" and waits, so that a snapshot can be taken.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct session {
	char user[32];
	char *token;
	struct session *next;
};

static struct session *sessions;	/* grows forever: the leak to find */
static char *volatile pool[64];	/* volatile: gcc drops allocations never read */
static unsigned long served;

NOINLINE static void pool_init(void)
{
	for (int i = 0; i < 64; i++)
		pool[i] = malloc(16384);
}

NOINLINE static char *make_token(unsigned id)
{
	char *t = malloc(200);

	snprintf(t, 200, "token-%08x", id);
	return t;
}

NOINLINE static void remember_session(unsigned id)
{
	struct session *s = calloc(1, sizeof(*s));

	snprintf(s->user, sizeof(s->user), "user%u", id % 1000);
	s->token = make_token(id);
	s->next = sessions;
	sessions = s;
}

NOINLINE static size_t parse_request(unsigned id)
{
	char *buf = malloc(4096 + id % 512);
	size_t n;

	memset(buf, 'x', 4096);
	n = strlen(strcpy(buf + 4000, "GET /"));
	free(buf);
	return n;
}

NOINLINE static void handle_request(unsigned id)
{
	parse_request(id);
	if (id % 3 == 0)
		remember_session(id);
	served++;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 30000;

	pool_init();
	for (unsigned id = 0; id < n; id++)
		handle_request(id);
	printf("ready\n");
	fflush(stdout);
	if (getenv("DEMO_EXIT"))
		return 0;
	for (;;)
		pause();
}
