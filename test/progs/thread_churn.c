/*
 * Creates and joins N threads one after the other, each allocating from a few places,
 * and prints the process's address space (VmSize, KiB) before and after: heapprof.so's
 * per-thread memory (the replay log of stack walks, unwind.c) must go with its thread.
 *   thread_churn [N]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;	/* keeps the compiler from pairing malloc with free away */

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		sink = malloc(32 + (size_t)i);
		free(sink);
	}
	return NULL;
}

static long vm_size_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	long before = vm_size_kib();

	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, work, NULL) != 0 || pthread_join(t, NULL) != 0) {
			perror("thread_churn");
			return 1;
		}
	}
	printf("%d threads: VmSize %ld KiB before, %ld KiB after\n", n, before, vm_size_kib());
	return 0;
}
