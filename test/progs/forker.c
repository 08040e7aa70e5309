/*
 * fork and fork+exec under the preload: a child that allocates after fork (even
 * while another thread was allocating) must work, and an exec'd program too.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;

static void *spin(void *arg)
{
	(void)arg;
	while (!stop)
		free(malloc(100));
	return NULL;
}

static int child_work(void)
{
	char *s = NULL;

	for (int i = 0; i < 10000; i++) {
		free(s);
		s = malloc(64 + i % 300);
		if (!s)
			return 1;
		strcpy(s, "child ok");
	}
	puts(s);
	fflush(stdout);	/* the child leaves with _exit */
	free(s);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int status, bad = 0;

	pthread_create(&t, NULL, spin, NULL);
	for (int i = 0; i < 20; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(child_work());
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	}
	stop = 1;
	pthread_join(t, NULL);
	fflush(stdout);
	if (fork() == 0) {
		execl("/bin/sh", "sh", "-c", "echo exec ok", (char *)NULL);
		_exit(127);
	}
	wait(&status);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		bad = 1;
	(void)argc;
	(void)argv;
	return bad;
}
