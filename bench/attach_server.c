/*
 * A small TCP server for bench/attach.sh: one thread per connection; a request
 * "N SEED\n" allocates N blocks of sizes drawn from SEED in request_blocks(), fills
 * them, keeps some in a shared pool that replaces old entries (so blocks made before
 * an attach are freed after it), and answers the sum of their bytes, which the client
 * checks. Prints its port, then serves until killed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define POOL 4096

static void *pool[POOL];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

__attribute__((noinline)) static uint64_t request_blocks(unsigned n, uint64_t seed)
{
	uint64_t sum = 0, s = seed | 1;

	for (unsigned i = 0; i < n; i++) {
		size_t size = 8 + next(&s) % 2000;
		unsigned char *p = i % 3 ? malloc(size) : calloc(1, size);

		if (!p)
			abort();
		memset(p, (int)(size & 0xff), size);
		for (size_t k = 0; k < size; k += 97)
			sum += p[k];
		sum += size;
		if (i % 4 == 0) {
			unsigned slot = (unsigned)(next(&s) % POOL);

			pthread_mutex_lock(&pool_lock);
			free(pool[slot]);
			pool[slot] = p;
			pthread_mutex_unlock(&pool_lock);
		} else {
			p = realloc(p, size + 16);
			free(p);
		}
	}
	return sum;
}

static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	FILE *in = fdopen(fd, "r");
	char line[128];

	while (in && fgets(line, sizeof(line), in)) {
		unsigned n = 0;
		unsigned long long seed = 0;
		char out[64];
		int len;

		if (sscanf(line, "%u %llu", &n, &seed) != 2 || n > 100000)
			break;
		len = snprintf(out, sizeof(out), "%llu\n",
			       (unsigned long long)request_blocks(n, seed));
		if (write(fd, out, (size_t)len) != len)
			break;
	}
	if (in)
		fclose(in);
	else
		close(fd);
	return NULL;
}

int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 64) ||
	    getsockname(s, (struct sockaddr *)&a, &alen))
		return perror("attach_server"), 1;
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int c = accept(s, NULL, NULL);
		pthread_t t;

		if (c >= 0 && pthread_create(&t, NULL, serve, (void *)(intptr_t)c) == 0)
			pthread_detach(t);
		else if (c >= 0)
			close(c);
	}
}
