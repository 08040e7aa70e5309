/*
 * Writes the input of the sort workload: SIZE bytes (default 100 MB) of text lines,
 * each 4..12 random lowercase words, from a fixed seed so every machine sorts the
 * same bytes.   usage: mksortinput [BYTES] > FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	unsigned long long want = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000ull, done = 0;
	uint64_t seed = 0x2545F4914F6CDD1Dull;
	char line[256];

	while (done < want) {
		unsigned words = 4 + rnd(&seed) % 9, n = 0;

		for (unsigned w = 0; w < words; w++) {
			unsigned len = 2 + rnd(&seed) % 9;

			for (unsigned i = 0; i < len; i++)
				line[n++] = (char)('a' + rnd(&seed) % 26);
			line[n++] = w + 1 < words ? ' ' : '\n';
		}
		if (done + n > want)	/* the file is exactly BYTES long, ending in a newline */
			n = (unsigned)(want - done), line[n - 1] = '\n';
		fwrite(line, 1, n, stdout);
		done += n;
	}
	return ferror(stdout) || fclose(stdout) ? 1 : 0;
}
