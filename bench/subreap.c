/*
 * subreap CMD [ARGS...]: run CMD and count the CPU of everything it starts, the
 * processes it leaves behind too. heapprof.so's snapshot writers are orphans (init
 * reaps them, so GNU time and the program's own rusage never see their CPU); as a
 * child subreaper this process inherits and reaps them instead, and its
 * RUSAGE_CHILDREN holds all of it. Prints, on stderr once every descendant is gone:
 *   subreap: program_cpu=S total_cpu=S program_maxrss_kb=N
 * program_cpu and program_maxrss_kb are CMD's own (with the children it reaped itself),
 * total_cpu that and every orphan's. Exits with CMD's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double secs(const struct rusage *r)
{
	return (double)r->ru_utime.tv_sec + (double)r->ru_utime.tv_usec / 1e6 +
	       (double)r->ru_stime.tv_sec + (double)r->ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct rusage prog, all;
	int status = 0, st;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: subreap CMD [ARGS...]\n");
		return 64;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		perror("subreap: PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("subreap: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror("subreap: exec");
		_exit(127);
	}
	while (wait4(pid, &status, 0, &prog) < 0)
		if (errno != EINTR) {
			perror("subreap: wait4");
			return 2;
		}
	/* the orphans: writers still running when CMD ended */
	while (wait(&st) >= 0 || errno == EINTR)
		;
	getrusage(RUSAGE_CHILDREN, &all);
	fprintf(stderr, "subreap: program_cpu=%.2f total_cpu=%.2f program_maxrss_kb=%ld\n",
		secs(&prog), secs(&all), prog.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
