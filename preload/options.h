/*
 * heapprof.so's options: every HEAPPROF_* variable is read once, through one table
 * (options.c), when the library boots. The README's table lists the same names.
 */
#ifndef HP_OPTIONS_H
#define HP_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

struct hp_options {
	const char *unwind;	/* HEAPPROF_UNWIND: NULL = the default unwinder */
	const char *allocator;	/* HEAPPROF_ALLOCATOR: NULL = the next malloc */
	uint64_t frames;	/* HEAPPROF_FRAMES: stack depth limit */
	uint64_t replay;	/* HEAPPROF_REPLAY: 0 = walk every stack anew (unwind.c); unset:
			 * HP_REPLAY_AUTO, on unless sample points are HP_REPLAY_SPARSE apart */
	uint64_t sample;	/* HEAPPROF_SAMPLE: mean bytes between samples, 0 = all */
	uint64_t seed;		/* HEAPPROF_SEED: sampling seed, 0 = from the clock */
	uint64_t time;		/* HEAPPROF_TIME: 1 = sum the time between allocation calls */
	uint64_t events;	/* HEAPPROF_EVENTS: calls kept per thread, 0 = none */
	const char *output;	/* HEAPPROF_OUTPUT: snapshot name pattern, NULL = default */
	const char *snapshot;	/* HEAPPROF_SNAPSHOT: "compact" (NULL) or "full" */
	const char *signal;	/* HEAPPROF_SIGNAL: a snapshot per delivery */
	const char *toggle_signal; /* HEAPPROF_TOGGLE_SIGNAL: tagging on/off per delivery */
	const char *start;	/* HEAPPROF_START: "off" = tagging starts switched off */
	uint64_t at_exit;	/* HEAPPROF_AT_EXIT: 1 = a snapshot at normal exit */
	uint64_t at_crash;	/* HEAPPROF_AT_CRASH: 1 = a snapshot on SEGV, BUS, ILL, FPE, ABRT */
	uint64_t peak;		/* HEAPPROF_PEAK: a snapshot per BYTES of new peak, 0 = none */
	uint64_t oom;		/* HEAPPROF_OOM: a snapshot at PERCENT of the memory limit, 0 = none */
	const char *interval;	/* HEAPPROF_INTERVAL: a snapshot every DURATION (interval.h) */
	uint64_t keep;		/* HEAPPROF_KEEP: HEAPPROF_INTERVAL's snapshots kept, 0 = all */
	uint64_t timeline;	/* HEAPPROF_TIMELINE: samples the timeline holds, 0 = none */
	uint64_t peak_step;	/* HEAPPROF_PEAK_STEP: least bytes between peaks, 0 = no table */
	uint64_t peak_entries;	/* HEAPPROF_PEAK_ENTRIES: stacks a peak table may grow to */
	uint64_t wait_ms;	/* HEAPPROF_WAIT_MS: how long exit and the API wait for a writer */
	uint64_t python;	/* HEAPPROF_PYTHON: 1 = Python frames in stacks (interp_python.h) */
	uint64_t maps;		/* HEAPPROF_MAPS: entries of the map table (maps.c), 0 = none */
	uint64_t stack_parts;	/* HEAPPROF_STACK_PARTS: 1 = long stacks in shared parts (table.c) */
};

extern struct hp_options hp_opt HP_HIDDEN;

#define HP_DEFAULT_FRAMES 128
#define HP_DEFAULT_MAPS 65536
#define HP_DEFAULT_TIMELINE 1024		/* samples: 40 KiB (timeline.h) */
#define HP_DEFAULT_PEAK_STEP ((uint64_t)1 << 20)	/* bytes: the least step (peak.h) */
#define HP_DEFAULT_PEAK_ENTRIES ((uint64_t)1 << 20)	/* stacks a peak table may grow to hold */
#define HP_DEFAULT_KEEP 10
#define HP_MAX_KEEP 1000

/*
 * HEAPPROF_REPLAY unset: replay, unless sampling takes a point less often than every
 * HP_REPLAY_SPARSE bytes. Then few allocations walk at all (one in about a hundred on
 * small blocks), and a thread's table of walks (~280 KiB, touched as used) costs more
 * memory than the walks it saves cost time.
 */
#define HP_REPLAY_AUTO 2
#define HP_REPLAY_SPARSE 65536

/* Read the environment into hp_opt; a bad value gives one warning and the default. */
HP_HIDDEN void options_read(void);

#endif
