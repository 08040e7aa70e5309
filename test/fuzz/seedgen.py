#!/usr/bin/env python3
"""Seed helpers for test/fuzz/make-seeds.sh (layouts: include/heapprof_format.h).
  scan W BE ADDR IMAGE OUT        fuzz_scan's input: flags byte, address, image
  core W BE ADDR IMAGE OUT        a minimal ELF core: one note, the image as a PT_LOAD
  module W BE ADDR AT IMAGE OUT   IMAGE with a module record (an unloaded plugin) at AT
  maps W BE ADDR AT IMAGE OUT     IMAGE with a map table at AT: good entries and spoilt
  pyname OUT                      fuzz_scan's input: a Python name record at 0x7000
  cut CORE OUT                    a 64-bit LE core cut to its CORE notes (file list,
                                  auxv, registers), the pages holding heapprof words
                                  and those starting with an ELF header
  cut-untagged CORE OUT           the same of a core taken without heapprof: notes,
                                  the files' ELF headers, libc's written data and
                                  the brk heap's (keep_written)"""
import struct
import sys

M64 = (1 << 64) - 1
MUL = 0x9E3779B97F4A7C15
SEED2 = 0xBB67AE8584CAA73B
MODULE_MAGIC = 0xA3E14D4F44563253
MAPS_MAGIC = 0xA3E14D4150535632
PYCODE_MAGIC = 0xA3E15059434F4445
MACHINE = {(8, 0): 62, (4, 0): 3, (8, 1): 22, (4, 1): 8}  # x86_64, i386, s390x, mips


def mix(h, v):
    h = ((h ^ v) * MUL) & M64
    return h ^ (h >> 29)


def scan(w, be, addr, image, out):
    data = open(image, 'rb').read()
    flags = (1 if w == 4 else 0) | (2 if be else 0)
    open(out, 'wb').write(bytes([flags]) + struct.pack('<Q', addr) + data)


def core(w, be, addr, image, out):
    data = open(image, 'rb').read()
    e = '>' if be else '<'
    # a CORE note: NT_AUXV with AT_ENTRY and AT_NULL
    wf = 'I' if w == 4 else 'Q'
    auxv = struct.pack(e + wf * 4, 9, addr + 0x100, 0, 0)
    note = struct.pack(e + 'III', 5, len(auxv), 6) + b'CORE\0\0\0\0' + auxv
    if w == 8:
        ehsize, phsize = 64, 56
        eh = struct.pack(e + 'HHIQQQIHHHHHH', 4, MACHINE[(w, be)], 1, 0, ehsize, 0, 0,
                         ehsize, phsize, 2, 0, 0, 0)
        off = ehsize + 2 * phsize
        ph = struct.pack(e + 'IIQQQQQQ', 4, 0, off, 0, 0, len(note), 0, 4)
        ph += struct.pack(e + 'IIQQQQQQ', 1, 6, off + len(note), addr, 0, len(data),
                          len(data), 1)
    else:
        ehsize, phsize = 52, 32
        eh = struct.pack(e + 'HHIIIIIHHHHHH', 4, MACHINE[(w, be)], 1, 0, ehsize, 0, 0,
                         ehsize, phsize, 2, 0, 0, 0)
        off = ehsize + 2 * phsize
        ph = struct.pack(e + 'IIIIIIII', 4, off, 0, 0, len(note), 0, 0, 4)
        ph += struct.pack(e + 'IIIIIIII', 1, off + len(note), addr, 0, len(data),
                          len(data), 6, 1)
    ident = b'\x7fELF' + bytes([2 if w == 8 else 1, 2 if be else 1, 1, 0]) + b'\0' * 8
    open(out, 'wb').write(ident + eh + ph + note + data)


def module(w, be, addr, at, image, out):
    data = bytearray(open(image, 'rb').read())
    e = '>' if be else '<'
    bias = 0x7f0000000000 if w == 8 else 0x70000000
    build_id = bytes(range(0x10, 0x24))
    body = struct.pack(e + 'QQQQ', bias, bias + 0x1000, bias + 0x2000,
                       1 | len(build_id) << 8)
    body += build_id.ljust(24, b'\0') + b'/nonexistent/libgone.so'.ljust(312, b'\0')
    words = struct.unpack(e + '46Q', body)
    x = mix(SEED2, at)
    for v in words:
        x = mix(x, v)
    rec = struct.pack(e + 'QQ', MODULE_MAGIC, x ^ (x >> 31)) + body
    o = at - addr
    data[o:o + len(rec)] = rec
    open(out, 'wb').write(bytes(data))


def maps(w, be, addr, at, image, out):
    """A map table of room 8 holding 7 entries: stack 1's two mappings, heapprof's, and
    an overlapping, an empty, an unaligned and an unknown-origin one."""
    data = bytearray(open(image, 'rb').read())
    e = '>' if be else '<'
    w2 = 8 | 3 << 32
    x = mix(mix(SEED2, at), w2)
    head = struct.pack(e + '8Q', MAPS_MAGIC, x ^ (x >> 31), w2, 7, 2, 1, 0, 0)
    ents = [(0x600000, 0x601000, 1 | 1 << 32 | 2 << 40), (0x200000, 0x204000, 1 | 1 << 32),
            (0x203000, 0x205000, 1 | 1 << 32), (0x100000, 0x100000, 1 << 32),
            (0x0f0800, 0x0f2000, 1 << 32), (0x0e0000, 0x0e2000, 1 | 7 << 32),
            (0x0d0000, 0x0d1000, 2 << 32)]  # highest first
    rec = head + b''.join(struct.pack(e + 'QQQ', *t) for t in ents)
    o = at - addr
    data[o:o + len(rec)] = rec
    open(out, 'wb').write(bytes(data))


def pyname(out):
    """A Python name record at 0x7000 (docs/FORMAT.md's vector) as a scan seed."""
    at = 0x7000
    body = b'Cache.filla.py\xe8\x02'
    body += b'\0' * (-len(body) % 8)
    w = [0x7f0000123450, 0x030C01F0 | 3 << 32, 10 | 4 << 16 | 2 << 32, 0]
    x = mix(SEED2, at)
    for v in w + list(struct.unpack('<%dQ' % (len(body) // 8), body)):
        x = mix(x, v)
    rec = struct.pack('<6Q', PYCODE_MAGIC, x ^ (x >> 31), *w) + body
    open(out, 'wb').write(bytes([0]) + struct.pack('<Q', at) + rec)


def keep_heapprof(flags, chunk):
    """heapprof's words, and ELF headers (libdwfl lists modules from them)"""
    return chunk[:4] == b'\x7fELF' or any(chunk[k + 6:k + 8] == b'\xe1\xa3'
                                           for k in range(0, len(chunk), 8))


def keep_written(flags, chunk, path, vaddr):
    """a core taken without heapprof (x86_64's layout): the files' ELF headers, and the
    written pages that are not all zeros of libc (main_arena) and of the brk heap
    (anonymous, below the libraries), where the allocator's walk reads"""
    if chunk[:4] == b'\x7fELF':
        return path is not None
    return bool(flags & 2) and chunk.count(0) != len(chunk) and (
        (path is None and vaddr < 0x7f0000000000) or (path and b'/libc.so' in path))


def file_map(notes):
    """NT_FILE's mappings: (start, end, path)"""
    pos, out = 0, []
    while pos + 12 <= len(notes):
        nsz, dsz, typ = struct.unpack_from('<III', notes, pos)
        desc = pos + 12 + (nsz + 3 & ~3)
        if typ == 0x46494c45:
            count, _ = struct.unpack_from('<QQ', notes, desc)
            names = notes[desc + 16 + 24 * count:desc + dsz].split(b'\0')
            for i in range(count):
                start, end, _ = struct.unpack_from('<QQQ', notes, desc + 16 + 24 * i)
                out.append((start, end, names[i]))
        pos = desc + (dsz + 3 & ~3)
    return out


def cut(src, dst, keep=None):
    d = open(src, 'rb').read()
    assert d[:4] == b'\x7fELF' and d[4] == 2 and d[5] == 1, 'a 64-bit LE core'
    phoff, = struct.unpack_from('<Q', d, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', d, 0x36)
    notes, loads = b'', []
    for i in range(phnum):
        p_type, p_flags, off, vaddr, _, filesz, _, _ = struct.unpack_from(
            '<IIQQQQQQ', d, phoff + i * phentsize)
        body = d[off:off + filesz]
        if p_type == 4:
            pos = 0
            while pos + 12 <= len(body):
                nsz, dsz, typ = struct.unpack_from('<III', body, pos)
                size = 12 + (nsz + 3 & ~3) + (dsz + 3 & ~3)
                if body[pos + 12:pos + 16] == b'CORE' and typ in (1, 6, 0x46494c45):
                    notes += body[pos:pos + size]
                pos += size
    files = file_map(notes)
    for i in range(phnum):
        p_type, p_flags, off, vaddr, _, filesz, _, _ = struct.unpack_from(
            '<IIQQQQQQ', d, phoff + i * phentsize)
        body = d[off:off + filesz]
        if p_type == 1:
            path = next((f for s, e, f in files if s <= vaddr < e), None)
            for page in range(0, len(body), 4096):
                chunk = body[page:page + 4096]
                if (keep(p_flags, chunk, path, vaddr + page) if keep
                        else keep_heapprof(p_flags, chunk)):
                    loads.append((p_flags, vaddr + page, chunk))
    n = 1 + len(loads)
    out = bytearray(d[:64])
    struct.pack_into('<QQ', out, 0x20, 64, 0)
    struct.pack_into('<HHHHH', out, 0x36, 56, n, 0, 0, 0)
    pos = 64 + 56 * n
    table = struct.pack('<IIQQQQQQ', 4, 0, pos, 0, 0, len(notes), 0, 4)
    pos += len(notes)
    for flags, vaddr, chunk in loads:
        table += struct.pack('<IIQQQQQQ', 1, flags, pos, vaddr, 0, len(chunk), len(chunk), 4096)
        pos += len(chunk)
    open(dst, 'wb').write(bytes(out) + table + notes + b''.join(c for _, _, c in loads))


def main(a):
    num = lambda s: int(s, 0)
    if a[0] == 'scan':
        scan(num(a[1]), num(a[2]), num(a[3]), a[4], a[5])
    elif a[0] == 'core':
        core(num(a[1]), num(a[2]), num(a[3]), a[4], a[5])
    elif a[0] == 'module':
        module(num(a[1]), num(a[2]), num(a[3]), num(a[4]), a[5], a[6])
    elif a[0] == 'maps':
        maps(num(a[1]), num(a[2]), num(a[3]), num(a[4]), a[5], a[6])
    elif a[0] == 'pyname':
        pyname(a[1])
    elif a[0] == 'cut':
        cut(a[1], a[2])
    elif a[0] == 'cut-untagged':
        cut(a[1], a[2], keep_written)
    else:
        sys.exit(__doc__)


main(sys.argv[1:])
