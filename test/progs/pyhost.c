/*
 * A program with no Python of its own that loads one later (t1005): python_init() (in
 * libpycapture.so) finds nothing first, then the interpreter once libpython is loaded
 * with RTLD_GLOBAL, as an embedding plugin would. Prints both answers and a capture's.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *cap, *py;
	unsigned (*init)(void);
	int (*capture)(char *, size_t);
	char buf[4096];
	unsigned before;

	if (argc != 3) {
		fprintf(stderr, "usage: pyhost LIBPYCAPTURE LIBPYTHON\n");
		return 64;
	}
	cap = dlopen(argv[1], RTLD_NOW);
	if (!cap || !(init = (unsigned (*)(void))dlsym(cap, "pyc_init")) ||
	    !(capture = (int (*)(char *, size_t))dlsym(cap, "pyc_capture"))) {
		fprintf(stderr, "pyhost: %s\n", dlerror());
		return 2;
	}
	before = init();
	py = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
	if (!py) {
		fprintf(stderr, "pyhost: %s\n", dlerror());
		return 2;
	}
	printf("%#x %#x %d\n", before, init(), capture(buf, sizeof(buf)));
	return 0;
}
