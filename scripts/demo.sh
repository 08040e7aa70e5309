#!/bin/sh
# make demo: run the demo server under heapprof.so, snapshot it with gcore, and
# print the report: the whole of heapprof's job, on a bundled program.
set -eu
build=$(cd "${1:-build}" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-demo.XXXXXX")
trap 'kill -9 $pid 2>/dev/null; rm -rf "$dir"' EXIT
LD_PRELOAD=$build/heapprof.so "$build/progs/demo" >"$dir/out" &
pid=$!
while ! grep -q ready "$dir/out"; do sleep 0.1; done
echo "\$ LD_PRELOAD=heapprof.so demo &       # pid $pid"
echo "\$ gcore -o demo.core $pid"
cd "$dir"
gcore -o demo.core "$pid" >/dev/null 2>&1
echo "\$ heapprof-analyze demo demo.core.$pid"
"$build/heapprof-analyze" --top=5 "$build/progs/demo" "demo.core.$pid"
