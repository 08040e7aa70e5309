#!/usr/bin/env python3
"""Cut an ELF core down to its notes and the PT_LOAD segments that hold a v1 heapprof
magic: how test/data/v1/v1prog.core.gz was made (usage: shrink.py IN OUT)."""
import struct
import sys

MAGIC = struct.pack('<Q', 0xA3E1F7C95B0D6E4B)

def main(src, dst):
    data = open(src, 'rb').read()
    assert data[:4] == b'\x7fELF' and data[4] == 2 and data[5] == 1, 'a 64-bit LE core'
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    keep = []
    for i in range(phnum):
        ph = list(struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize))
        ptype, off, filesz = ph[0], ph[2], ph[5]
        body = data[off:off + filesz]
        if ptype == 4 or (ptype == 1 and MAGIC in body):
            keep.append((ph, body))
    out = bytearray(data[:64])
    struct.pack_into('<QQ', out, 0x20, 64, 0)           # e_phoff; no section headers
    struct.pack_into('<HHHHH', out, 0x36, phentsize, len(keep), 0, 0, 0)
    pos = 64 + phentsize * len(keep)
    table = bytearray()
    bodies = bytearray()
    for ph, body in keep:
        align = 4096 if ph[0] == 1 else 8
        pad = (-(pos + len(bodies))) % align
        bodies += b'\0' * pad
        ph[2] = pos + len(bodies)
        table += struct.pack('<IIQQQQQQ', *ph) + b'\0' * (phentsize - 56)
        bodies += body
    open(dst, 'wb').write(bytes(out) + bytes(table) + bytes(bodies))

main(sys.argv[1], sys.argv[2])
