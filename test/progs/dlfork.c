/*
 * fork while other threads dlopen/dlclose and allocate (issue 13 item 2): each child
 * allocates with stacks and exits. An unwinder that takes the loader's lock (as
 * libunwind's dl_iterate_phdr did) hangs a child forked while a thread held it.
 *   usage: dlfork LIBRARY [forks]    prints "N forks ok"
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;
static const char *lib;

static void *load_loop(void *arg)
{
	(void)arg;
	while (!stop) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

		free(malloc(64));
		if (h)
			dlclose(h);
	}
	return NULL;
}

static void *alloc_loop(void *arg)
{
	(void)arg;
	while (!stop)
		free(malloc(200));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	int forks = argc > 2 ? atoi(argv[2]) : 20, bad = 0;

	if (argc < 2)
		return 64;
	lib = argv[1];
	pthread_create(&t[0], NULL, load_loop, NULL);
	pthread_create(&t[1], NULL, load_loop, NULL);
	pthread_create(&t[2], NULL, alloc_loop, NULL);
	for (int i = 0; i < forks; i++) {
		int status;
		pid_t pid;

		usleep(2000);	/* let the threads get into the loader */
		pid = fork();
		if (pid == 0) {
			for (int j = 0; j < 1000; j++)
				free(malloc(16 + j));
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	}
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%d forks %s\n", forks, bad ? "failed" : "ok");
	return bad != 0;
}
