#!/usr/bin/env python3
# What of heapprof's own memory is resident in a live process, by what it holds: the
# process's map table (include/heapprof_format.h, HEAPPROF_MAPS) read from
# /proc/PID/mem names each of heapprof's mappings (origin 2, HP2_OWN_*), and
# /proc/PID/pagemap says which of their pages are in RAM. Needs the rights to read both
# (root, or the process's owner with ptrace rights); it takes which pages are resident
# before it reads any memory. heapprof.so's own .data and .bss are counted too. x86_64
# and other 64-bit little-endian targets. t1013 imports it (resident()) into a process
# that reads its own figures.
#   python3 bench/own_rss.py PID
import struct
import sys

MAPS_MAGIC = 0xA3E14D4150535632
KINDS = ["not said", "stack records", "site records", "Python name records",
         "process, thread, region, module records", "timeline", "peak tables",
         "event rings", "slab tables", "per-thread state", "lookup directories",
         "map table", "replay memory", "unwind rule cache", "signal stacks",
         "snapshot buffers", "out-of-memory reserve"]
PAGE = 4096


def anon_rw(pid):
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if f[1].startswith("rw") and len(f) == 5:
            a, b = (int(x, 16) for x in f[0].split("-"))
            yield a, b


def find_table(pid, mem):
    magic = struct.pack("<Q", MAPS_MAGIC)
    for a, b in anon_rw(pid):
        try:
            mem.seek(a)
            data = mem.read(b - a)
        except OSError:
            continue
        at = data.find(magic)
        while at >= 0:
            if at % 8 == 0:
                w2, used = struct.unpack_from("<QQ", data, at + 16)
                if (w2 >> 32) & 0xFF == 3 and used <= (w2 & 0xFFFFFFFF):
                    return [struct.unpack_from("<QQQ", data, at + 64 + 24 * i)
                            for i in range(used)]
            at = data.find(magic, at + 1)
    sys.exit("own_rss: no map table in process %d (HEAPPROF_MAPS=0?)" % pid)


def present(pid, pagemap):
    """Resident pages of every anonymous mapping, read before anything reads the
    memory itself (reading an untouched page would map the zero page there)."""
    pages = set()
    for a, b in anon_rw(pid):
        pagemap.seek(a // PAGE * 8)
        words = pagemap.read((b - a) // PAGE * 8)
        for i, (w,) in enumerate(struct.iter_unpack("<Q", words)):
            if w >> 63:
                pages.add(a // PAGE + i)
    return pages


def own_bss(pid, pagemap):
    """Resident bytes of heapprof.so's writable pages: its .data and the .bss the loader
    maps anonymously just after it (static tables: chain heads, the bootstrap arena)."""
    maps = [line.split() for line in open("/proc/%d/maps" % pid)]
    n = 0
    for i, f in enumerate(maps):
        if len(f) == 6 and f[5].endswith("/heapprof.so") and f[1].startswith("rw"):
            ranges = [f[0]]
            if i + 1 < len(maps) and len(maps[i + 1]) == 5 and maps[i + 1][1].startswith("rw"):
                ranges.append(maps[i + 1][0])
            for r in ranges:
                a, b = (int(x, 16) for x in r.split("-"))
                pagemap.seek(a // PAGE * 8)
                words = pagemap.read((b - a) // PAGE * 8)
                n += PAGE * sum(1 for (w,) in struct.iter_unpack("<Q", words) if w >> 63)
    return n


def resident(pid):
    """{kind: resident bytes} of process pid's own heapprof memory"""
    with open("/proc/%d/mem" % pid, "rb") as mem, open("/proc/%d/pagemap" % pid, "rb") as pm:
        pages = present(pid, pm)
        by = {"heapprof.so's .data and .bss": own_bss(pid, pm)}
        for start, end, e2 in find_table(pid, mem):
            if (e2 >> 32) & 0xFF != 2:
                continue
            kind = e2 & 0xFFFFFFFF
            name = KINDS[kind] if kind < len(KINDS) else "kind %d" % kind
            n = sum(PAGE for p in range(start // PAGE, end // PAGE) if p in pages)
            by[name] = by.get(name, 0) + n
    return by


def main():
    by = resident(int(sys.argv[1]))
    for name, n in sorted(by.items(), key=lambda x: -x[1]):
        print("%-40s %8d KiB" % (name, n // 1024))
    print("%-40s %8d KiB" % ("heapprof's own, resident", sum(by.values()) // 1024))

if __name__ == "__main__":
    main()
