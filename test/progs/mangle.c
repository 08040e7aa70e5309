/*
 * mangle FILE SEED COUNT: overwrite COUNT bytes of FILE at positions drawn from SEED,
 * the same ones every time, so that a failure on a corrupted core can be replayed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	uint64_t s, n;
	long size;
	FILE *f;

	if (argc != 4 || !(f = fopen(argv[1], "r+b")))
		return 2;
	s = strtoull(argv[2], NULL, 0) * 0x9E3779B97F4A7C15ull + 1;
	n = strtoull(argv[3], NULL, 0);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	for (uint64_t i = 0; i < n && size > 0; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		fseek(f, (long)(s % (uint64_t)size), SEEK_SET);
		putc((int)(s >> 56), f);
	}
	return fclose(f) != 0;
}
