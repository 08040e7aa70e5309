# Run by the t3016-t3019 tests under heapprof.so (PYTHONMALLOC=malloc): known Python
# functions hold known bytearrays, and the script prints what each holds and where,
# then waits to be dumped. Usage: python_heap.py wait|crash [LEAKS]
#   expect NAME BYTES BLOCKS      NAME (co_qualname) holds BYTES in BLOCKS payload blocks
#                                 (sys.getsizeof: a bytearray(n) is its 56-byte object
#                                 and its n + 1 byte buffer, two blocks)
#   chain NAME QUALNAME FILE LINE | ...   the Python frames, innermost first, at NAME's
#                                 allocation, as sys._getframe sees them
#   leaked leak_native BYTES N    with LEAKS: N blocks of 777 bytes malloc'd through
#                                 ctypes in leak_native, their addresses dropped
#   ready                         dump now; then creating the file "go" runs phase 2
#                                 (Cache.fill grows, the generator's blocks go), which
#                                 prints its own expect lines and "ready 2"
# crash: after "ready", os.kill(os.getpid(), 11) instead of waiting.
import gc, os, sys, threading, time, weakref

print('version %d.%d.%d' % sys.version_info[:3], flush=True)
MODULE = sys._getframe()	# the module's frame object now, not inside a function


def chain(name):
	# the caller's frames, innermost first; printed at once, and nothing kept
	f, out = sys._getframe(1), []
	while f:
		out.append('%s %s %d' % (f.f_code.co_qualname, f.f_code.co_filename, f.f_lineno))
		f = f.f_back
	print('chain %s %s' % (name, ' | '.join(out)), flush=True)


def expect(name, objs):
	print('expect %s %d %d' % (name, sum(sys.getsizeof(o) for o in objs), 2 * len(objs)),
	      flush=True)


class Cache:
	def __init__(self):
		self.items = []

	def fill(self, n):
		for i in range(n):
			self.items.append(bytearray(10000)); i or chain('Cache.fill')


def helper(i):
	b = bytearray(7000); i or chain('helper')
	return b


def comprehension():
	return [helper(i) for i in range(100)]


def produce(n):
	for i in range(n):
		yield bytearray(5000); i or chain('produce')


def consume():
	return list(produce(100))


def worker(out):
	for i in range(100):
		out.append(bytearray(3000)); i or chain('worker')


def in_thread():
	out = []
	t = threading.Thread(target=worker, args=(out,), name='worker')
	t.start()
	t.join()
	return out


by_key_kept = []


def by_key(x):
	by_key_kept.append(bytearray(2000)); x or chain('by_key')
	return x


def sort_callback():
	return sorted(range(100), key=by_key)


def deleted_in_loop():
	held, gone = [], []
	for i in range(5):
		ns = {'chain': chain}
		src = 'def doomed_%d(out):\n\tfor j in range(10):\n\t\tout.append(bytearray(1500 + %d)); j or chain("doomed_%d")\n' % (i, i, i)
		exec(compile(src, 'doomed.py', 'exec'), ns)
		out = []
		ns['doomed_%d' % i](out)
		gone.append(weakref.ref(ns['doomed_%d' % i].__code__))
		held.append(out)
		del ns
	gc.collect()
	print(('ok' if all(g() is None for g in gone) else 'not ok') + ' code objects freed', flush=True)
	return held


libc = None


def leak_native(n):
	# blocks nothing points to: malloc through ctypes, the addresses dropped; on a
	# thread of its own, whose stack is gone by the dump. Blocks malloc'd and freed the
	# same way before (the thread's arena is set up with the first) and after (what
	# libffi and ctypes keep of the last calls' results) leave stale addresses to freed
	# memory only, not to a leaked block.
	for i in range(4):
		libc.free(libc.malloc(24))
	for i in range(n):
		libc.malloc(777)
	for i in range(4):
		libc.free(libc.malloc(24))


def leak_in_thread(n):
	global libc
	import ctypes
	libc = ctypes.CDLL(None)
	libc.malloc.restype = ctypes.c_size_t
	libc.malloc.argtypes = [ctypes.c_size_t]
	libc.free.argtypes = [ctypes.c_size_t]
	t = threading.Thread(target=leak_native, args=(n,), name='leaker')
	t.start()
	t.join()
	print('leaked leak_native %d %d' % (777 * n, n), flush=True)


cache = Cache()
cache.fill(200)
expect('Cache.fill', cache.items)
made = comprehension()
expect('helper', made)
expect('comprehension', made)
produced = consume()
expect('produce', produced)
threaded = in_thread()
expect('worker', threaded)
sorted_out = sort_callback()
expect('by_key', by_key_kept)
doomed = deleted_in_loop()
for i, out in enumerate(doomed):
	expect('doomed_%d' % i, out)
if len(sys.argv) > 2:
	leak_in_thread(int(sys.argv[2]))
gc.collect()
print('ready', flush=True)
if sys.argv[1] == 'crash':
	os.kill(os.getpid(), 11)
while not os.path.exists('go'):
	time.sleep(0.05)
cache.fill(100)
expect('Cache.fill', cache.items)
expect('produce', [])
del produced
gc.collect()
print('ready 2', flush=True)
while True:
	time.sleep(1)
