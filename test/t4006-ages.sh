#!/bin/sh
# --age and --older-than: blocks made before and after a pause of a known length.
. "$(dirname "$0")/lib.sh"
need_tool gcore

# sites sleeps between arguments given as sleep=MS: small=... is old, tmp=... is new
test_case '--older-than keeps exactly the blocks made before a 2 s pause' '
	run_preloaded $PROGS/sites small=3x1000 sleep=2000 zeroed=4x333 && take_core age.core &&
	heapprof-analyze -f collapsed $PROGS/sites age.core >all.txt &&
	expect_bytes site_small 3000 all.txt && expect_bytes site_zeroed 1332 all.txt &&
	heapprof-analyze -f collapsed --older-than=1500ms $PROGS/sites age.core >old.txt &&
	expect_bytes site_small 3000 old.txt && expect_bytes site_zeroed 0 old.txt &&
	heapprof-analyze -f collapsed --older-than=1h $PROGS/sites age.core >none.txt &&
	expect_bytes site_small 0 none.txt
'

test_case '--age: the old blocks in the 1-10 s bucket, the new ones under 1 s' '
	heapprof-analyze --age $PROGS/sites age.core >age.text &&
	grep -q "^  ages:" age.text &&
	grep -q "1-10 s *3,[0-9]* bytes" age.text &&
	grep -q "under 1 s" age.text
'

test_case 'a bad duration is one line and exit 64' '
	heapprof-analyze --older-than=soon $PROGS/sites age.core >out 2>err; [ $? = 64 ] &&
	grep -q "older-than needs a duration" err
'
