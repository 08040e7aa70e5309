#!/bin/sh
# Unit tests of the analyzer, built with its sanitizers when SANITIZE is set. Their
# own ok / not ok lines count one by one; a crash counts as a failure of its own.
. "$(dirname "$0")/lib.sh"

status=0
for t in scan_test sym_test; do
	DEBUGINFOD_URLS= "$BUILD/unit/$t" "$TEST_DIR/unit" >$t.out 2>&1
	rc=$?
	grep -E '^(not )?ok ' $t.out | sed "s/ - / - $t: /"
	if [ $rc != 0 ] && ! grep -q '^not ok ' $t.out; then
		echo "not ok - $t exited with status $rc"
		tail -n 20 $t.out | sed 's/^/#   /'
	fi
	[ $rc = 0 ] || status=1
done
failures=$status
