#!/bin/sh
# make demo: run the demo server under heapprof.so, snapshot it with gcore, and
# print the report: the whole of heapprof's job, on a bundled program.
set -eu
build=$(cd "${1:-build}" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-demo.XXXXXX")
trap 'kill -9 $pid 2>/dev/null; rm -rf "$dir"' EXIT
# in a directory of its own, as ./demo: the report names the program as it was given
cp "$build/progs/demo" "$dir/demo"
cd "$dir"
LD_PRELOAD=$build/heapprof.so ./demo >out &
pid=$!
while ! grep -q ready out; do sleep 0.1; done
echo "\$ LD_PRELOAD=heapprof.so ./demo &     # pid $pid"
echo "\$ gcore -o demo.core $pid"
gcore -o demo.core "$pid" >/dev/null 2>&1
echo "\$ heapprof-analyze --top=3 ./demo demo.core.$pid"
"$build/heapprof-analyze" --top=3 ./demo "demo.core.$pid"
