/*
 * The preload's Python tests' reader (t1006...): every stack of a core that holds live
 * blocks, with its Python frames named through analyzer/python.c. One line a stack:
 * "BYTES BLOCKS NATIVE PY FRAMES", NATIVE its native pcs, PY its Python frames, FRAMES
 * those frames innermost first as "func@file:line", joined by ';', a '|' after each
 * frame that ends a call of the evaluation loop ("-" when there are none).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "python.h"
#include "scan.h"

/* The file's last path component: the tests' scripts run from scratch directories. */
static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void print_stack(const struct py_mem *m, const struct stack *s, uint32_t *version)
{
	unsigned native = 0, py = 0;

	for (unsigned i = 0; i < s->nframes; i++) {
		if (!hp2_is_pyframe_word(s->pcs[i]))
			native++;
		else if (i + 1 < s->nframes)
			py++, i++;
	}
	printf("%" PRIu64 " %" PRIu64 " %u %u ", stack_bytes(s), stack_blocks(s), native, py);
	if (!py)
		fputs("-", stdout);
	for (unsigned i = 0, k = 0; i + 1 < s->nframes; i++) {
		struct py_name n;

		if (!hp2_is_pyframe_word(s->pcs[i]))
			continue;
		python_name_frame(m, *version, s->pcs[i], s->pcs[i + 1], &n);
		if (n.version)
			*version = n.version;	/* for the RAW frames after it */
		printf("%s%s@%s:%d%s", k++ ? ";" : "", n.func, base(n.file), n.line,
		       s->pcs[i] >> 32 & HP2_PYFRAME_ENTRY ? "|" : "");
		i++;
	}
	putchar('\n');
}

int main(int argc, char **argv)
{
	struct image img;
	struct scan_result r;
	char err[512];
	struct stack **list;
	size_t n;
	uint32_t version = 0;
	struct py_mem m;

	if (argc != 2) {
		fprintf(stderr, "usage: pystacks CORE\n");
		return 64;
	}
	memset(&img, 0, sizeof(img));
	if (image_open_core(&img, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "pystacks: %s\n", err);
		return 2;
	}
	m = python_mem_image(&img);
	scan_image(&img, 1, &r);
	list = stacks_list(&r.stacks, &n);
	for (size_t i = 0; i < n; i++)
		print_stack(&m, list[i], &version);
	free(list);
	scan_result_free(&r);
	image_close(&img);
	return 0;
}
