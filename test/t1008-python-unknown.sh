#!/bin/sh
# An interpreter heapprof.so does not know (pyenv's 2.7 and 3.10) runs under it as
# before: one line on stderr for the whole run (threads, a forked child, extension
# modules loaded by dlopen all along), and native stacks that hold its bytes.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/helpers/pythons.sh"
need_tool gcore
export PYTHONMALLOC=malloc

# runs on 2.7 as on 3.x
PROG='import os, sys, threading, time, json, ctypes
held = []
def fill():
    for i in range(20):
        held.append(bytearray(100000))
t = threading.Thread(target=fill)
t.start()
t.join()
pid = os.fork()
if pid == 0:
    held.append(bytearray(1000))
    os._exit(0)
os.waitpid(pid, 0)
sys.stdout.write("ready\n")
sys.stdout.flush()
time.sleep(120)'

for label in 2.7 3.10; do
	py=$(python_path "$label")
	if [ -z "$py" ]; then
		skip_case "python $label: not known, left alone" "no python $label on this machine"
		continue
	fi
	test_case "python $label: one line on stderr, native stacks with its bytes" '
		run_preloaded "$py" -c "$PROG" && take_core py.core &&
		"$BUILD/unit/pystacks" py.core >stacks &&
		[ "$(wc -l <prog.err)" = 1 ] &&
		grep -q "^heapprof: python before 3.11 in .*libpython$label.*: native stacks only\$" prog.err &&
		awk "\$4 != 0 { bad = 1 } END { exit bad }" stacks &&
		awk "\$1 >= 2000000 && \$1 < 2100000 && \$2 == 20 { ok = 1 } END { exit !ok }" stacks ||
		{ cat prog.err; sort -rn stacks | head -3; false; }
	'
	test_case "python $label: runs to the end under heapprof.so" '
		LD_PRELOAD=$PRELOAD "$py" -c "import sys, threading, json
t = threading.Thread(target=lambda: json.dumps(list(range(1000))))
t.start(); t.join(); sys.stdout.write(\"done\\n\")" >out 2>err &&
		[ "$(cat out)" = done ] && [ "$(wc -l <err)" = 1 ]
	'
done
