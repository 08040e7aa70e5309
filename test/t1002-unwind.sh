#!/bin/sh
# The unwinders on their own: every mode against known call chains, threads, hostile
# stacks and corrupted unwind tables, built without and with frame pointers. The
# program's own ok / not ok lines count one by one. Each runs with unwind.c's replay
# of unchanged walks (the preload's default) and without it.
. "$(dirname "$0")/lib.sh"

run_tap nofp "$PROGS/unwind_check-nofp"
run_tap fp "$PROGS/unwind_check-fp"
run_tap nofp-noreplay env UNWIND_REPLAY=0 "$PROGS/unwind_check-nofp"
run_tap fp-noreplay env UNWIND_REPLAY=0 "$PROGS/unwind_check-fp"
