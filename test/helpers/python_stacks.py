# Run by t1006 and t1007 under heapprof.so on each interpreter: known Python functions
# hold known bytearrays (their buffers are malloc'ed from inside the function), then
# "ready" and a wait for the core. Each line that allocates is marked "# at NAME", where
# the tests read its number from.
import sys, threading, time

held = []


class Cache:
	def __init__(self):
		self.items = []

	def fill(self, n):
		for i in range(n):
			self.items.append(bytearray(100000))	# at fill


def helper(i):
	return bytearray(50000)	# at helper


def gen(n):
	for i in range(n):
		yield bytearray(30000)	# at gen


def keyfn(x):
	held.append(bytearray(20000))	# at keyfn
	return -x


def worker():
	for i in range(25):
		held.append(bytearray(40000))	# at worker


# the same native stack under two Python callers: two sites, not one
def twin_a():
	return bytearray(7001)	# at twin_a


def twin_b():
	return bytearray(7001)	# at twin_b


c = Cache()
c.fill(20)	# at call_fill
held.append([helper(i) for i in range(20)])	# at comprehension
held.extend(gen(20))
held.append(sorted(range(20), key=keyfn))	# at sorted
t = threading.Thread(target=worker)
t.start()
t.join()
for i in range(100):
	held.append(twin_a())
	held.append(twin_b())
print("ready", flush=True)
time.sleep(120)
