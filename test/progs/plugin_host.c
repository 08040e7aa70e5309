/*
 * plugin_host PLUGIN [OTHER]: dlopen PLUGIN, have it allocate 10 x 1000 + 5000 bytes
 * that stay live, dlclose it and check it is really gone; with OTHER, dlopen that
 * library next (it may land where the plugin was). Then print "ready" and wait.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static void *keep[64];

int main(int argc, char **argv)
{
	void *h, *other = NULL;
	void (*run)(void **, int);

	if (argc < 2) {
		fprintf(stderr, "usage: plugin_host PLUGIN [OTHER]\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h || !(run = (void (*)(void **, int))dlsym(h, "plugin_run"))) {
		fprintf(stderr, "plugin_host: %s\n", dlerror());
		return 1;
	}
	run(keep, 10);
	if (dlclose(h) != 0 || dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD)) {
		fprintf(stderr, "plugin_host: '%s' is still loaded after dlclose\n", argv[1]);
		return 1;
	}
	if (argc > 2 && !(other = dlopen(argv[2], RTLD_NOW))) {
		fprintf(stderr, "plugin_host: %s\n", dlerror());
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
	return keep[0] && other;
}
