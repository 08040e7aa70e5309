# t1013: N small objects (pymalloc's: tuples of two, 56 bytes) kept alive by make_pairs,
# then heapprof's own resident memory in this very process by kind (bench/own_rss.py's
# resident(), which needs no rights over another process), one "KIND<TAB>BYTES" a line;
# with "wait", then "ready", and it sleeps to be dumped.
#   python_sampled_slabs.py BENCH_DIR N [wait]
import os, sys, time

sys.path.insert(0, sys.argv[1])
import own_rss


def make_pairs(n):
    return [(i, -i) for i in range(n)]


pairs = make_pairs(int(sys.argv[2]))
for kind, n in sorted(own_rss.resident(os.getpid()).items()):
    print("%s\t%d" % (kind, n))
print("pairs\t%d" % len(pairs))
if sys.argv[3:] == ["wait"]:
    print("ready", flush=True)
    time.sleep(600)
