# The python workload: build a dict of 400,000 strings (keys of 12 characters, values of
# up to 1,000), look every key up once, then drop half of them. CPython serves strings up
# to 512 bytes from its own arenas (pymalloc) and larger ones and the dict's tables
# from malloc, so this is a real program's mix, not a malloc microbenchmark.
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 400_000
seed = 12345
d = {}
for i in range(n):
    seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
    d["key:%08d" % i] = ("%x" % seed) * (1 + seed % 125)
total = 0
for i in range(n):
    total += len(d["key:%08d" % i])
for i in range(0, n, 2):
    del d["key:%08d" % i]
print(len(d), total)
