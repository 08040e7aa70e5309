#!/bin/sh
# The unwinders on their own: every mode against known call chains, threads, hostile
# stacks and corrupted unwind tables, built without and with frame pointers. The
# program's own ok / not ok lines count one by one.
. "$(dirname "$0")/lib.sh"

run_tap nofp "$PROGS/unwind_check-nofp"
run_tap fp "$PROGS/unwind_check-fp"
