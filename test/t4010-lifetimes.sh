#!/bin/sh
# --lifetimes: a program whose blocks live known times (test/progs/lifetimes.c), under
# event rings that hold every call, then under a ring smaller than its last loop.
. "$(dirname "$0")/lib.sh"
need_tool gcore
need_tool python3

# lt.py JSON [FUNC]: the summary's lifetimes, or those of the stacks whose innermost
# frame is FUNC, summed, as "key=value" lines
cat >lt.py <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if len(sys.argv) < 3:
	out = d["lifetimes"]
else:
	out = {}
	for s in d["stacks"]:
		if s["path"] and s["path"][-1] == sys.argv[2]:
			for k, v in s["lifetime"].items():
				if k.endswith("min_ms") or k.endswith("min_ns"):
					out[k] = min(out.get(k, v), v)
				elif k.endswith("max_ms") or k.endswith("max_ns"):
					out[k] = max(out.get(k, v), v)
				else:
					out[k] = out.get(k, 0) + v
for k, v in sorted(out.items()):
	print("%s=%s" % (k, str(v).lower()))
PY

# field FILE KEY: the value of KEY in lt.py's output FILE
field()
{
	sed -n "s/^$2=//p" "$1"
}

test_case 'a ring that holds every call: exact counts, lifetimes within 200 ms' '
	HEAPPROF_EVENTS=4096 run_preloaded $PROGS/lifetimes 100 && take_core all.core &&
	heapprof-analyze -f json --lifetimes --metric=alloc_objects $PROGS/lifetimes all.core \
		>all.json &&
	python3 lt.py all.json >sum && cat sum &&
	[ "$(field sum whole)" = true ] && [ "$(field sum before)" = 0 ] &&
	[ "$(field sum cross_thread)" = 1 ] && [ "$(field sum temporary)" = 100 ] &&
	[ "$(field sum paired)" = "$(field sum frees)" ] &&
	python3 lt.py all.json site_temp >temp && [ "$(field temp temporary)" = 100 ] &&
	[ "$(field temp freed)" = 100 ] && [ "$(field temp freed_max_ns)" -lt 100000000 ] &&
	python3 lt.py all.json site_slow >slow && cat slow && [ "$(field slow freed)" = 5 ] &&
	[ "$(field slow temporary)" = 0 ] &&
	[ "$(field slow freed_min_ns)" -ge 200000000 ] &&
	[ "$(field slow freed_max_ns)" -le 400000000 ] &&
	python3 lt.py all.json site_counted >counted && [ "$(field counted freed)" = 1 ] &&
	[ "$(field counted temporary)" = 0 ] &&
	python3 lt.py all.json site_xthread >x && [ "$(field x freed)" = 1 ] &&
	python3 lt.py all.json site_filler >filler && [ "$(field filler aged)" = 10 ] &&
	[ "$(field filler freed)" = 0 ] && [ "$(field filler age_min_ms)" -ge 290 ] &&
	[ "$(field filler age_max_ms)" -le 600 ] &&
	python3 lt.py all.json site_old >old && [ "$(field old aged)" = 2 ] &&
	[ "$(field old age_min_ms)" -ge 290 ] && [ "$(field old age_max_ms)" -le 600 ] &&
	python3 lt.py all.json site_young >young && [ "$(field young aged)" = 1 ] &&
	[ "$(field young age_max_ms)" = 0 ]
'

test_case 'text: the summary and a line per stack' '
	heapprof-analyze --lifetimes --metric=alloc_objects $PROGS/lifetimes all.core >all.txt &&
	grep -q "^  lifetimes:  event rings of 2 threads, every call" all.txt &&
	grep -q "^              100 temporary (freed by the thread.s next call)" all.txt &&
	grep -q "^  lifetimes: 100 freed after .*, 100 temporary$" all.txt &&
	avg=$(sed -n "s/^  lifetimes: 5 freed after \([0-9.]*\) ms on average.*/\1/p" all.txt) &&
	echo "site_slow: $avg ms on average in the text" &&
	python3 lt.py all.json site_slow >slow &&
	[ "$avg" = "$(awk -v s="$(field slow freed_sum_ns)" "BEGIN { printf \"%.1f\", s / 5e6 }")" ] &&
	awk -v a="$avg" "BEGIN { exit !(a >= 200) }"
'

test_case 'views merge the stacks lifetimes too; --by-thread keeps them' '
	heapprof-analyze -f json --lifetimes --max-frames=1 $PROGS/lifetimes all.core >cut.json &&
	[ "$(grep -c "\"path\": \[\"\[truncated\]\", \"site_old\"\]" cut.json)" = 1 ] &&
	python3 lt.py cut.json site_old >old && [ "$(field old aged)" = 2 ] &&
	[ "$(field old age_min_ms)" -ge 290 ] &&
	heapprof-analyze -f json --lifetimes --by-thread --metric=alloc_objects \
		$PROGS/lifetimes all.core >thr.json &&
	python3 lt.py thr.json site_xthread >x && [ "$(field x freed)" = 1 ] &&
	python3 lt.py thr.json site_temp >temp && [ "$(field temp temporary)" = 100 ]
'

test_case 'a ring of 64 calls: only its window, 32 of the 100 temporaries' '
	HEAPPROF_EVENTS=64 run_preloaded $PROGS/lifetimes 100 && take_core small.core &&
	heapprof-analyze -f json --lifetimes --metric=alloc_objects $PROGS/lifetimes small.core \
		>small.json &&
	python3 lt.py small.json >sum && cat sum &&
	[ "$(field sum whole)" = false ] && [ "$(field sum calls)" = 64 ] &&
	[ "$(field sum temporary)" = 32 ] && [ "$(field sum paired)" = 32 ] &&
	[ "$(field sum before)" = 0 ] && [ "$(field sum window_ns)" -gt 500000000 ] &&
	python3 lt.py small.json site_slow >slow && [ "$(field slow freed)" = 0 ] &&
	python3 lt.py small.json site_temp >temp && [ "$(field temp temporary)" = 32 ] &&
	heapprof-analyze --lifetimes $PROGS/lifetimes small.core >small.txt &&
	grep -q "^  lifetimes:  event rings of 2 threads, window +" small.txt
'

test_case 'no rings: the live blocks ages only' '
	run_preloaded $PROGS/lifetimes 100 && take_core none.core &&
	heapprof-analyze -f json --lifetimes $PROGS/lifetimes none.core >none.json &&
	python3 lt.py none.json >sum && [ "$(field sum rings)" = 0 ] &&
	[ "$(field sum temporary)" = 0 ] &&
	python3 lt.py none.json site_old >old && [ "$(field old aged)" = 2 ] &&
	heapprof-analyze --lifetimes $PROGS/lifetimes none.core >none.txt &&
	grep -q "no event rings (HEAPPROF_EVENTS=N): live blocks. ages only" none.txt
'

test_case 'formats without lifetimes refuse the option: one line, exit 64' '
	heapprof-analyze -f collapsed --lifetimes $PROGS/lifetimes none.core >out 2>err
	[ $? = 64 ] && grep -q "lifetimes gives lifetimes per stack, which -f collapsed" err &&
	heapprof-analyze --lifetimes --leaks $PROGS/lifetimes none.core >out 2>err
	[ $? = 64 ] && grep -q "^heapprof-analyze: --lifetimes goes with one report" err
'
