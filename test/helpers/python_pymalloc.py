# Run by t3023 under heapprof.so with Python's default allocator: objects of known sizes,
# all of 512 bytes or less (pymalloc's), made by named functions into lists made
# elsewhere. For each function it prints what the objects it made hold by sys.getsizeof
# (what the interpreter asked its allocator for: the object with its GC header), as
# "expect NAME BYTES" or "expect NAME LOW HIGH", then "ready", and sleeps to be dumped.
# Usage: python_pymalloc.py MODE [N]   (N: 20000)
#   exact     make_slots (N objects of a __slots__ class) and make_bytes (N bytes objects
#             of 2 to 401 bytes); churn makes 3 N of each and frees them again (the
#             interpreter keeps its two list objects in a free list of its own); then
#             glibc's mallinfo2() as test/progs/mallinfo.h prints it
#   threads   4 threads, each make_slots in a function of its own, thread_0 .. thread_3
#   fork      the parent makes make_slots and forks; the child (printing "child PID",
#             then "ready") frees them, makes make_bytes and is the one to dump
#   toggle    with HEAPPROF_START=off: make_unnamed while tagging is off, then
#             tagging on through heapprof.so's API (include/heapprof.h: enable(1),
#             which has taken effect when it returns; HEAPPROF_TOGGLE_SIGNAL is
#             handled on heapprof's own thread, a moment later), make_slots, and the
#             unnamed objects freed while it runs
import os, sys, threading, time


class Slot:
    __slots__ = ('a', 'b')


def held(objs):
    return sum(sys.getsizeof(o) for o in objs)


def mallinfo():
    # glibc's figures, for --memory to match: "mallinfo2 arena=A uordblks=U fordblks=F
    # hblks=N hblkhd=H" (test/progs/mallinfo.h's line)
    import ctypes

    class Info(ctypes.Structure):
        _fields_ = [(f, ctypes.c_size_t) for f in ('arena', 'ordblks', 'smblks', 'hblks',
                    'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]
    get = ctypes.CDLL(None).mallinfo2
    get.restype = Info
    return lambda: get()


def expect(name, lo, hi=None):
    print('expect %s %d%s' % (name, lo, '' if hi is None else ' %d' % hi), flush=True)


def make_slots(out):
    for i in range(len(out)):
        out[i] = Slot()


def make_bytes(out):
    for i in range(len(out)):
        out[i] = bytes(2 + i % 400)


def churn(n):
    for _ in range(3):
        a, b = [None] * n, [None] * n
        make_slots(a)
        make_bytes(b)
        del a, b


def make_unnamed(out):
    for i in range(len(out)):
        out[i] = Slot()


def heapprof_enable(on):
    # include/heapprof.h's struct heapprof_api, up to enable
    import ctypes

    class Api(ctypes.Structure):
        _fields_ = [('size', ctypes.c_uint),
                    ('snapshot', ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)),
                    ('enable', ctypes.CFUNCTYPE(None, ctypes.c_int))]
    get = ctypes.CDLL(None).heapprof_api_v1
    get.restype = ctypes.POINTER(Api)
    get().contents.enable(on)


def thread_0(box): make_slots(box[0])
def thread_1(box): make_slots(box[1])
def thread_2(box): make_slots(box[2])
def thread_3(box): make_slots(box[3])


mode = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
s, b = [None] * n, [None] * n
if mode == 'exact':
    info = mallinfo()
    make_slots(s)
    make_bytes(b)
    churn(n)
    expect('make_slots', held(s))
    expect('make_bytes', held(b))
    expect('churn', 0, 2 * sys.getsizeof([]))	# its lists, in the interpreter's free list
    m = info()
    print('mallinfo2 arena=%d uordblks=%d fordblks=%d hblks=%d hblkhd=%d' %
          (m.arena, m.uordblks, m.fordblks, m.hblks, m.hblkhd), flush=True)
elif mode == 'threads':
    box = [[None] * n for _ in range(4)]
    ts = [threading.Thread(target=f, args=(box,)) for f in (thread_0, thread_1, thread_2, thread_3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i in range(4):
        expect('thread_%d' % i, held(box[i]))
elif mode == 'fork':
    make_slots(s)
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        sys.exit(0)
    s = [None] * n
    make_bytes(b)
    print('child %d' % os.getpid(), flush=True)
    expect('make_slots', 0)
    expect('make_bytes', held(b))
elif mode == 'toggle':
    make_unnamed(b)
    heapprof_enable(1)
    make_slots(s)
    b = None
    expect('make_unnamed', 0)
    expect('make_slots', held(s))
print('ready', flush=True)
time.sleep(600)
