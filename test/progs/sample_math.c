/*
 * The preload's sampling math (preload/util.c) against libm's, for t1010: prints the
 * worst relative error of hp_neg_log against -log and of hp_one_minus_exp_neg against
 * -expm1(-x), and how many of the figures heapprof makes from them differ: sample
 * intervals (HEAPPROF_SAMPLE=524288) and a sampled block's weight, size / p rounded.
 *   sample_math N
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static double rel(double a, double b)
{
	return b ? fabs(a - b) / fabs(b) : fabs(a);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, log_diff = 0, weight_diff = 0;
	static const double periods[] = { 1, 4096, 65536, 524288, 1 << 24 };
	double worst_log = 0, worst_exp = 0;

	for (long i = 0; i < n; i++) {
		double u = (double)((next() >> 11) + 1) * 0x1p-53;	/* as hooks_sample.c draws */
		double a = hp_neg_log(u), b = -log(u);
		/* sizes from 1 byte to 1 GiB, log-uniform */
		uint64_t size = (uint64_t)1 << (next() % 31);
		double period = periods[next() % 5], x;

		size += next() % size;
		x = (double)size / period;
		if (rel(a, b) > worst_log)
			worst_log = rel(a, b);
		log_diff += (uint64_t)(a * 524288) != (uint64_t)(b * 524288);
		a = hp_one_minus_exp_neg(x);
		b = -expm1(-x);
		if (rel(a, b) > worst_exp)
			worst_exp = rel(a, b);
		weight_diff += (int64_t)((double)size / a + 0.5) != (int64_t)((double)size / b + 0.5);
	}
	printf("log: worst relative error %.2g, intervals differing %ld\n", worst_log, log_diff);
	printf("expm1: worst relative error %.2g, weights differing %ld\n", worst_exp, weight_diff);
	return 0;
}
