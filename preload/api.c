/*
 * The control API of include/heapprof.h: heapprof.so exports one function,
 * heapprof_api_v1, that hands out a table of the calls; the header's inline wrappers
 * find it through a weak reference, so programs run unchanged without the preload.
 */
#include <stddef.h>

#include "heapprof.h"
#include "hooks.h"
#include "snapshot.h"
#include "table.h"

static int api_snapshot(const char *path)
{
	return snapshot_take(path, NULL, 0, SNAP_API);
}

static int api_snapshot_wait(int timeout_ms)
{
	return snapshot_wait(timeout_ms);
}

static void api_enable(int on)
{
	hooks_enable(on != 0);
}

static void api_thread_enable(int on)
{
	hooks_thread_enable(on != 0);
}

static void api_region_begin(const char *name)
{
	table_region_begin(name);
}

static void api_region_end(void)
{
	table_region_end();
}

static const struct heapprof_api api = {
	.size = sizeof(struct heapprof_api),
	.snapshot = api_snapshot,
	.enable = api_enable,
	.thread_enable = api_thread_enable,
	.region_begin = api_region_begin,
	.region_end = api_region_end,
	.snapshot_wait = api_snapshot_wait,
};

HP_EXPORT const struct heapprof_api *heapprof_api_v1(void)
{
	return &api;
}
