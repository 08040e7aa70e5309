#!/bin/sh
# The unwinders on their own: every mode against known call chains, threads, hostile
# stacks and corrupted unwind tables, built without and with frame pointers. The
# program's own ok / not ok lines count one by one.
. "$(dirname "$0")/lib.sh"

for build in nofp fp; do
	$PROGS/unwind_check-$build >$build.out 2>&1
	rc=$?
	grep -E '^(not )?ok ' $build.out | sed "s/ - / - $build: /"
	if [ $rc != 0 ] && ! grep -q '^not ok ' $build.out; then
		echo "not ok - unwind_check-$build exited with status $rc"
		tail -n 20 $build.out | sed 's/^/#   /'
	fi
	[ $rc = 0 ] || failures=1
done
