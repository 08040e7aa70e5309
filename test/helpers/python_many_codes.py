# t1010: N distinct code objects named through pycapture.c, twice:
# prints "ok NAME RECORD" per function and pass, the record read back from the
# innermost frame (as the preload does with a sampled process's stacks).
import ctypes, sys

lib = ctypes.PyDLL(sys.argv[1])
n = int(sys.argv[2])
lib.pyc_init()
buf = ctypes.create_string_buffer(1 << 16)
ns = {"lib": lib, "buf": buf}
for i in range(n):
    exec("def code_%d():\n    lib.pyc_capture(buf, len(buf))\n    return buf.value\n" % i, ns)
for p in (1, 2):
    for i in range(n):
        first = ns["code_%d" % i]().decode().split("\n")[0]
        name = first.split("|")[0].split(" ")[1]
        rec = first.split("|")[-1].split(" ")[-1]
        print("pass%d %s %s" % (p, name, rec))
