/*
 * heapprof.so's environment table, one variable a line: "NAME number DEFAULT", with
 * "auto" for a default outside the variable's range (worked out at start-up, as
 * HEAPPROF_REPLAY's), or "NAME string". It includes preload/options.c itself, so the
 * table printed is the one the library reads (defs[]); t0004 checks heapprof.so.7 and
 * the README against it. The two functions options.c calls are not called here.
 */
#include <stdio.h>

#include "../../preload/options.c"

bool hp_env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t def, uint64_t *out)
{
	(void)name, (void)lo, (void)hi;
	*out = def;
	return false;
}

void hp_warn(const char *a, const char *b, const char *c)
{
	(void)a, (void)b, (void)c;
}

int main(void)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		const struct option_def *d = &defs[i];

		if (d->is_string)
			printf("%s string\n", d->name);
		else if (d->def < d->lo || d->def > d->hi)
			printf("%s number auto\n", d->name);
		else
			printf("%s number %llu\n", d->name, (unsigned long long)d->def);
	}
	return 0;
}
