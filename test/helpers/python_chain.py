# Run by t1005 and t3014 under each interpreter: known Python call chains call C
# (build/progs/libpycapture.so) that captures the thread's Python frames; each case
# prints "ok NAME" when what C saw (names from the name record and from the live code
# object) is what sys._getframe says, else "not ok NAME" and both lists.
import ctypes, gc, os, signal, sys, threading, weakref

lib = ctypes.PyDLL(sys.argv[1])
nogil = ctypes.CDLL(sys.argv[1])	# the GIL released around the call
lib.pyc_init.restype = ctypes.c_uint
lib.pyc_name_record.argtypes = [ctypes.c_ulong, ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t]
lib.pyc_bench.restype = ctypes.c_double
buf = ctypes.create_string_buffer(1 << 16)
results = {}
kept = []		# (code address, offset, record address, truth) for t3014's core


def grab(fn=lib.pyc_capture):
	n = fn(buf, len(buf))			# this line is grab's line in the capture
	line = sys._getframe().f_lineno - 1
	f, truth = sys._getframe(), []
	while f:
		truth.append((f.f_code.co_qualname, f.f_code.co_filename,
			      line if not truth else f.f_lineno))
		f = f.f_back
	seen = [l.split('|') for l in buf.value.decode().splitlines()]
	assert len(seen) == n
	return seen, truth


def check(name, got, entries=None):
	seen, truth = got
	want = ['%s %s %d' % t for t in truth]
	rec = [s[0][len('record '):] for s in seen]
	code = [s[1][len('code '):] for s in seen]
	ok = rec == want and code == want
	if entries is not None:
		ok = ok and [s[2] == 'entry' for s in seen] == entries
	print(('ok ' if ok else 'not ok ') + name)
	if not ok:
		print('  want:', want, '\n  record:', rec, '\n  code:', code,
		      '\n  flags:', [s[2] for s in seen])
	for s, t in zip(seen, truth):
		c, off, r = s[3].split()
		kept.append((c, off, r, '%s %s %d' % t))


class Cache:
	def fill(self):
		return grab()

	def fill_nogil(self):
		return grab(nogil.pyc_capture)


def helper(i):
	return grab() if i == 1 else None


def comprehension():
	return [helper(i) for i in range(3)][1]


def gen():
	yield grab()


def by_key(x):
	if x == 2:
		by_key.got = grab()
	return x


def sort_callback():
	sorted([3, 2, 1], key=by_key)
	return by_key.got


def in_thread():
	out = []
	t = threading.Thread(target=lambda: out.append(grab()), name='worker')
	t.start()
	t.join()
	return out[0]


def deleted_in_loop():
	names, gone = [], []
	for i in range(5):
		ns = {'grab': grab}
		exec(compile('def doomed_%d():\n\treturn grab()\n' % i, 'doomed.py', 'exec'), ns)
		seen, truth = ns['doomed_%d' % i]()
		gone.append(weakref.ref(ns['doomed_%d' % i].__code__))
		c, off, r = seen[1][3].split()		# doomed_N's own frame
		names.append((int(r, 16), int(off), truth[1]))
		del ns, seen
	gc.collect()
	print(('ok ' if all(g() is None for g in gone) else 'not ok ') + 'code objects freed')
	for r, off, t in names:		# the code objects are gone: their records remain
		out = ctypes.create_string_buffer(2048)
		ok = lib.pyc_name_record(r, off, out, len(out))
		got = out.value.decode()
		print(('ok ' if ok and got == '%s %s %d' % t else 'not ok ') + 'deleted ' + got)
		kept.append(('0', str(off), hex(r), '%s %s %d' % t))


version = lib.pyc_init()
print('version %#x' % version)
if version:
	check('method', Cache().fill())
	check('method, GIL released', Cache().fill_nogil())
	check('comprehension', comprehension())
	check('generator', next(gen()))
	got = sort_callback()
	check('sorted key callback', got, [False, True, False, True])
	check('thread', in_thread())
	deleted_in_loop()
	if len(sys.argv) > 2 and sys.argv[2] == 'bench':
		def deep(n, remember):
			return deep(n - 1, remember) if n > 1 else lib.pyc_bench(1000000, remember)
		for depth in (1, 10, 30):
			for remember in (0, 1):
				print('bench depth=%d remember=%d: %.1f ns' % (depth, remember,
				      deep(depth, remember)))
	if len(sys.argv) > 2 and sys.argv[2] == 'core':
		with open('kept', 'w') as k:
			for c, off, r, t in kept:
				k.write('%s %s %s %s\n' % (c, off, r, t))
		print('ready', flush=True)
		if len(sys.argv) > 3:
			os.kill(os.getpid(), signal.SIGSEGV)
		signal.pause()
