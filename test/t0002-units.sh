#!/bin/sh
# Unit tests of the analyzer, built with its sanitizers when SANITIZE is set. Their
# own ok / not ok lines count one by one; a crash counts as a failure of its own.
. "$(dirname "$0")/lib.sh"

run_tap scan_test "$BUILD/unit/scan_test"
run_tap sym_test "$BUILD/unit/sym_test" "$TEST_DIR/unit"
run_tap v2_test "$BUILD/unit/v2_test"
run_tap counts_test "$BUILD/unit/counts_test"
run_tap timeline_test "$BUILD/unit/timeline_test"
run_tap maps_test "$BUILD/unit/maps_test"
run_tap python_test "$BUILD/unit/python_test"
run_tap pyobj_test "$BUILD/unit/pyobj_test"
run_tap util_test "$BUILD/unit/util_test"
run_tap graph_test "$BUILD/unit/graph_test"
run_tap spool_test "$BUILD/unit/spool_test"
run_tap duration_test "$BUILD/unit/duration_test"
