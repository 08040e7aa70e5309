/*
 * t3014's reader: names Python frames from a core through analyzer/python.c, as the
 * analyzer will. Reads lines "CODE OFFSET RECORD TRUTH..." (test/helpers/python_chain.py's
 * kept file) on standard input and prints "ok TRUTH" when the record, and the code
 * object when CODE is not 0, both give TRUTH ("NAME FILE LINE"); else "not ok" and what
 * they gave.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "python.h"

int main(int argc, char **argv)
{
	struct image img;
	char err[512], line[4096];
	struct py_mem m;
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: pyname CORE <kept\n");
		return 64;
	}
	memset(&img, 0, sizeof(img));
	if (image_open_core(&img, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "pyname: %s\n", err);
		return 2;
	}
	m = python_mem_image(&img);
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t code, rec;
		unsigned off;
		int skip = 0;
		char r[1400], c[1400] = "";
		struct py_name n;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%" SCNx64 " %u %" SCNx64 " %n", &code, &off, &rec, &skip) < 3 || !skip)
			continue;
		python_name_record(&m, rec, off, &n);
		snprintf(r, sizeof(r), "%s %s %d", n.func, n.file, n.line);
		if (code) {
			python_name_code(&m, n.version, code, off, &n);
			snprintf(c, sizeof(c), "%s %s %d", n.func, n.file, n.line);
		}
		if (strcmp(r, line + skip) == 0 && (!code || strcmp(c, line + skip) == 0)) {
			printf("ok %s\n", line + skip);
		} else {
			printf("not ok %s: record gave '%s', code gave '%s'\n", line + skip, r, c);
			bad = 1;
		}
	}
	image_close(&img);
	return bad;
}
