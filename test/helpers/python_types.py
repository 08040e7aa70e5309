# Run by t3025-python-types.sh (PYTHONMALLOC=malloc, under heapprof.so or not): a heap of
# known Python types (and 300 of a module's type, collections.deque), and what the script counts of them itself, then waits to be dumped.
#   count TYPE BYTES N   sys.getsizeof summed over N objects of TYPE: every object the
#                        collector tracks (gc.get_objects()) and what they refer to,
#                        each once
#   ready                dump now
import collections, gc, signal, sys


class Record:
	def __init__(self, i):
		self.key = 'record-%06d' % i
		self.tags = [i, i + 1, i + 2]
		self.meta = {'n': i, 'name': self.key}


records = [Record(i) for i in range(20000)]
index = {'key-%06d' % i: 'value %d ' % i * (i % 40 + 1) for i in range(20000)}
queues = [collections.deque() for i in range(300)]	# tp_name "collections.deque"


def count():
	seen, todo, sizes = set(), list(gc.get_objects()), {}
	while todo:
		o = todo.pop()
		if id(o) in seen:
			continue
		seen.add(id(o))
		t = type(o)
		b, n = sizes.get(t.__name__, (0, 0))
		sizes[t.__name__] = (b + sys.getsizeof(o), n + 1)
		todo.extend(gc.get_referents(o))
		if isinstance(o, dict):	# a dict of str keys visits its values only
			todo.extend(o.keys())
	return sizes


sizes = count()
for name in ('dict', 'str', 'list', 'Record'):
	print('count %s %d %d' % (name, sizes[name][0], sizes[name][1]))
del sizes
gc.collect()
print('ready', flush=True)
while True:	# a snapshot's signal ends a pause
	signal.pause()
