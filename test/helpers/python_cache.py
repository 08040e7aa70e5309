# Run by t3028-python-graph.sh under heapprof.so (PYTHONMALLOC=malloc): a module-global
# dict, CACHE, alone holds N lists of a bytes object each (the lists are the collector's,
# on its lists with every other container). Prints what the cache holds by its own
# count, then waits to be dumped. Usage: python_cache.py N
#   cache BYTES       sys.getsizeof of the dict (its keys table with it), its keys, its
#                     values and what they hold, each once
#   ready             dump now
import gc, signal, sys


def value(i):
	return [bytes(900 + i % 100), i]


def build_cache(n):
	cache = {}
	for i in range(n):
		cache['k%d' % i] = value(i)
	return cache


CACHE = build_cache(int(sys.argv[1]))


def held(root):
	seen, todo, total = set(), [root], 0
	while todo:
		o = todo.pop()
		if id(o) in seen or (type(o) is int and -5 <= o <= 256):	# static small ints
			continue
		seen.add(id(o))
		total += sys.getsizeof(o)
		if isinstance(o, dict):
			todo.extend(o.keys())
			todo.extend(o.values())
		elif isinstance(o, list):
			todo.extend(o)
	return total


print('cache %d' % held(CACHE))
gc.collect()
print('ready', flush=True)
while True:	# a snapshot's signal ends a pause
	signal.pause()
