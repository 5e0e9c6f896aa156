# SPDX-License-Identifier: BSD-3-Clause
"""Build pcapng files block by block, in either byte order, right or deliberately wrong.

Used by rocedump_hostile.py and test/fuzz/gen_corpus.py. Every builder returns bytes; a
block's lengths are right unless told otherwise (length=, trailer=).
"""
import struct

SHB, IDB, OPB, SPB, NRB, ISB, EPB, DSB = 0x0A0D0D0A, 1, 2, 3, 4, 5, 6, 0x0A
CUSTOM = 0x00000BAD


def opt(code, value, e='<'):
    pad = (-len(value)) % 4
    return struct.pack(e + 'HH', code, len(value)) + value + b'\0' * pad


def opts(items, e='<'):
    """Options from (code, bytes) pairs, with the end marker; empty when there are none."""
    if not items:
        return b''
    return b''.join(opt(c, v, e) for c, v in items) + struct.pack(e + 'HH', 0, 0)


def block(btype, body, e='<', length=None, trailer=None):
    n = 12 + len(body) if length is None else length
    t = n if trailer is None else trailer
    return struct.pack(e + 'II', btype, n) + body + struct.pack(e + 'I', t)


def shb(e='<', major=1, minor=0, options=(), **kw):
    body = struct.pack(e + 'IHHq', 0x1A2B3C4D, major, minor, -1) + opts(options, e)
    return block(SHB, body, e, **kw)


def idb(e='<', linktype=1, snaplen=0, name=None, tsresol=None, tsoffset=None, **kw):
    items = []
    if name is not None:
        items.append((2, name.encode()))
    if tsresol is not None:
        items.append((9, bytes([tsresol])))
    if tsoffset is not None:
        items.append((14, struct.pack(e + 'q', tsoffset)))
    return block(IDB, struct.pack(e + 'HHI', linktype, 0, snaplen) + opts(items, e), e, **kw)


def epb(data, e='<', iface=0, ts=0, origlen=None, caplen=None, flags=None, **kw):
    cl = len(data) if caplen is None else caplen
    ol = len(data) if origlen is None else origlen
    body = struct.pack(e + 'IIIII', iface, ts >> 32, ts & 0xFFFFFFFF, cl, ol)
    body += data + b'\0' * ((-len(data)) % 4)
    body += opts([(2, struct.pack(e + 'I', flags))] if flags is not None else [], e)
    return block(EPB, body, e, **kw)


def opb(data, e='<', iface=0, ts=0, origlen=None, **kw):
    ol = len(data) if origlen is None else origlen
    body = struct.pack(e + 'HHIIII', iface, 0, ts >> 32, ts & 0xFFFFFFFF, len(data), ol)
    body += data + b'\0' * ((-len(data)) % 4)
    return block(OPB, body, e, **kw)


def spb(data, e='<', origlen=None, **kw):
    ol = len(data) if origlen is None else origlen
    body = struct.pack(e + 'I', ol) + data + b'\0' * ((-len(data)) % 4)
    return block(SPB, body, e, **kw)


def isb(e='<', iface=0, **kw):
    return block(ISB, struct.pack(e + 'III', iface, 0, 0) + opts([(4, struct.pack(e + 'Q', 7))],
                                                                  e), e, **kw)


def nrb(e='<', **kw):
    rec = struct.pack(e + 'HH', 1, 12) + bytes([10, 0, 0, 1]) + b'peer\0\0\0\0'
    return block(NRB, rec + struct.pack(e + 'HH', 0, 0), e, **kw)


def custom(e='<', **kw):
    return block(CUSTOM, struct.pack(e + 'I', 32473) + b'rocedp test\0', e, **kw)


def simple_file(frames, e='<', flags=None, extra=True):
    """A section with one Ethernet interface (ns timestamps), unknown blocks in between when
    extra, one Enhanced Packet Block per frame (timestamps 1, 2, ... s)."""
    out = shb(e) + (nrb(e) if extra else b'') + idb(e, name='dpdk:0', tsresol=9)
    for i, f in enumerate(frames):
        out += epb(f, e, ts=(i + 1) * 10**9, flags=flags)
        if extra and i == 0:
            out += custom(e) + isb(e)
    return out
