/*
 * The one table of heapprof.so's environment (see options.h). Runs before the real
 * allocator is known: getenv and write(2) only. A process with raised privileges
 * (AT_SECURE: setuid, setgid, file capabilities) reads none of it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "heapprof_format.h"
#include "options.h"
#include "util.h"

struct hp_options hp_opt;

struct option_def {
	const char *name;
	size_t field;		/* offset in struct hp_options */
	bool is_string;
	uint64_t lo, hi, def;	/* numbers only */
};

#define NUM(name, f, lo, hi, def) { name, offsetof(struct hp_options, f), false, lo, hi, def }
#define STR(name, f) { name, offsetof(struct hp_options, f), true, 0, 0, 0 }

static const struct option_def defs[] = {
	STR("HEAPPROF_UNWIND", unwind),
	STR("HEAPPROF_ALLOCATOR", allocator),
	NUM("HEAPPROF_FRAMES", frames, 1, HP2_MAX_FRAMES, HP_DEFAULT_FRAMES),
	NUM("HEAPPROF_REPLAY", replay, 0, 1, HP_REPLAY_AUTO),
	NUM("HEAPPROF_SAMPLE", sample, 0, (uint64_t)1 << 62, 0),
	NUM("HEAPPROF_SEED", seed, 0, UINT64_MAX, 0),
	NUM("HEAPPROF_TIME", time, 0, 1, 0),
	NUM("HEAPPROF_EVENTS", events, 0, 1u << 24, 0),
	STR("HEAPPROF_OUTPUT", output),
	STR("HEAPPROF_SNAPSHOT", snapshot),
	STR("HEAPPROF_SIGNAL", signal),
	STR("HEAPPROF_TOGGLE_SIGNAL", toggle_signal),
	STR("HEAPPROF_START", start),
	NUM("HEAPPROF_AT_EXIT", at_exit, 0, 1, 0),
	NUM("HEAPPROF_AT_CRASH", at_crash, 0, 1, 0),
	NUM("HEAPPROF_PEAK", peak, 0, (uint64_t)1 << 62, 0),
	NUM("HEAPPROF_OOM", oom, 0, 99, 0),
	STR("HEAPPROF_INTERVAL", interval),
	NUM("HEAPPROF_KEEP", keep, 0, HP_MAX_KEEP, HP_DEFAULT_KEEP),
	NUM("HEAPPROF_TIMELINE", timeline, 0, HP2_TIMELINE_MAX, HP_DEFAULT_TIMELINE),
	NUM("HEAPPROF_PEAK_STEP", peak_step, 0, (uint64_t)1 << 62, HP_DEFAULT_PEAK_STEP),
	NUM("HEAPPROF_PEAK_ENTRIES", peak_entries, 16, HP2_PEAK_MAX, HP_DEFAULT_PEAK_ENTRIES),
	NUM("HEAPPROF_WAIT_MS", wait_ms, 0, 86400000, 60000),
	NUM("HEAPPROF_PYTHON", python, 0, 1, 1),
	NUM("HEAPPROF_MAPS", maps, 0, HP2_MAPS_MAX, HP_DEFAULT_MAPS),
	NUM("HEAPPROF_STACK_PARTS", stack_parts, 0, 1, 1),
};

/*
 * In a setuid, setgid or file-capability process the environment belongs to a user
 * with fewer rights than the process: HEAPPROF_ALLOCATOR would load their code and
 * the snapshot triggers would write the process's memory where they like. glibc
 * ignores LD_PRELOAD paths there for the same reason, but /etc/ld.so.preload and a
 * program linked with heapprof.so still load us: take the defaults, say so once.
 */
static bool env_is_foreign(void)
{
	extern char **environ;
	char **in, **out;

	if (!getauxval(AT_SECURE))
		return false;
	/* and out of the environment, lest a child the process runs after setuid(0),
	 * no longer AT_SECURE, take them from it (glibc drops its unsafe LD_* so) */
	for (in = out = environ; in && *in; in++)
		if (strncmp(*in, "HEAPPROF_", 9))
			*out++ = *in;
	if (out != in) {
		*out = NULL;
		hp_warn("running with raised privileges (AT_SECURE): every HEAPPROF_* "
			"variable is ignored and removed from the environment", NULL, NULL);
	}
	return true;
}

void options_read(void)
{
	bool foreign = env_is_foreign();

	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		const struct option_def *d = &defs[i];
		void *field = (char *)&hp_opt + d->field;

		if (foreign) {
			if (d->is_string)
				*(const char **)field = NULL;
			else
				*(uint64_t *)field = d->def;
		} else if (d->is_string) {
			const char *s = getenv(d->name);

			*(const char **)field = s && *s ? s : NULL;
		} else {
			hp_env_u64(d->name, d->lo, d->hi, d->def, (uint64_t *)field);
		}
	}
}
