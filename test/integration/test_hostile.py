#!/usr/bin/python3
"""Hostile peer: roced in a network namespace on net_af_packet; in a second namespace, at the
other end of the veth, this test plays the remote end of QPs that roced believes connected to
a peer QP that does not exist. It writes raw Ethernet frames built with scapy (ICRC computed
as IBA annex A17.3.3 says, checked against the reference captures) and reads roced's answers
on the same raw socket.

Every class of hostile input is sent against a valid baseline: a well-formed request is shown
executed and acknowledged first (or right after, at the same PSN), so a negative result means
the check worked, not that nothing arrives. After each case:
  (1) the daemon still serves: a new `rocectl status`,
  (2) the named counter moved (`counters`, daemon-wide and the QP's),
  (3) the QP is in the state IBA gives (`qp.show`),
  (4) every MR's bytes changed only where a valid request allowed it: `mr.digest` against a
      model of every MR kept here, `mr.dump` to locate a difference.
In-order processing is made visible with a barrier: two ICMP echoes in turn; once the second
reply is back, roced has answered everything sent before the first.

Prints a table (class, case, expectation, result) and `N passed, N failed`; exit status 1 on
any failure, 77 (skipped) without root, ip netns or scapy.

usage: test_hostile.py BUILD_DIR
"""
import ctypes
import errno
import json
import logging
import os
import random
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Daemon, Failure  # noqa: E402

try:
    logging.getLogger('scapy.runtime').setLevel(logging.ERROR)
    from scapy.all import (ARP, ICMP, IP, UDP, Dot1Q, Ether, ICMPv6ND_NA, ICMPv6ND_NS,  # noqa
                           ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, IPv6, Raw, raw, rdpcap)
    from scapy.contrib.roce import BTH
    import scapy.config
    scapy.config.conf.verb = 0
except ImportError as e:  # pragma: no cover
    print(f"hostile: scapy unavailable ({e}): skipped")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.normpath(os.path.join(HERE, '../../../shared/captures'))
TAG = f"rh{os.getpid() % 100000}"
NS_A, NS_B = f'{TAG}a', f'{TAG}b'
IF_A, IF_B = f'{TAG}x', f'{TAG}y'
IP_A, IP_B, IP_X = '10.9.0.1', '10.9.0.2', '10.9.0.77'
IP6_A = 'fd00:9::1'
MAC_EVIL = '02:66:66:66:66:66'
MTU = 1024
SEED = 0x5EED
M64 = (1 << 64) - 1

# BTH opcodes (IBA table 38) and AETH syndromes.
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM = range(6)
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM = range(6, 12)
READ_REQ, RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY, ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD = \
    range(12, 21)
SEND_ONLY_INV = 0x17
UC_WRITE_ONLY, UD_SEND_ONLY, CNP = 0x2a, 0x64, 0x81
SYN_ACK = 0x1f
SYN_RNR = 0x20
NAK_SEQ, NAK_INV, NAK_ACC, NAK_OP = 0x60, 0x61, 0x62, 0x63
RNR_TIMER = 12

# Selective-repeat opcodes (doc/selective-repeat.md): headers after the BTH, in wire order.
SR_OPS = {0xc0: ['sreth'], 0xc1: ['sreth'], 0xc2: ['sreth'], 0xc3: ['imm', 'sreth'],
          0xc4: ['sreth'], 0xc5: ['imm', 'sreth'], 0xc6: ['reth', 'sreth'],
          0xc7: ['reth', 'sreth'], 0xc8: ['reth', 'sreth'], 0xc9: ['reth', 'imm', 'sreth'],
          0xca: ['reth', 'sreth'], 0xcb: ['reth', 'imm', 'sreth'], 0xd1: ['aeth'],
          0xd6: ['ieth', 'sreth'], 0xd7: ['ieth', 'sreth']}


def sh(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def psn_add(p, n):
    return (p + n) & 0xffffff


def u16(b, o):
    return struct.unpack_from('!H', b, o)[0]


def u32(b, o):
    return struct.unpack_from('!I', b, o)[0]


def u64(b, o):
    return struct.unpack_from('!Q', b, o)[0]


def mac_str(b):
    return ':'.join(f'{x:02x}' for x in b)


def reth(va, rkey, length):
    return struct.pack('!QII', va & M64, rkey & 0xffffffff, length & 0xffffffff)


def atmeth(va, rkey, swap_add, compare=0):
    return struct.pack('!QIQQ', va & M64, rkey & 0xffffffff, swap_add & M64, compare & M64)


def aeth(syn, msn=0):
    return struct.pack('!I', (syn & 0xff) << 24 | (msn & 0xffffff))


def imm(v):
    return struct.pack('!I', v & 0xffffffff)


def ieth(rkey):
    return struct.pack('!I', rkey & 0xffffffff)


def deth(qkey, src_qp):
    return struct.pack('!II', qkey, src_qp & 0xffffff)


def sreth(rsn, off):
    return struct.pack('!II', rsn & 0xffffff, off)


def icrc_of(l3):
    """ICRC of an IPv4/IPv6 RoCEv2 packet (IP header to ICRC): annex A17.3.3, as
    ../shared/rxe-vm/icrc-check.py computes it."""
    b = bytearray(l3)
    if b[0] >> 4 == 4:
        u = (b[0] & 0xf) * 4
        b[1] = 0xff
        b[8] = 0xff
        b[10:12] = b'\xff\xff'
    else:
        b[0] |= 0x0f
        b[1:4] = b'\xff\xff\xff'
        b[7] = 0xff
        u = 40
    b[u + 6:u + 8] = b'\xff\xff'
    b[u + 12] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(b[:-4])) & 0xffffffff


def roce_frame(dst_mac, src_mac, src_ip, dst_ip, op, qpn, psn, ext=b'', payload=b'', *,
               ackreq=1, se=0, sport=0xc0de, dport=4791, vlans=(), ttl=64, tos=0, pkey=0xffff,
               tver=0, bad_icrc=False, ip_flags='DF', frag=0, ip_options=None, udp_len=None):
    pad = (-len(payload)) % 4
    pkt = Ether(dst=dst_mac, src=src_mac)
    for v in vlans:
        pkt = pkt / Dot1Q(vlan=v)
    ip = IP(src=src_ip, dst=dst_ip, ttl=ttl, tos=tos, flags=ip_flags, frag=frag, id=0)
    if ip_options is not None:
        ip.options = ip_options
    pkt = pkt / ip / UDP(sport=sport, dport=dport, chksum=0, len=udp_len) / \
        BTH(opcode=op, solicited=se, padcount=pad, version=tver, pkey=pkey, dqpn=qpn,
            ackreq=ackreq, psn=psn & 0xffffff, icrc=0) / Raw(ext + payload + bytes(pad))
    b = bytearray(raw(pkt))
    crc = icrc_of(bytes(b[14 + 4 * len(vlans):]))
    b[-4:] = struct.pack('<I', crc ^ (0xdeadbeef if bad_icrc else 0))
    return bytes(b)


def parse(f):
    """What a frame from roced is: a dict with 'kind' and the fields the checks use."""
    r = {'kind': 'other', 'dst': mac_str(f[0:6]), 'src': mac_str(f[6:12]), 'len': len(f)}
    if len(f) < 14:
        return r
    et, off = u16(f, 12), 14
    while et in (0x8100, 0x88a8) and len(f) >= off + 4:
        et, off = u16(f, off + 2), off + 4
    try:
        if et == 0x0806:
            r.update(kind='arp', op=u16(f, off + 6), sha=mac_str(f[off + 8:off + 14]),
                     spa=socket.inet_ntoa(f[off + 14:off + 18]),
                     tha=mac_str(f[off + 18:off + 24]),
                     tpa=socket.inet_ntoa(f[off + 24:off + 28]))
        elif et == 0x0800:
            ihl, tot, proto = (f[off] & 15) * 4, u16(f, off + 2), f[off + 9]
            r.update(src_ip=socket.inet_ntoa(f[off + 12:off + 16]),
                     dst_ip=socket.inet_ntoa(f[off + 16:off + 20]))
            l4 = off + ihl
            if proto == 1:
                r.update(kind='icmp', type=f[l4], id=u16(f, l4 + 4), seq=u16(f, l4 + 6))
            elif proto == 17 and u16(f, l4 + 2) == 4791:
                parse_roce(r, f, off, tot, l4)
            elif proto == 17:
                r.update(kind='udp', dport=u16(f, l4 + 2))
        elif et == 0x86dd:
            nh = f[off + 6]
            r.update(src_ip=socket.inet_ntop(socket.AF_INET6, f[off + 8:off + 24]))
            if nh == 58:
                t = f[off + 40]
                r.update(kind='icmp6', type=t)
                if t in (135, 136):
                    r['target'] = socket.inet_ntop(socket.AF_INET6, f[off + 48:off + 64])
    except (struct.error, IndexError, OSError):
        r['kind'] = 'garbled'
    return r


def parse_roce(r, f, off, tot, l4):
    bth = l4 + 8
    op, pad = f[bth], (f[bth + 1] >> 4) & 3
    end = off + tot - 4
    r.update(kind='roce', op=op, qpn=u32(f, bth + 4) & 0xffffff, ackreq=f[bth + 8] >> 7,
             psn=u32(f, bth + 8) & 0xffffff, sport=u16(f, l4),
             icrc_ok=struct.unpack_from('<I', f, end)[0] == icrc_of(f[off:off + tot]))
    h = bth + 12
    if op in (RR_FIRST, RR_LAST, RR_ONLY, ACK, ATOMIC_ACK):
        r.update(syn=f[h], msn=u32(f, h) & 0xffffff)
        h += 4
    if op == ATOMIC_ACK:
        r['orig'] = u64(f, h)
        h += 8
    if op in (WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ):
        r.update(va=u64(f, h), rkey=u32(f, h + 8), dma_len=u32(f, h + 12))
        h += 16
    if op in (CMP_SWAP, FETCH_ADD):
        h += 28
    if op in (SEND_LAST_IMM, SEND_ONLY_IMM, WRITE_LAST_IMM, WRITE_ONLY_IMM):
        h += 4
    r['payload'] = bytes(f[h:end - pad])


# ---- namespaces and the raw socket in the peer's namespace ----

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def in_netns(ns, fn):
    """Run fn() with this thread in network namespace ns; sockets made there stay there."""
    own = os.open('/proc/self/ns/net', os.O_RDONLY)
    tgt = os.open(f'/run/netns/{ns}', os.O_RDONLY)
    try:
        if _libc.setns(tgt, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f'setns {ns}')
        try:
            return fn()
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), 'setns back')
    finally:
        os.close(own)
        os.close(tgt)


class Wire:
    """A raw socket on the peer's end of the veth (frames roced sends, none of our own), and
    a UDP socket on 4791 there so the peer's kernel answers roced with no ICMP unreachable."""

    def __init__(self, ns, ifname):
        def make():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
            s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)      # SO_RCVBUFFORCE
            s.setsockopt(socket.SOL_SOCKET, 32, 4 << 20)       # SO_SNDBUFFORCE
            s.bind((ifname, 0))
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.bind(('0.0.0.0', 4791))
            return s, u
        self.s, self.udp = in_netns(ns, make)
        self.s.setblocking(False)
        self.udp.setblocking(False)
        self.pending = []

    def close(self):
        self.s.close()
        self.udp.close()

    def send(self, frames, pace=0):
        for i, f in enumerate(frames):
            while True:
                try:
                    self.s.send(f)
                    break
                except OSError as e:
                    if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                        raise
                    self.pump(0.001)
            if pace and i % pace == pace - 1:
                self.pump(0.002)

    def pump(self, timeout):
        """Read what arrived (waiting up to timeout for the first frame)."""
        n = 0
        if select.select([self.s], [], [], timeout)[0]:
            while True:
                try:
                    f, addr = self.s.recvfrom(65536)
                except BlockingIOError:
                    break
                if addr[2] == socket.PACKET_OUTGOING:
                    continue
                self.pending.append(parse(f))
                n += 1
        try:
            while True:
                self.udp.recv(65536)
        except BlockingIOError:
            pass
        return n

    def take(self):
        out, self.pending = self.pending, []
        return out

    def wait(self, pred, timeout):
        end = time.time() + timeout
        while not pred(self.pending):
            left = end - time.time()
            if left <= 0:
                return False
            self.pump(min(left, 0.05))
        return True


# ---- the control side: one rocectl shell kept open, plus a fresh rocectl for liveness ----

# What our QPs let the peer (the injector) do: everything, so each case tests its own check.
QP_RIGHTS = ['remote_write', 'remote_read', 'remote_atomic']


class Ctl:
    """rocectl's prompt over a pipe (one JSON reply line per command, --json)."""

    def __init__(self, build, sock, errlog):
        self.build, self.sock = build, sock
        self.err = open(errlog, 'w')
        self.p = subprocess.Popen([os.path.join(build, 'app/rocectl'), '-s', sock, '--json'],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, text=True, bufsize=1)

    def call(self, cmd, ok=True, **args):
        line = f"call {cmd} '{json.dumps(args)}'\n"
        self.p.stdin.write(line)
        self.p.stdin.flush()
        if not select.select([self.p.stdout], [], [], 15)[0]:
            raise Failure(f'rocectl: no reply to {cmd} {args}')
        out = self.p.stdout.readline()
        if not out:
            raise Failure(f'rocectl exited ({self.p.poll()}) at {cmd}')
        rep = json.loads(out)
        if ok and not rep.get('ok'):
            raise Failure(f'{cmd} {args}: {rep.get("error")}')
        return rep

    def status_fresh(self):
        r = subprocess.run([os.path.join(self.build, 'app/rocectl'), '-s', self.sock, '--json',
                            'status'], capture_output=True, text=True, timeout=15)
        return r.returncode == 0 and json.loads(r.stdout).get('ok') is True, r

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
                self.p.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()
        self.err.close()


# ---- results ----

class Row:
    def __init__(self, cls, case, expect):
        self.cls, self.case, self.expect, self.fails = cls, case, expect, []

    def check(self, cond, what):
        if not cond:
            self.fails.append(what)
        return cond

    def fail(self, what):
        self.fails.append(what)


class PeerQP:
    """One of roced's QPs as its (fake) peer sees it: frames to it, PSN it expects."""

    def __init__(self, h, qp, fake, epsn):
        self.h, self.qpn, self.spsn, self.fake, self.epsn = h, qp['qpn'], qp['psn'], fake, epsn
        self.sport = 0xc000 | (fake & 0x3fff)

    def adv(self, n=1):
        self.epsn = psn_add(self.epsn, n)

    def frame(self, op, ext=b'', payload=b'', psn=None, qpn=None, **kw):
        a = dict(dst_mac=self.h.mac_a, src_mac=self.h.mac_b, src_ip=IP_B, dst_ip=IP_A,
                 sport=self.sport)
        for k in list(a):
            if k in kw:
                a[k] = kw.pop(k)
        return roce_frame(a['dst_mac'], a['src_mac'], a['src_ip'], a['dst_ip'], op,
                          self.qpn if qpn is None else qpn,
                          self.epsn if psn is None else psn, ext, payload, sport=a['sport'],
                          **kw)

    def write(self, mr, off, data, va=None, rkey=None, rlen=None, op=WRITE_ONLY, **kw):
        va = mr['iova'] + off if va is None else va
        ext = reth(va, mr['rkey'] if rkey is None else rkey, len(data) if rlen is None else rlen)
        if op in (WRITE_ONLY_IMM, WRITE_LAST_IMM):
            ext += imm(0x1234)
        return self.frame(op, ext, data, **kw)

    def write_msg(self, mr, off, data, psn=None):
        """A multi-packet WRITE: FIRST (RETH), MIDDLE..., LAST from psn (default epsn)."""
        psn = self.epsn if psn is None else psn
        chunks = [data[i:i + MTU] for i in range(0, len(data), MTU)]
        out = []
        for i, c in enumerate(chunks):
            p = psn_add(psn, i)
            if i == 0:
                out.append(self.write(mr, off, c, rlen=len(data), op=WRITE_FIRST, psn=p,
                                      ackreq=0))
            else:
                last = i == len(chunks) - 1
                out.append(self.frame(WRITE_LAST if last else WRITE_MIDDLE, b'', c, psn=p,
                                      ackreq=int(last)))
        return out

    def read(self, mr, off, n, va=None, rkey=None, **kw):
        va = mr['iova'] + off if va is None else va
        return self.frame(READ_REQ, reth(va, mr['rkey'] if rkey is None else rkey, n), **kw)

    def atomic(self, op, mr, off, swap_add, compare=0, va=None, rkey=None, **kw):
        va = mr['iova'] + off if va is None else va
        return self.frame(op, atmeth(va, mr['rkey'] if rkey is None else rkey, swap_add,
                                     compare), **kw)

    def send(self, data, op=SEND_ONLY, **kw):
        return self.frame(op, b'', data, **kw)

    def mine(self, resps):
        return [r for r in resps if r['kind'] == 'roce' and r['qpn'] == self.fake]


def syn_name(s):
    return {SYN_ACK: 'ACK', NAK_SEQ: 'NAK-seq', NAK_INV: 'NAK-inv', NAK_ACC: 'NAK-acc',
            NAK_OP: 'NAK-op'}.get(s, f'RNR({s & 0x1f})' if s >> 5 == 1 else f'syn 0x{s:02x}')


def desc(resps):
    out = []
    for r in resps[:8]:
        if r['kind'] == 'roce':
            s = f" {syn_name(r['syn'])}" if 'syn' in r else ''
            out.append(f"op 0x{r['op']:02x}{s} psn 0x{r['psn']:06x}")
        else:
            out.append(r['kind'])
    return '[' + ', '.join(out) + (' ...' if len(resps) > 8 else '') + ']'


class Hostile:
    def __init__(self, build):
        self.build = build
        self.rows = []
        self.rng = random.Random(SEED)
        self.tmp = tempfile.mkdtemp(prefix='rocedp-hostile-')
        self.nets, self.d, self.ctl, self.wire = [], None, None, None
        self.next_fake, self.ping_seq, self.slot_off = 0x00b000, 0, 0
        self.mrs, self.model, self.qps = {}, {}, []

    # ---- setup and teardown ----

    def setup(self):
        for ns in (NS_A, NS_B):
            sh('ip', 'netns', 'add', ns)
            self.nets.append(ns)
            sh('ip', '-n', ns, 'link', 'set', 'lo', 'up')
            # The peer's kernel sends no IPv6 of its own: RS, DAD and MLD would be noise.
            sh('ip', 'netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1',
               check=False)
            sh('ip', 'netns', 'exec', ns, 'sysctl', '-qw',
               'net.ipv6.conf.default.disable_ipv6=1', check=False)
        sh('ip', 'link', 'add', IF_A, 'netns', NS_A, 'type', 'veth', 'peer', 'name', IF_B,
           'netns', NS_B)
        for ns, i in ((NS_A, IF_A), (NS_B, IF_B)):
            sh('ip', 'netns', 'exec', ns, 'ethtool', '-K', i, 'tx', 'off', 'rx', 'off',
               check=False)
            sh('ip', '-n', ns, 'link', 'set', i, 'up')
        sh('ip', '-n', NS_B, 'addr', 'add', f'{IP_B}/24', 'dev', IF_B)
        self.mac_b = json.loads(sh('ip', '-n', NS_B, '-j', 'link', 'show', IF_B).stdout)[0][
            'address'].lower()
        self.wire = Wire(NS_B, IF_B)
        self.d = Daemon(self.build, self.tmp, 'hostile',
                        ['-l', '0,1', f'--vdev=net_af_packet0,iface={IF_A}'],
                        ['--port', 'net_af_packet0', '--ip', f'{IP_A}/24', '--ip6',
                         f'{IP6_A}/64'], NS_A)
        self.d.wait_ready()
        self.ctl = Ctl(self.build, self.d.sock, os.path.join(self.tmp, 'rocectl.err'))
        port = self.ctl.call('port.show')['ports'][0]
        self.mac_a = port['mac'].lower()
        self.workers = self.ctl.call('status')['workers']
        rw = ['local_write', 'remote_write', 'remote_read']
        for name, size, access, pattern in (
                ('W', 65536, rw, 'random:11'),
                ('A', 4096, rw + ['remote_atomic'], 'random:12'),
                ('RO', 4096, ['remote_read'], 'random:13'),
                ('L', 16384, ['local_write'], 'random:14')):
            mr = self.ctl.call('mr.reg', size=size, access=access)['mr']
            self.ctl.call('mr.fill', rkey=mr['rkey'], pattern=pattern)
            mr['name'] = name
            self.mrs[name] = mr
            self.model[name] = self.read_mr(name)
            if len(set(self.model[name])) < 200:
                raise Failure(f'MR {name}: mr.fill {pattern} left {self.model[name][:16].hex()}')
        self.barrier()

    def teardown(self):
        """Each step on its own: one failing must not leave the others' leftovers."""
        rc = None
        for step in ('ctl', 'd', 'wire'):
            obj = getattr(self, step)
            if obj is None:
                continue
            try:
                if step == 'd':
                    rc = obj.stop()
                else:
                    obj.close()
            except Exception as e:
                print(f'hostile: teardown {step}: {e}', flush=True)
                if step == 'd' and obj.proc.poll() is None:
                    os.killpg(obj.proc.pid, signal.SIGKILL)
        for ns in self.nets:
            sh('ip', 'netns', 'del', ns, check=False)
        return rc

    # ---- control helpers ----

    def read_mr(self, name):
        mr, out = self.mrs[name], bytearray()
        while len(out) < mr['length']:
            n = min(4096, mr['length'] - len(out))
            out += bytes.fromhex(self.ctl.call('mr.dump', rkey=mr['rkey'], offset=len(out),
                                               length=n)['hex'])
        return out

    def new_qp(self, epsn=None, **opts):
        qp = self.ctl.call('qp.create', access=QP_RIGHTS)['qp']
        self.next_fake += 1
        fake = self.next_fake
        epsn = self.rng.randrange(0x10, 0xff0000) if epsn is None else epsn
        args = {'qpn': qp['qpn'], 'remote': {'qpn': fake, 'psn': epsn, 'ip': IP_B,
                                             'mac': self.mac_b},
                'mtu': MTU, 'timeout': 0}
        args.update(opts)
        self.ctl.call('qp.connect', **args)
        q = PeerQP(self, qp, fake, epsn)
        self.qps.append(q.qpn)
        return q

    def destroy_qps(self):
        for qpn in self.qps:
            self.ctl.call('qp.destroy', ok=False, qpn=qpn)
        self.qps = []

    def state(self, q):
        r = self.ctl.call('qp.show', ok=False, qpn=q if isinstance(q, int) else q.qpn)
        return r['qps'][0]['state'] if r.get('ok') else f"gone ({r.get('error')})"

    def snap(self, q=None):
        c = dict(self.ctl.call('counters')['counters'])
        if q is not None:
            for k, v in self.ctl.call('counters', qpn=q.qpn)['counters'].items():
                c['qp.' + k] = v
        return c

    def post_recv(self, q, off, length, count=1):
        self.ctl.call('post.recv', qpn=q.qpn, lkey=self.mrs['L']['rkey'], offset=off,
                      length=length, count=count)

    def poll(self, qpn, n=1, timeout=2.0):
        got, end = [], time.time() + timeout
        while True:
            got += self.ctl.call('cq.poll', qpn=qpn)['wc']
            if len(got) >= n or time.time() > end:
                return got
            time.sleep(0.01)

    def slot(self, size=256):
        """A fresh region of W for one case."""
        if self.slot_off + size > self.mrs['W']['length']:
            self.slot_off = 0
        off, self.slot_off = self.slot_off, self.slot_off + size
        return off

    def data(self, n):
        return bytes(self.rng.getrandbits(8) for _ in range(n))

    # ---- wire helpers ----

    def ping_frame(self, seq, ident=0x4242, dst_mac=None):
        return raw(Ether(dst=dst_mac or self.mac_a, src=self.mac_b) /
                   IP(src=IP_B, dst=IP_A) / ICMP(type=8, id=ident, seq=seq) / Raw(b'hostile'))

    def barrier(self, timeout=5.0):
        """Two echoes in turn: when the second is answered, roced has handled (and sent the
        responses to) everything before the first. Returns what came, echo replies aside."""
        for _ in range(2):
            self.ping_seq = (self.ping_seq + 1) & 0xffff
            seq = self.ping_seq
            self.wire.send([self.ping_frame(seq)])
            if not self.wire.wait(lambda p: any(r['kind'] == 'icmp' and r['type'] == 0 and
                                                r['id'] == 0x4242 and r['seq'] == seq
                                                for r in p), timeout):
                raise Failure('roced did not answer the barrier ping')
        return [r for r in self.wire.take()
                if not (r['kind'] == 'icmp' and r.get('id') == 0x4242)]

    def xchg(self, frames, pace=0):
        self.wire.send(frames, pace)
        return self.barrier()

    # ---- checks ----

    @staticmethod
    def moved(before, after):
        """The counters that moved, as evidence (traffic totals left out)."""
        skip = ('PORT_', 'RPC', 'NET_PKTS', 'NET_ECHO', 'NET_NOT_NET', 'RX_ICMP', 'qp.TX_',
                'TX_', 'qp.RX_BYTES', 'RX_BYTES')
        d = {k: after[k] - before.get(k, 0) for k in after
             if isinstance(after[k], int) and after[k] != before.get(k, 0) and
             not k.startswith(skip)}
        return ', '.join(f'{k} {v:+d}' for k, v in sorted(d.items())) or 'none'

    def counters(self, row, before, after, specs):
        bad = False
        for key, op, n in specs:
            if key not in after:
                bad = row.fail(f'counter {key} does not exist') or True
                continue
            d = after[key] - before.get(key, 0)
            ok = d == n if op == '==' else d >= n
            bad |= not row.check(ok, f'{key} moved by {d}, expected {op} {n}')
        if bad:
            row.fail(f'counters that moved: {self.moved(before, after)}')

    def expect_state(self, row, q, want):
        s = self.state(q)
        row.check(s == want, f'QP 0x{q.qpn:x} state {s}, IBA: {want}')

    def verify_mrs(self, row, allowed=None):
        """Every MR equals its model except inside allowed {name: [(off, len)]}; the model
        then follows what is there, so one failure does not spill into the next cases."""
        allowed = allowed or {}
        for name, mr in self.mrs.items():
            dig = self.ctl.call('mr.digest', rkey=mr['rkey'])['crc32']
            if int(dig, 16) == zlib.crc32(self.model[name]):
                continue
            actual, model = self.read_mr(name), self.model[name]
            bad = []
            for o in range(0, len(model), 64):
                if actual[o:o + 64] == model[o:o + 64]:
                    continue
                for i in range(o, min(o + 64, len(model))):
                    if actual[i] != model[i] and not any(a <= i < a + n
                                                         for a, n in allowed.get(name, [])):
                        bad.append(i)
            if bad:
                a = bad[0]
                row.fail(f'MR {name}: {len(bad)} bytes changed that no valid request allowed '
                         f'(offsets 0x{bad[0]:x}..0x{bad[-1]:x}; at 0x{a:x} now '
                         f'{actual[a:a + 8].hex()}, expected {model[a:a + 8].hex()})')
            self.model[name] = actual

    def apply(self, name, off, data):
        self.model[name][off:off + len(data)] = data

    def icrc_ok(self, row, resps):
        bad = [r for r in resps if r['kind'] == 'roce' and not r['icrc_ok']]
        row.check(not bad, f'{len(bad)} frames from roced with a wrong ICRC')

    def expect_silent(self, row, q, resps, what='the hostile frame'):
        m = q.mine(resps)
        row.check(not m, f'answer to {what}: {desc(m)}')

    def expect_ack(self, row, q, resps, psn, what='the valid request'):
        m = q.mine(resps)
        acks = [r for r in m if r['op'] == ACK]
        nak = [r for r in acks if r['syn'] >> 5 != 0]
        row.check(not nak, f'{what}: NAK {desc(nak)}')
        row.check(any(r['syn'] >> 5 == 0 and r['psn'] == psn for r in acks),
                  f'{what}: no ACK for PSN 0x{psn:06x}, got {desc(m)}')

    def expect_nak(self, row, q, resps, psn, syns, what='the hostile request'):
        m = q.mine(resps)
        row.check(any(r['op'] == ACK and r['syn'] in syns and r['psn'] == psn for r in m),
                  f'{what}: want {"/".join(syn_name(s) for s in syns)} PSN 0x{psn:06x}, '
                  f'got {desc(m)}')

    def run(self, cls, case, expect, fn):
        row = Row(cls, case, expect)
        t0 = time.time()
        try:
            fn(row)
        except Exception as e:  # a failed case must not stop the others
            row.fail(f'{type(e).__name__}: {e}')
        try:
            self.destroy_qps()
        except Exception as e:
            row.fail(f'cleanup: {e}')
        try:
            alive, r = self.ctl.status_fresh()
            row.check(alive, f'rocectl status: exit {r.returncode} {r.stderr.strip()}')
        except Exception as e:
            row.fail(f'rocectl status: {e}')
        if self.d.proc.poll() is not None:
            row.fail(f'roced exited ({self.d.proc.returncode})')
        self.rows.append(row)
        res = 'PASS' if not row.fails else 'FAIL'
        print(f'[{res}] {cls}: {case} ({time.time() - t0:.2f}s)', flush=True)
        for f in row.fails:
            print(f'       - {f}', flush=True)
        if self.d.proc.poll() is not None:
            raise Failure('roced is gone: stopping')

    # ---- common case shapes ----

    def silent_drop(self, row, q, bad, counters, allowed=None):
        """A frame that must be dropped without an answer, then the same request, valid, at
        the same PSN: executed and ACKed (the positive control)."""
        off = self.slot()
        neg, ctl_data = self.data(64), self.data(64)
        before = self.snap(q)
        got = self.xchg([bad(q, off, neg)])
        after = self.snap(q)
        self.icrc_ok(row, got)
        self.expect_silent(row, q, got)
        self.counters(row, before, after, counters)
        got = self.xchg([q.write(self.mrs['W'], off, ctl_data)])
        self.expect_ack(row, q, got, q.epsn, 'control (valid WRITE, same PSN)')
        self.apply('W', off, ctl_data)
        q.adv()
        self.expect_state(row, q, 'RTS')
        self.verify_mrs(row, allowed)

    def fatal(self, row, frames, syns, nak_at=0, counters=(), allowed=None, q=None,
              executed=(), pre=None):
        """Requests (a valid prefix, then the bad one at index nak_at) that must get a fatal
        NAK: the QP goes to ERR, nothing of the bad one executes, and the QP then executes
        nothing more (a valid WRITE is dropped)."""
        q = q or self.new_qp()
        if pre:
            pre(q)
        before = self.snap(q)
        got = self.xchg(frames(q))
        after = self.snap(q)
        self.icrc_ok(row, got)
        self.expect_nak(row, q, got, psn_add(q.epsn, nak_at), syns)
        self.counters(row, before, after, list(counters))
        for name, off, data in executed:
            self.apply(name, off, data)
        self.expect_state(row, q, 'ERR')
        self.verify_mrs(row, allowed)
        # An ERR QP is inert: a valid WRITE at every plausible PSN is dropped.
        off = self.slot()
        before = self.snap(q)
        got = self.xchg([q.write(self.mrs['W'], off, self.data(64), psn=psn_add(q.epsn, k))
                         for k in range(nak_at, nak_at + 2)])
        after = self.snap(q)
        self.expect_silent(row, q, got, 'a valid WRITE to the ERR QP')
        self.counters(row, before, after, [('qp.STATE_DROP', '>=', 2)])
        self.verify_mrs(row)
        return q

    # ==== the classes ====

    def c_selfcheck(self):
        def icrc(row):
            path = os.path.join(CAPTURES, 'roce_rc_rdma_write_64B_8KiB.pcap')
            if not row.check(os.path.exists(path), f'{path} missing'):
                return
            n = 0
            for p in rdpcap(path)[:50]:
                f = bytes(p)
                if UDP not in p or p[UDP].dport != 4791 or IP not in p:
                    continue
                l3 = f[14:14 + p[IP].len]
                row.check(struct.unpack('<I', l3[-4:])[0] == icrc_of(l3),
                          f'capture packet {n}: our ICRC disagrees with rxe\'s')
                n += 1
            row.check(n >= 10, f'only {n} RoCE packets in the capture')
            pkt = Ether() / IP(src=IP_B, dst=IP_A, flags='DF') / UDP(sport=1, dport=4791,
                                                                     chksum=0) / \
                BTH(opcode=WRITE_ONLY, dqpn=0x11, psn=0x22) / Raw(reth(1, 2, 8) + bytes(8))
            f = raw(pkt)
            row.check(struct.unpack('<I', f[-4:])[0] == icrc_of(f[14:]),
                      "scapy's BTH ICRC disagrees with ours")
        self.run('selfcheck', 'ICRC of the crafting code',
                 'equals rxe\'s in the write capture and scapy\'s', icrc)

    def c_positive(self):
        W, A = self.mrs['W'], self.mrs['A']

        def write_only(row):
            q = self.new_qp()
            off, d = self.slot(), self.data(64)
            before = self.snap(q)
            got = self.xchg([q.write(W, off, d)])
            after = self.snap(q)
            self.icrc_ok(row, got)
            self.expect_ack(row, q, got, q.epsn)
            m = q.mine(got)
            if m:
                r = m[0]
                row.check((r['dst'], r['src'], r['dst_ip'], r['src_ip']) ==
                          (self.mac_b, self.mac_a, IP_B, IP_A), f'ACK addressed {r}')
            self.apply('W', off, d)
            self.counters(row, before, after, [('qp.RX_PKTS', '==', 1), ('RX_ROCE', '>=', 1)])
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('positive', 'WRITE ONLY 64 B', 'ACK, bytes written, RTS', write_only)

        def write_msg(row):
            q = self.new_qp()
            off, d = self.slot(2560), self.data(2500)
            got = self.xchg(q.write_msg(W, off, d))
            self.expect_ack(row, q, got, psn_add(q.epsn, 2))
            self.apply('W', off, d)
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('positive', 'WRITE FIRST/MIDDLE/LAST 2500 B', 'ACK of LAST, bytes written',
                 write_msg)

        def write_edge(row):
            q = self.new_qp()
            d = self.data(8)
            got = self.xchg([q.write(W, W['length'] - 8, d)])
            self.expect_ack(row, q, got, q.epsn, 'WRITE of the last 8 bytes')
            self.apply('W', W['length'] - 8, d)
            q.adv()
            got = self.xchg([q.read(W, W['length'] - 8, 8)])
            m = [r for r in q.mine(got) if r['op'] == RR_ONLY]
            row.check(m and m[0]['payload'] == d, f'READ of the last 8 bytes: {desc(got)}')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('positive', 'WRITE and READ of the last 8 bytes of an MR',
                 'executed (bounds are inclusive of the end)', write_edge)

        def write_imm(row):
            q = self.new_qp()
            self.post_recv(q, 0, 64)
            off, d = self.slot(), self.data(100)
            got = self.xchg([q.write(W, off, d, op=WRITE_ONLY_IMM)])
            self.expect_ack(row, q, got, q.epsn)
            self.apply('W', off, d)
            wc = self.poll(q.qpn)
            row.check(len(wc) == 1 and wc[0]['status'] == 0 and wc[0]['opcode'] ==
                      'recv_rdma_imm' and wc[0].get('imm') == 0x1234, f'completion {wc}')
            self.verify_mrs(row)
        self.run('positive', 'WRITE ONLY with immediate', 'ACK, recv_rdma_imm completion',
                 write_imm)

        def read(row):
            q = self.new_qp()
            off = self.slot(3072)
            got = self.xchg([q.read(W, off, 100)])
            m = [r for r in q.mine(got) if r['op'] == RR_ONLY]
            row.check(m and m[0]['psn'] == q.epsn and m[0]['payload'] ==
                      bytes(self.model['W'][off:off + 100]), f'READ 100 B: {desc(got)}')
            q.adv()
            self.wire.send([q.read(W, off, 3000)])
            self.wire.wait(lambda p: len(q.mine(p)) >= 3, 3)
            got = q.mine(self.barrier())
            row.check([r['op'] for r in got] == [RR_FIRST, RR_MIDDLE, RR_LAST] and
                      [r['psn'] for r in got] == [psn_add(q.epsn, i) for i in range(3)],
                      f'READ 3000 B responses {desc(got)}')
            row.check(b''.join(r['payload'] for r in got) ==
                      bytes(self.model['W'][off:off + 3000]), 'READ 3000 B: wrong data')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('positive', 'READ 100 B, READ 3000 B', 'responses in PSN order, MR data',
                 read)

        def atomics(row):
            q = self.new_qp()
            orig = int.from_bytes(self.model['A'][8:16], 'little')
            got = self.xchg([q.atomic(FETCH_ADD, A, 8, 5)])
            m = [r for r in q.mine(got) if r['op'] == ATOMIC_ACK]
            row.check(m and m[0]['orig'] == orig, f'FETCH_ADD: {desc(got)}')
            self.apply('A', 8, ((orig + 5) & M64).to_bytes(8, 'little'))
            q.adv()
            cur = (orig + 5) & M64
            got = self.xchg([q.atomic(CMP_SWAP, A, 8, 0x1111, compare=cur)])
            m = [r for r in q.mine(got) if r['op'] == ATOMIC_ACK]
            row.check(m and m[0]['orig'] == cur, f'CMP_SWAP (match): {desc(got)}')
            self.apply('A', 8, (0x1111).to_bytes(8, 'little'))
            q.adv()
            got = self.xchg([q.atomic(CMP_SWAP, A, 8, 0x2222, compare=0x9999)])
            m = [r for r in q.mine(got) if r['op'] == ATOMIC_ACK]
            row.check(m and m[0]['orig'] == 0x1111, f'CMP_SWAP (no match): {desc(got)}')
            q.adv()
            last = int.from_bytes(self.model['A'][4088:4096], 'little')
            got = self.xchg([q.atomic(FETCH_ADD, A, 4088, 1)])
            m = [r for r in q.mine(got) if r['op'] == ATOMIC_ACK]
            row.check(m and m[0]['orig'] == last, f'FETCH_ADD on the last word: {desc(got)}')
            self.apply('A', 4088, ((last + 1) & M64).to_bytes(8, 'little'))
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('positive', 'FETCH_ADD, CMP_SWAP (match, no match), last word',
                 'ATOMIC_ACK with the original value, MR updated once', atomics)

        def send(row):
            q = self.new_qp()
            self.post_recv(q, 0, 4096)
            self.post_recv(q, 4096, 4096)
            d1, d2 = self.data(200), self.data(2100)
            got = self.xchg([q.send(d1)])
            self.expect_ack(row, q, got, q.epsn, 'SEND ONLY')
            q.adv()
            frames = [q.send(d2[:MTU], SEND_FIRST, ackreq=0),
                      q.send(d2[MTU:2 * MTU], SEND_MIDDLE, psn=psn_add(q.epsn, 1), ackreq=0),
                      q.send(d2[2 * MTU:], SEND_LAST, psn=psn_add(q.epsn, 2))]
            got = self.xchg(frames)
            self.expect_ack(row, q, got, psn_add(q.epsn, 2), 'SEND FIRST/MIDDLE/LAST')
            wc = self.poll(q.qpn, 2)
            row.check([(w['status'], w['opcode'], w['byte_len']) for w in wc] ==
                      [(0, 'recv', 200), (0, 'recv', 2100)], f'completions {wc}')
            self.apply('L', 0, d1)
            self.apply('L', 4096, d2)
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('positive', 'SEND ONLY 200 B, SEND FIRST/MIDDLE/LAST 2100 B',
                 'ACKs, receive completions, bytes in the receive buffers', send)

    def c_l2(self):
        W = self.mrs['W']
        cases = [
            ('dst MAC foreign unicast', dict(dst_mac='02:00:00:de:ad:01'), 'ROCE_L2_DST'),
            ('dst MAC broadcast', dict(dst_mac='ff:ff:ff:ff:ff:ff'), 'ROCE_L2_DST'),
            ('dst MAC multicast', dict(dst_mac='01:00:5e:01:02:03'), 'ROCE_L2_DST'),
            ('VLAN 100 tag on an untagged port', dict(vlans=(100,)), 'ROCE_VLAN'),
            ('QinQ (two tags)', dict(vlans=(100, 200)), 'DROP_VLAN_DEPTH'),
        ]
        def prio(row):
            q = self.new_qp()
            off, d = self.slot(), self.data(64)
            got = self.xchg([q.write(W, off, d, vlans=(0,))])
            self.expect_ack(row, q, got, q.epsn, 'WRITE with a priority tag (VID 0)')
            self.apply('W', off, d)
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('L2', 'priority tag (VLAN ID 0) on an untagged port',
                 'accepted as untagged (802.1Q), ACK, executed', prio)
        for name, kw, cnt in cases:
            self.run('L2', name, f'dropped silently, {cnt} +1, not executed, RTS',
                     lambda row, kw=kw, cnt=cnt: self.silent_drop(
                         row, self.new_qp(), lambda q, off, d: q.write(W, off, d, **kw),
                         [(cnt, '==', 1)]))

    def c_ip_udp(self):
        W = self.mrs['W']
        drops = [
            ('source IP not the peer\'s', dict(src_ip=IP_X), 'qp.STATE_DROP'),
            ('source IP roced\'s own', dict(src_ip=IP_A), 'qp.STATE_DROP'),
            ('destination IP not roced\'s', dict(dst_ip='10.9.0.99'), 'qp.STATE_DROP'),
            ('UDP destination port 4792', dict(dport=4792), 'RX_UDP'),
            ('IPv4 header checksum wrong', None, 'DROP_IP4_CSUM'),
            ('ICRC wrong', dict(bad_icrc=True), 'DROP_ICRC'),
            ('IPv4 options (IHL 6)', dict(ip_options=b'\x01\x01\x01\x00'), 'DROP_IP4_OPTIONS'),
            ('BTH TVer 1', dict(tver=1), 'DROP_BTH_TVER'),
            ('UDP length beyond the IP length', dict(udp_len=2000), 'DROP_UDP_LEN'),
        ]
        for name, kw, cnt in drops:
            def bad(q, off, d, kw=kw):
                if kw is not None:
                    return q.write(W, off, d, **kw)
                f = bytearray(q.write(W, off, d))
                f[24] ^= 0x5a                       # IPv4 header checksum
                return bytes(f)
            self.run('IP/UDP', name, f'dropped silently, {cnt} +1, not executed, RTS',
                     lambda row, bad=bad, cnt=cnt: self.silent_drop(
                         row, self.new_qp(), bad, [(cnt, '==', 1)]))

        def long_icrc(row):
            # A payload of 256 bytes or more has its ICRC checked by the engine right before
            # the copy into the MR (the classifier leaves it pending): still never executed.
            q = self.new_qp()
            off, neg = self.slot(MTU), self.data(MTU)
            before = self.snap(q)
            got = self.xchg([q.write(W, off, neg, bad_icrc=True)])
            after = self.snap(q)
            self.icrc_ok(row, got)
            self.expect_silent(row, q, got)
            self.counters(row, before, after, [('DROP_ICRC', '==', 1)])
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('IP/UDP', 'ICRC wrong on a 1 KiB WRITE (checked before the copy)',
                 'dropped silently, DROP_ICRC +1, not executed, RTS', long_icrc)

        def frag(row):
            # DPDK's af_packet PMD joins a fanout group with PACKET_FANOUT_FLAG_DEFRAG: the
            # kernel holds a lone fragment for reassembly and roced never sees it. On a NIC
            # it reaches the classifier and counts as DROP_IP4_FRAG. Either way: not acted on.
            q = self.new_qp()
            before = self.snap(q)
            self.silent_drop(row, q, lambda q, off, d: q.write(W, off, d, ip_flags='MF'), [])
            after = self.snap(q)
            rx = after['PORT_RX_PKTS'] - before['PORT_RX_PKTS']
            fr = after['DROP_IP4_FRAG'] - before['DROP_IP4_FRAG']
            # Two barriers of two echoes, the control WRITE: 5 frames besides the fragment.
            row.check(fr == 1 or (fr == 0 and rx == 5),
                      f'DROP_IP4_FRAG {fr:+d}, PORT_RX_PKTS {rx:+d}: the fragment arrived and '
                      f'was not counted as a fragment ({self.moved(before, after)})')
        self.run('IP/UDP', 'IPv4 first fragment (MF set)', 'not acted on: DROP_IP4_FRAG +1, '
                 'or held by the kernel (af_packet fanout defrag)', frag)

        def pkey(row):
            q = self.new_qp()
            before = self.snap(q)
            self.silent_drop(row, q, lambda q, off, d: q.write(W, off, d, pkey=0x1234), [])
            after = self.snap(q)
            moved = [k for k in after if 'PKEY' in k.upper() and after[k] > before.get(k, 0)]
            row.check(moved, 'no P_Key counter moved (none named *PKEY* exists)' if not
                      any('PKEY' in k.upper() for k in after) else 'P_Key counter did not move')
        self.run('IP/UDP', 'BTH P_Key 0x1234 (not the default partition)',
                 'dropped silently (IBA header validation: P_Key; rxe counts bad_pkey_cntr), '
                 'counted, RTS', pkey)

        def accepted(row, kw):
            q = self.new_qp()
            off, d = self.slot(), self.data(64)
            got = self.xchg([q.write(W, off, d, **kw)])
            self.expect_ack(row, q, got, q.epsn)
            self.apply('W', off, d)
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('IP/UDP', 'another UDP source port',
                 'accepted: the source port is entropy (annex A17), ACK, executed',
                 lambda row: accepted(row, dict(sport=0x1234)))
        self.run('IP/UDP', 'TTL 1, TOS 0xb8 (ICRC-masked fields)',
                 'accepted (variant fields are masked in the ICRC), ACK, executed',
                 lambda row: accepted(row, dict(ttl=1, tos=0xb8)))

    def c_qpn(self):
        W = self.mrs['W']

        def unknown(row, qpn, counters, what):
            q = self.new_qp()
            before = self.snap(q)
            got = self.xchg([q.write(W, self.slot(), self.data(64), qpn=qpn)])
            after = self.snap(q)
            row.check(not [r for r in got if r['kind'] == 'roce'], f'answer: {desc(got)}')
            moved = [k for k, op, n in counters if after.get(k, 0) - before.get(k, 0) >= n]
            row.check(moved, f'none of {[k for k, _, _ in counters]} moved ({what})')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        base = 1 << 16
        self.run('QPN', 'unknown QPN in worker 0\'s range', 'dropped, UNKNOWN_QP +1',
                 lambda row: unknown(row, base | 0xfff0, [('UNKNOWN_QP', '>=', 1)], ''))
        self.run('QPN', 'QPN no worker owns (0x7f0000)', 'dropped, NOT_OURS +1',
                 lambda row: unknown(row, 0x7f0000, [('NOT_OURS', '>=', 1)], ''))
        # QPN 1 is the port's QP1 (UD): an RC packet is not its transport.
        self.run('QPN', 'QPN 1 (GSI) with an RC WRITE', 'dropped at QP1, TRANSPORT_DROP +1',
                 lambda row: unknown(row, 1, [('TRANSPORT_DROP', '>=', 1)], ''))
        self.run('QPN', 'QPN 0xffffff (multicast QPN) with an RC WRITE', 'dropped, counted',
                 lambda row: unknown(row, 0xffffff, [('UNKNOWN_QP', '>=', 1),
                                                     ('NOT_OURS', '>=', 1)], ''))

        def destroyed(row):
            q = self.new_qp()
            self.ctl.call('qp.destroy', qpn=q.qpn)
            self.qps.remove(q.qpn)
            before = self.snap()
            got = self.xchg([q.write(W, self.slot(), self.data(64))])
            after = self.snap()
            row.check(not [r for r in got if r['kind'] == 'roce'], f'answer: {desc(got)}')
            self.counters(row, before, after, [('UNKNOWN_QP', '==', 1)])
            self.verify_mrs(row)
        self.run('QPN', 'QPN of a destroyed QP', 'dropped, UNKNOWN_QP +1', destroyed)

        def init_qp(row):
            qp = self.ctl.call('qp.create', access=QP_RIGHTS)['qp']
            self.qps.append(qp['qpn'])
            q = PeerQP(self, qp, 0xb0000, 0)
            before = self.snap(q)
            got = self.xchg([q.write(W, self.slot(), self.data(64))])
            after = self.snap(q)
            row.check(not [r for r in got if r['kind'] == 'roce'], f'answer: {desc(got)}')
            self.counters(row, before, after, [('qp.STATE_DROP', '==', 1)])
            self.expect_state(row, q, 'INIT')
            self.verify_mrs(row)
        self.run('QPN', 'a QP in INIT (never connected)', 'dropped, its STATE_DROP +1, INIT',
                 init_qp)

        def transport(row, op, ext_fn):
            q = self.new_qp()
            self.post_recv(q, 0, 4096)
            off = self.slot()
            before = self.snap(q)
            got = self.xchg([q.frame(op, ext_fn(off), self.data(64))])
            after = self.snap(q)
            self.expect_silent(row, q, got)
            self.counters(row, before, after, [('qp.TRANSPORT_DROP', '==', 1),
                                               ('UNKNOWN_QP', '==', 0)])
            row.check(not self.poll(q.qpn, 1, 0.05), 'a receive completed')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('QPN', 'UD SEND ONLY (DETH) to an RC QP',
                 'dropped (not RC), its TRANSPORT_DROP +1',
                 lambda row: transport(row, UD_SEND_ONLY, lambda off: deth(0x11111111, 5)))
        self.run('QPN', 'UC WRITE ONLY to an RC QP', 'dropped (not RC), its TRANSPORT_DROP +1',
                 lambda row: transport(row, UC_WRITE_ONLY,
                                       lambda off: reth(W['iova'] + off, W['rkey'], 64)))

    def c_psn(self):
        W, A = self.mrs['W'], self.mrs['A']

        def beyond(row, delta):
            q = self.new_qp()
            off, neg = self.slot(), self.data(64)
            before = self.snap(q)
            got = self.xchg([q.write(W, off, neg, psn=psn_add(q.epsn, delta))])
            mid = self.snap(q)
            self.expect_nak(row, q, got, q.epsn, [NAK_SEQ])
            self.counters(row, before, mid, [('qp.NAK_SEQ_TX', '==', 1),
                                             ('qp.OOS_DROP', '==', 1)])
            again = delta + 1 if delta < (1 << 22) else delta - 1   # still in the invalid half
            got = self.xchg([q.write(W, off, neg, psn=psn_add(q.epsn, again))])
            after = self.snap(q)
            self.expect_silent(row, q, got, 'a second out-of-sequence request (one NAK a gap)')
            self.counters(row, mid, after, [('qp.NAK_SEQ_TX', '==', 0),
                                            ('qp.OOS_DROP', '==', 1)])
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
            d = self.data(64)
            got = self.xchg([q.write(W, off, d)])
            self.expect_ack(row, q, got, q.epsn, 'the expected PSN after the gap')
            self.apply('W', off, d)
            self.verify_mrs(row)
        self.run('PSN', 'ePSN + 1 (just beyond), then ePSN + 2',
                 'one NAK-seq for ePSN, second dropped silently, not executed, RTS; ePSN works',
                 lambda row: beyond(row, 1))
        self.run('PSN', 'ePSN + 2^23 - 1 (far edge of the invalid half)',
                 'NAK-seq for ePSN, not executed, RTS', lambda row: beyond(row, (1 << 23) - 1))

        def dup(row, delta):
            q = self.new_qp()
            off, neg = self.slot(), self.data(64)
            before = self.snap(q)
            got = self.xchg([q.write(W, off, neg, psn=psn_add(q.epsn, delta))])
            after = self.snap(q)
            self.expect_ack(row, q, got, psn_add(q.epsn, -1), 'the duplicate')
            self.counters(row, before, after, [('qp.DUP_REQ', '==', 1)])
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
            d = self.data(64)
            got = self.xchg([q.write(W, off, d)])
            self.expect_ack(row, q, got, q.epsn, 'control at ePSN')
            self.apply('W', off, d)
            self.verify_mrs(row)
        self.run('PSN', 'ePSN - 1 (just below: duplicate)',
                 'ACK of ePSN - 1, DUP_REQ +1, not executed, RTS', lambda row: dup(row, -1))
        self.run('PSN', 'ePSN - 2^23 (oldest duplicate)',
                 'duplicate: ACK of ePSN - 1, not executed', lambda row: dup(row, -(1 << 23)))
        self.run('PSN', 'ePSN + 2^23 (same as ePSN - 2^23 mod 2^24)',
                 'duplicate: ACK of ePSN - 1, not executed', lambda row: dup(row, 1 << 23))

        def wrap(row):
            q = self.new_qp(epsn=0xfffffe)
            offs = [self.slot(64) for _ in range(4)]
            ds = [self.data(64) for _ in range(4)]
            got = self.xchg([q.write(W, o, d, psn=p)
                             for o, d, p in zip(offs, ds, (0xfffffe, 0xffffff, 0, 1))])
            self.expect_ack(row, q, got, 1, 'WRITEs at 0xfffffe, 0xffffff, 0, 1')
            for o, d in zip(offs, ds):
                self.apply('W', o, d)
            self.verify_mrs(row)
            before = self.snap(q)
            got = self.xchg([q.write(W, offs[1], self.data(64), psn=0xffffff)])
            after = self.snap(q)
            self.expect_ack(row, q, got, 1, 'duplicate 0xffffff after the wrap')
            self.counters(row, before, after, [('qp.DUP_REQ', '==', 1)])
            got = self.xchg([q.write(W, offs[0], self.data(64), psn=3)])
            self.expect_nak(row, q, got, 2, [NAK_SEQ], 'PSN 3 when 2 is expected')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
            q2 = self.new_qp(epsn=0xffffff)
            off, d = self.slot(2048), self.data(2048)
            got = self.xchg(q2.write_msg(W, off, d))
            self.expect_ack(row, q2, got, 0, 'WRITE FIRST at 0xffffff, LAST at 0')
            self.apply('W', off, d)
            self.expect_state(row, q2, 'RTS')
            self.verify_mrs(row)
        self.run('PSN', '24-bit wrap: 0xfffffe..1, duplicate 0xffffff, gap at 3, a message '
                 'across the wrap', 'executed in order, duplicate re-ACKed not executed, '
                 'NAK-seq for 2', wrap)

        def dup_read(row):
            q = self.new_qp()
            off = self.slot()
            got = self.xchg([q.read(W, off, 200)])
            first = [r for r in q.mine(got) if r['op'] == RR_ONLY]
            before = self.snap(q)
            got = self.xchg([q.read(W, off, 200)])
            after = self.snap(q)
            again = [r for r in q.mine(got) if r['op'] == RR_ONLY]
            row.check(first and again and first[0]['payload'] == again[0]['payload'] ==
                      bytes(self.model['W'][off:off + 200]) and again[0]['psn'] == q.epsn,
                      f'duplicate READ not served again: {desc(got)}')
            self.counters(row, before, after, [('qp.DUP_READ', '==', 1)])
            q.adv()
            d = self.data(64)
            got = self.xchg([q.write(W, off, d)])
            self.expect_ack(row, q, got, q.epsn, 'WRITE after the duplicate READ')
            self.apply('W', off, d)
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('PSN', 'duplicate READ (same PSN again)',
                 'served again with the same data, DUP_READ +1, RTS', dup_read)

        def dup_atomic(row):
            q = self.new_qp()
            orig = int.from_bytes(self.model['A'][64:72], 'little')
            got = self.xchg([q.atomic(FETCH_ADD, A, 64, 7)])
            self.apply('A', 64, ((orig + 7) & M64).to_bytes(8, 'little'))
            before = self.snap(q)
            got += self.xchg([q.atomic(FETCH_ADD, A, 64, 7), q.atomic(FETCH_ADD, A, 64, 999)])
            after = self.snap(q)
            m = [r for r in q.mine(got) if r['op'] == ATOMIC_ACK]
            row.check(len(m) == 3 and all(r['orig'] == orig and r['psn'] == q.epsn
                                          for r in m), f'atomic ACKs {desc(got)}')
            self.counters(row, before, after, [('qp.DUP_ATOMIC', '==', 2)])
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('PSN', 'duplicate FETCH_ADD (same operands, then other operands)',
                 'answered from the saved original, executed once, DUP_ATOMIC +2', dup_atomic)

    def c_reth(self):
        W, RO, L, A = self.mrs['W'], self.mrs['RO'], self.mrs['L'], self.mrs['A']
        acc, inv = [NAK_ACC], [NAK_INV]
        either = [NAK_INV, NAK_ACC]
        cases = [
            ('WRITE va = 2^64 - 32, len 64 (va + len wraps)', acc,
             lambda q: [q.write(W, 0, self.data(64), va=M64 - 31)]),
            ('READ va = 2^64 - 16, len 256 (va + len wraps)', acc,
             lambda q: [q.read(W, 0, 256, va=M64 - 15)]),
            ('READ len = MR length + 1', acc, lambda q: [q.read(W, 0, W['length'] + 1)]),
            ('READ crossing the MR end (last 8 + 8)', acc,
             lambda q: [q.read(W, W['length'] - 8, 16)]),
            ('READ starting 8 bytes below the MR', acc, lambda q: [q.read(W, 0, 16,
                                                                       va=W['iova'] - 8)]),
            ('WRITE FIRST, RETH len = MR length + 1024', acc,
             lambda q: [q.write(W, 0, self.data(MTU), rlen=W['length'] + MTU,
                                op=WRITE_FIRST)]),
            ('READ len = 2^31 + 1 (above the 2^31 maximum)', either,
             lambda q: [q.read(W, 0, (1 << 31) + 1)]),
            ('READ len = 2^32 - 1', either, lambda q: [q.read(W, 0, 0xffffffff)]),
            ('WRITE FIRST, RETH len = 2^31 + 1024', either,
             lambda q: [q.write(W, 0, self.data(MTU), rlen=(1 << 31) + MTU, op=WRITE_FIRST)]),
            ('WRITE ONLY, RETH len 128 but 64 B of payload', inv,
             lambda q: [q.write(W, 0, self.data(64), rlen=128)]),
            ('WRITE ONLY of 1028 B (payload above the 1024 MTU)', inv,
             lambda q: [q.write(W, 0, self.data(1028))]),
            ('WRITE FIRST with 512 B (First must carry one MTU)', inv,
             lambda q: [q.write(W, 0, self.data(512), rlen=2048, op=WRITE_FIRST)]),
            ('WRITE to an MR without remote_write (remote_read only)', acc,
             lambda q: [q.write(RO, 0, self.data(64))]),
            ('WRITE to an MR with local_write only', acc,
             lambda q: [q.write(L, 0, self.data(64))]),
            ('READ of an MR without remote_read', acc, lambda q: [q.read(L, 0, 64)]),
            ('WRITE with A\'s rkey at an address inside W', acc,
             lambda q: [q.write(W, 0x100, self.data(64), rkey=A['rkey'])]),
        ]
        for name, syns, frames in cases:
            self.run('RETH', name, f'{"/".join(syn_name(s) for s in syns)}, ERR, MR untouched',
                     lambda row, syns=syns, frames=frames: self.fatal(
                         row, frames, syns,
                         counters=[('qp.NAK_ACC_TX' if syns == acc else 'qp.NAK_INV_TX',
                                    '==', 1)] if len(syns) == 1 else ()))

        def over_last(row):
            off, d = self.slot(3072), self.data(3 * MTU)

            def frames(q):
                f = q.write_msg(W, off, d[:2 * MTU])        # FIRST (len 2048), LAST
                last = q.frame(WRITE_MIDDLE, b'', d[MTU:2 * MTU], psn=psn_add(q.epsn, 1),
                               ackreq=0)
                return [f[0], last, q.frame(WRITE_LAST, b'', d[2 * MTU:],
                                            psn=psn_add(q.epsn, 2))]
            self.fatal(row, frames, inv, nak_at=2, counters=[('qp.NAK_INV_TX', '==', 1)],
                       allowed={'W': [(off, 2 * MTU)]})
        self.run('RETH', 'WRITE FIRST len 2048, MIDDLE, LAST: 3072 B for a 2048 B RETH',
                 'NAK-inv at LAST, ERR, nothing written past the 2048 B', over_last)

        def zero_len(row):
            q = self.new_qp()
            before = self.snap(q)
            got = self.xchg([q.write(W, 0, b'', va=0x123, rkey=0xdead0000 | q.fake & 0xff)])
            self.expect_ack(row, q, got, q.epsn, 'zero-length WRITE with a bad rkey')
            q.adv()
            got = self.xchg([q.read(W, 0, 0, va=0x456, rkey=0xbeef0000)])
            after = self.snap(q)
            m = [r for r in q.mine(got) if r['op'] == RR_ONLY]
            row.check(m and m[0]['payload'] == b'' and m[0]['psn'] == q.epsn,
                      f'zero-length READ with a bad rkey: {desc(got)}')
            self.counters(row, before, after, [('qp.NAK_ACC_TX', '==', 0)])
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('RETH', 'zero-length WRITE and READ with a bad rkey',
                 'ACK / empty READ response (IBA: the rkey of a zero-length op is not checked), '
                 'RTS', zero_len)

    def c_atomic(self):
        A, W = self.mrs['A'], self.mrs['W']
        acc, inv = [NAK_ACC], [NAK_INV]
        cases = [
            ('FETCH_ADD va = MR + 4 (unaligned)', inv,
             lambda q: [q.atomic(FETCH_ADD, A, 4, 1)], {}),
            ('CMP_SWAP va = MR + 4092 (unaligned, crosses the end)', inv,
             lambda q: [q.atomic(CMP_SWAP, A, 4092, 1, 0)], {}),
            ('FETCH_ADD va = MR end (aligned, outside)', acc,
             lambda q: [q.atomic(FETCH_ADD, A, A['length'], 1)], {}),
            ('FETCH_ADD va = MR - 8', acc,
             lambda q: [q.atomic(FETCH_ADD, A, 0, 1, va=A['iova'] - 8)], {}),
            ('FETCH_ADD va = 2^64 - 8', acc,
             lambda q: [q.atomic(FETCH_ADD, A, 0, 1, va=M64 - 7)], {}),
            ('FETCH_ADD on an MR without remote_atomic', acc,
             lambda q: [q.atomic(FETCH_ADD, W, 0, 1)], {}),
            ('CMP_SWAP with a bad rkey', acc,
             lambda q: [q.atomic(CMP_SWAP, A, 0, 1, 0, rkey=A['rkey'] ^ 0x55)], {}),
            ('FETCH_ADD on a QP without remote_atomic access', inv,
             lambda q: [q.atomic(FETCH_ADD, A, 0, 1)],
             {'access': ['remote_write', 'remote_read']}),
            ('WRITE on a QP without remote_write access', inv,
             lambda q: [q.write(W, 0, self.data(64))], {'access': ['remote_read']}),
            ('READ on a QP without remote_read access', inv,
             lambda q: [q.read(W, 0, 64)], {'access': ['remote_write']}),
        ]
        for name, syns, frames, opts in cases:
            cls = 'access' if 'access' in opts else 'AtomicETH'
            self.run(cls, name, f'{syn_name(syns[0])}, ERR, MR untouched',
                     lambda row, syns=syns, frames=frames, opts=opts: self.fatal(
                         row, frames, syns, q=self.new_qp(**opts),
                         counters=[('qp.NAK_ACC_TX' if syns == acc else 'qp.NAK_INV_TX',
                                    '==', 1)]))

    def c_rkey(self):
        W, A = self.mrs['W'], self.mrs['A']

        def guess(row):
            valid = {m['rkey'] for m in self.mrs.values()}
            keys = [(W['rkey'] & ~0xff) | b for b in self.rng.sample(
                [b for b in range(256) if b != W['rkey'] & 0xff], 16)]
            while len(keys) < 80:
                k = self.rng.getrandbits(32)
                if k not in valid and k not in keys:
                    keys.append(k)
            qs = [self.new_qp() for _ in keys]
            off = self.slot(128)
            frames = []
            for i, (q, k) in enumerate(zip(qs, keys)):
                if i % 2 == 0:
                    frames.append(q.write(W, off, self.data(64), rkey=k))
                else:
                    frames.append(q.read(W, off, 64, rkey=k))
                if i % 5 == 0:      # the same guess at A's memory too, as an atomic
                    frames[-1] = q.atomic(FETCH_ADD, A, 0, 1, rkey=k)
            before = self.snap()
            got = self.xchg(frames, pace=16)
            after = self.snap()
            leaked = [r for r in got if r['kind'] == 'roce' and r['op'] in
                      (RR_ONLY, ATOMIC_ACK)]
            row.check(not leaked, f'{len(leaked)} READ/atomic responses to guessed keys')
            naks = {r['qpn'] for r in got if r['kind'] == 'roce' and r['op'] == ACK and
                    r['syn'] == NAK_ACC}
            row.check(len(naks) == len(qs), f'NAK-acc from {len(naks)} of {len(qs)} QPs')
            self.counters(row, before, after, [('NAK_ACC_TX', '==', len(qs))])
            states = [self.state(q) for q in qs]
            row.check(all(s == 'ERR' for s in states),
                      f'states {sorted(set(states))}, IBA: ERR after a remote access error')
            self.verify_mrs(row)
        self.run('rkey', '80 guessed rkeys (16 differing only in the key byte), one per QP: '
                 'WRITE, READ, FETCH_ADD', 'NAK-acc each, ERR, no data out, MRs untouched',
                 guess)

    def c_sequence(self):
        W = self.mrs['W']
        inv = [NAK_INV]

        def recv(q):
            self.post_recv(q, 0, 4096)
        off = self.slot(2048)
        d = self.data(2 * MTU)
        cases = [
            ('WRITE MIDDLE without FIRST', lambda q: [q.frame(WRITE_MIDDLE, b'', d[:MTU])], 0,
             None),
            ('WRITE LAST without FIRST', lambda q: [q.frame(WRITE_LAST, b'', d[:64])], 0, None),
            ('WRITE LAST with immediate without FIRST',
             lambda q: [q.frame(WRITE_LAST_IMM, imm(1), d[:64])], 0, recv),
            ('SEND MIDDLE without FIRST', lambda q: [q.send(d[:MTU], SEND_MIDDLE)], 0, recv),
            ('SEND LAST without FIRST', lambda q: [q.send(d[:64], SEND_LAST)], 0, recv),
            ('WRITE FIRST then WRITE FIRST',
             lambda q: [q.write(W, off, d[:MTU], rlen=2 * MTU, op=WRITE_FIRST, ackreq=0),
                        q.write(W, off, d[:MTU], rlen=2 * MTU, op=WRITE_FIRST,
                                psn=psn_add(q.epsn, 1))], 1, None),
            ('WRITE FIRST then SEND ONLY',
             lambda q: [q.write(W, off, d[:MTU], rlen=2 * MTU, op=WRITE_FIRST, ackreq=0),
                        q.send(d[:64], psn=psn_add(q.epsn, 1))], 1, recv),
            ('WRITE FIRST then READ',
             lambda q: [q.write(W, off, d[:MTU], rlen=2 * MTU, op=WRITE_FIRST, ackreq=0),
                        q.read(W, off, 64, psn=psn_add(q.epsn, 1))], 1, None),
            ('SEND FIRST then WRITE MIDDLE',
             lambda q: [q.send(d[:MTU], SEND_FIRST, ackreq=0),
                        q.frame(WRITE_MIDDLE, b'', d[:MTU], psn=psn_add(q.epsn, 1))], 1, recv),
        ]
        for name, frames, at, pre in cases:
            # A valid FIRST before the violation may have placed its data.
            allowed = {'W': [(off, MTU)], 'L': [(0, MTU)]} if at else None
            self.run('sequence', name, 'NAK-inv, ERR, nothing executed past the violation',
                     lambda row, frames=frames, at=at, pre=pre, allowed=allowed: self.fatal(
                         row, frames, inv, nak_at=at, pre=pre, allowed=allowed,
                         counters=[('qp.NAK_INV_TX', '==', 1)]))

        def last_after_only(row):
            o2, d2 = self.slot(), self.data(64)
            self.fatal(row, lambda q: [q.write(W, o2, d2),
                                       q.frame(WRITE_LAST, b'', self.data(64),
                                               psn=psn_add(q.epsn, 1))],
                       inv, nak_at=1, counters=[('qp.NAK_INV_TX', '==', 1)],
                       executed=[('W', o2, d2)])
        self.run('sequence', 'WRITE LAST after WRITE ONLY',
                 'ONLY executed, NAK-inv at LAST, ERR', last_after_only)

    def c_read(self):
        W = self.mrs['W']
        self.run('huge READ', 'READ len 2^31 (the maximum) of a 64 KiB MR',
                 'NAK-acc (or inv), ERR, nothing sent',
                 lambda row: self.fatal(row, lambda q: [q.read(W, 0, 1 << 31)],
                                        [NAK_ACC, NAK_INV]))

        def reads(row, n, opts):
            q = self.new_qp(**opts)
            npk = W['length'] // MTU
            frames = [q.read(W, 0, W['length'], psn=psn_add(q.epsn, i * npk)) for i in range(n)]
            self.wire.send(frames)
            self.wire.wait(lambda p: len(q.mine(p)) >= n * npk, 20)
            got = q.mine(self.barrier())
            psns = [r['psn'] for r in got]
            row.check(psns == [psn_add(q.epsn, i) for i in range(n * npk)],
                      f'{len(got)} responses of {n * npk}, in PSN order: '
                      f'{psns == sorted(psns)}')
            want = bytes(self.model['W'])
            for i in range(n):
                data = b''.join(r['payload'] for r in got[i * npk:(i + 1) * npk])
                if not row.check(data == want, f'READ {i}: data differs'):
                    break
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('huge READ', 'READ of a whole 64 KiB MR', '64 responses in order, MR data, RTS',
                 lambda row: reads(row, 1, {}))
        self.run('huge READ', '16 READs of 64 KiB back to back (max_dest_rd_atomic 16)',
                 '1024 responses in PSN order, data, RTS', lambda row: reads(row, 16, {}))

        def over(row):
            # A READ arriving while an earlier one still streams exceeds max_dest_rd_atomic 1:
            # NAK-inv (IBA: responder resources). One arriving after the stream is done may
            # be served. Which happens depends on timing; the outcome must be one of the two.
            n = 8
            q = self.new_qp(max_dest_rd_atomic=1)
            npk = W['length'] // MTU
            before = self.snap(q)
            self.wire.send([q.read(W, 0, W['length'], psn=psn_add(q.epsn, i * npk))
                            for i in range(n)])
            self.wire.wait(lambda p: len(q.mine(p)) >= n * npk or
                           any(r['op'] == ACK for r in q.mine(p)), 10)
            got = q.mine(self.barrier())
            after = self.snap(q)
            rr = [r for r in got if r['op'] != ACK]
            k = len(rr) // npk
            row.check(len(rr) % npk == 0 and [r['psn'] for r in rr] ==
                      [psn_add(q.epsn, i) for i in range(len(rr))],
                      f'{len(rr)} READ responses: not whole READs in PSN order')
            want = bytes(self.model['W'])
            row.check(all(b''.join(r['payload'] for r in rr[i * npk:(i + 1) * npk]) == want
                          for i in range(k)), 'a served READ returned other data')
            print(f'       {k} of {n} READs served', flush=True)
            if k < n:
                self.expect_nak(row, q, got, psn_add(q.epsn, k * npk), [NAK_INV],
                                f'READ {k}, beyond max_dest_rd_atomic')
                self.counters(row, before, after, [('qp.NAK_INV_TX', '==', 1)])
                self.expect_state(row, q, 'ERR')
            else:
                self.counters(row, before, after, [('qp.NAK_INV_TX', '==', 0)])
                self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('huge READ', '8 READs of 64 KiB back to back with max_dest_rd_atomic 1',
                 'whole READs served in order, then (if one came while another streamed) '
                 'NAK-inv for it and ERR', over)

    def c_rnr(self):
        W = self.mrs['W']

        def rnr(row, op):
            q = self.new_qp()
            off, d = self.slot(), self.data(128)
            before = self.snap(q)
            if op == SEND_ONLY:
                bad = q.send(d)
            else:
                bad = q.write(W, off, d, op=WRITE_ONLY_IMM)
            got = self.xchg([bad])
            after = self.snap(q)
            m = q.mine(got)
            row.check(any(r['op'] == ACK and r['syn'] == SYN_RNR | RNR_TIMER and
                          r['psn'] == q.epsn for r in m),
                      f'want RNR NAK (timer {RNR_TIMER}) for 0x{q.epsn:06x}, got {desc(m)}')
            self.counters(row, before, after, [('qp.NAK_RNR_TX', '==', 1)])
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
            self.post_recv(q, 8192, 4096)
            got = self.xchg([bad])
            self.expect_ack(row, q, got, q.epsn, 'the same request once a receive is posted')
            wc = self.poll(q.qpn)
            row.check(len(wc) == 1 and wc[0]['status'] == 0, f'completion {wc}')
            if op == SEND_ONLY:
                self.apply('L', 8192, d)
            else:
                self.apply('W', off, d)
            self.verify_mrs(row)
        self.run('RNR', 'SEND ONLY with no receive posted',
                 f'RNR NAK (timer {RNR_TIMER}), RTS, nothing written; executed once a receive '
                 'is posted', lambda row: rnr(row, SEND_ONLY))
        self.run('RNR', 'WRITE with immediate with no receive posted',
                 'RNR NAK, RTS, nothing written; executed once a receive is posted',
                 lambda row: rnr(row, WRITE_ONLY_IMM))

        def too_long(row):
            q = self.new_qp()
            self.post_recv(q, 12288, 64)
            d = self.data(128)
            self.fatal(row, lambda q: [q.send(d)], [NAK_OP], q=q,
                       counters=[('qp.NAK_OP_TX', '==', 1)],
                       allowed={'L': [(12288, 64)]})
            wc = self.poll(q.qpn)
            row.check(wc and wc[0]['status'] == 1 and wc[0]['opcode'] == 'recv',
                      f'receive completion {wc} (want LOC_LEN_ERR)')
        self.run('RNR', 'SEND of 128 B into a 64 B receive',
                 'NAK-op, ERR, receive completes LOC_LEN_ERR, nothing past 64 B', too_long)

    def c_sr(self):
        W = self.mrs['W']

        def sr(row):
            q = self.new_qp()
            self.post_recv(q, 0, 4096, count=4)
            off = self.slot()
            frames = []
            for op in range(0xc0, 0xd8):
                hdrs = SR_OPS.get(op)
                if hdrs is None:
                    ext = reth(W['iova'] + off, W['rkey'], 64)
                else:
                    ext = b''.join({'reth': reth(W['iova'] + off, W['rkey'], 64),
                                    'aeth': aeth(SYN_ACK), 'imm': imm(9),
                                    'ieth': ieth(W['rkey']), 'sreth': sreth(0, 0)}[h]
                                   for h in hdrs)
                frames.append(q.frame(op, ext, self.data(64)))
            known = sum(op in SR_OPS for op in range(0xc0, 0xd8))
            before = self.snap(q)
            got = self.xchg(frames)
            after = self.snap(q)
            self.expect_silent(row, q, got, 'the selective-repeat opcodes')
            self.counters(row, before, after, [('qp.SR_REJECT', '==', known),
                                               ('DROP_OPCODE', '==', 24 - known)])
            row.check(not self.poll(q.qpn, 1, 0.05), 'a receive completed')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
            d = self.data(64)
            got = self.xchg([q.write(W, off, d)])
            self.expect_ack(row, q, got, q.epsn, 'control (valid WRITE at the same PSN)')
            self.apply('W', off, d)
            self.verify_mrs(row)
        self.run('SR opcodes', 'opcodes 0xC0-0xD7 on a QP without selective repeat',
                 'dropped silently (SR_REJECT for the 15 defined, DROP_OPCODE for 9), RTS',
                 sr)

        def inv(row):
            # Its own MR: should the key go, no other case is hit by it.
            V = self.ctl.call('mr.reg', size=4096, access=['local_write'] + QP_RIGHTS)['mr']
            try:
                q = self.new_qp()
                self.post_recv(q, 0, 4096)
                d = self.data(64)
                before = self.snap(q)
                got = self.xchg([q.frame(SEND_ONLY_INV, ieth(V['rkey']), d)])
                after = self.snap(q)
                self.poll(q.qpn)
                print(f'       SEND with invalidate: answer {desc(q.mine(got))}, QP '
                      f'{self.state(q)}, {self.moved(before, after)}', flush=True)
                # What the SEND itself landed in L is the receiver's business.
                self.verify_mrs(row, {'L': [(0, 64)]})
                self.counters(row, before, after, [('qp.INVALIDATED', '==', 0)])
                q2 = self.new_qp()
                vd = self.data(64)
                got = self.xchg([q2.write(V, 128, vd)])
                self.expect_ack(row, q2, got, q2.epsn, 'WRITE to the MR after the invalidate')
                q2.adv()
                got = self.xchg([q2.read(V, 128, 64)])
                m = [r for r in q2.mine(got) if r['op'] == RR_ONLY]
                row.check(m and m[0]['payload'] == vd, f'READ of the MR after the invalidate: '
                          f'{desc(got)}')
            finally:
                self.ctl.call('mr.dereg', ok=False, rkey=V['rkey'])
        self.run('SR opcodes', 'SEND ONLY with invalidate naming a plain (mr.reg) MR\'s rkey',
                 'the key stays valid: only fast-registration MRs and MWs are remotely '
                 'invalidated (rxe: REM_INV_REQ_ERR); WRITE/READ to it still execute', inv)

    def c_forged(self):
        L = self.mrs['L']

        def rq():
            return self.new_qp(timeout=0)

        def post_write(q, off=0):
            self.ctl.call('post.write', qpn=q.qpn, lkey=L['rkey'], offset=off, length=64,
                          remote_addr=0x10000, rkey=0x1234)
            self.wire.wait(lambda p: any(r['kind'] == 'roce' and r['qpn'] == q.fake and
                                         r['op'] == WRITE_ONLY for r in p), 3)
            reqs = [r for r in q.mine(self.barrier()) if r['op'] == WRITE_ONLY]
            return reqs[0] if reqs else None

        def ack(q, psn, syn=SYN_ACK, op=ACK, qpn=None, **kw):
            ext = aeth(syn, 1) + (struct.pack('!Q', 7) if op == ATOMIC_ACK else b'')
            return q.frame(op, ext, b'', psn=psn, qpn=q.qpn if qpn is None else qpn, ackreq=0,
                           **kw)

        def requester(row):
            q = rq()
            req = post_write(q)
            if not row.check(req is not None, 'roced sent no WRITE for post.write'):
                return
            row.check(req['psn'] == q.spsn and req['rkey'] == 0x1234 and req['va'] == 0x10000
                      and req['payload'] == bytes(self.model['L'][0:64]) and req['icrc_ok']
                      and req['dst'] == self.mac_b, f'the WRITE request {req}')
            p0 = req['psn']
            self.xchg([ack(q, p0)])
            wc = self.poll(q.qpn)
            row.check(len(wc) == 1 and wc[0]['status'] == 0, f'completion after the ACK {wc}')
            cases = [
                ('ghost ACK (PSN never sent)', [ack(q, psn_add(p0, 100))], 'qp.GHOST_ACK'),
                ('stale ACK (already acknowledged)', [ack(q, p0)], 'qp.STALE_RESP'),
                ('ghost ATOMIC_ACK', [ack(q, psn_add(p0, 1), op=ATOMIC_ACK)], 'qp.GHOST_ACK'),
            ]
            for what, frames, cnt in cases:
                before = self.snap(q)
                self.xchg(frames)
                after = self.snap(q)
                self.counters(row, before, after, [(cnt, '==', 1)])
                row.check(not self.poll(q.qpn, 1, 0.02), f'{what}: a completion appeared')
            req = post_write(q, 64)
            if not row.check(req is not None and req['psn'] == psn_add(p0, 1),
                             f'second WRITE {req}'):
                return
            p1 = req['psn']
            cases = [
                ('ACK from another source IP', [ack(q, p1, src_ip=IP_X)], 'qp.STATE_DROP', 1),
                ('NAK-acc from another source IP', [ack(q, p1, NAK_ACC, src_ip=IP_X)],
                 'qp.STATE_DROP', 1),
                ('ACK from another MAC and IP', [ack(q, p1, src_ip=IP_X, src_mac=MAC_EVIL)],
                 'qp.STATE_DROP', 1),
                ('NAK-acc to another QPN', [ack(q, p1, NAK_ACC, qpn=q.qpn + 1000)],
                 'UNKNOWN_QP', 1),
                ('NAK-acc for a PSN never sent', [ack(q, psn_add(p1, 50), NAK_ACC)],
                 'qp.GHOST_ACK', 1),
                ('ACK with a wrong ICRC', [ack(q, p1, bad_icrc=True)], 'DROP_ICRC', 1),
                ('CNP from another source IP', [q.frame(CNP, bytes(16), qpn=q.qpn, psn=0,
                                                        ackreq=0, src_ip=IP_X)],
                 'qp.STATE_DROP', 1),
            ]
            for what, frames, cnt, n in cases:
                before = self.snap(q)
                got = self.xchg(frames)
                after = self.snap(q)
                self.counters(row, before, after, [(cnt, '==', n)])
                row.check(not self.poll(q.qpn, 1, 0.02), f'{what}: a completion appeared')
                row.check(not [r for r in q.mine(got) if r['op'] == WRITE_ONLY],
                          f'{what}: roced resent the WRITE')
            self.expect_state(row, q, 'RTS')
            before = self.snap(q)
            got = self.xchg([q.frame(CNP, bytes(16), qpn=q.qpn, psn=0, ackreq=0)])
            after = self.snap(q)
            self.counters(row, before, after, [('qp.CNP_RX', '==', 1)])
            before = self.snap(q)
            self.wire.send([ack(q, p1, NAK_SEQ)])
            self.wire.wait(lambda p: any(r['kind'] == 'roce' and r['qpn'] == q.fake and
                                         r['op'] == WRITE_ONLY for r in p), 2)
            got = q.mine(self.barrier())
            after = self.snap(q)
            row.check(any(r['op'] == WRITE_ONLY and r['psn'] == p1 for r in got),
                      f'NAK-seq from the peer: no resend of 0x{p1:06x}: {desc(got)}')
            self.counters(row, before, after, [('qp.NAK_SEQ_RX', '==', 1),
                                               ('qp.RETRANSMITS', '>=', 1)])
            self.xchg([ack(q, p1)])
            wc = self.poll(q.qpn)
            row.check(len(wc) == 1 and wc[0]['status'] == 0,
                      f'completion after the genuine ACK {wc}')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('forged ACK/NAK/CNP', 'roced as requester: ghost, stale, off-path ACK/NAK/CNP, '
                 'then a genuine NAK-seq and ACK', 'forged ones ignored and counted, no '
                 'completion, RTS; the genuine ones complete the WQEs', requester)

        def init_ack(row):
            qp = self.ctl.call('qp.create', access=QP_RIGHTS)['qp']
            self.qps.append(qp['qpn'])
            q = PeerQP(self, qp, 0xb0001, 0)
            before = self.snap(q)
            self.xchg([ack(q, qp['psn']), q.frame(CNP, bytes(16), qpn=q.qpn, psn=0, ackreq=0)])
            after = self.snap(q)
            self.counters(row, before, after, [('qp.STATE_DROP', '==', 2)])
            self.expect_state(row, q, 'INIT')
        self.run('forged ACK/NAK/CNP', 'ACK and CNP to a QP in INIT', 'dropped, STATE_DROP +2',
                 init_ack)

        def read_resp(row):
            q = rq()
            req = post_write(q, 128)
            if not row.check(req is not None, 'roced sent no WRITE'):
                return
            before = self.snap(q)
            self.xchg([q.frame(RR_ONLY, aeth(SYN_ACK, 1), self.data(64), psn=req['psn'],
                               qpn=q.qpn, ackreq=0)])
            after = self.snap(q)
            self.counters(row, before, after, [('qp.BAD_RESP', '==', 1)])
            wc = self.poll(q.qpn)
            row.check(len(wc) == 1 and wc[0]['status'] != 0,
                      f'the WRITE should fail (bad response): {wc}')
            self.expect_state(row, q, 'ERR')
            self.verify_mrs(row)
        self.run('forged ACK/NAK/CNP', 'READ response for an outstanding WRITE\'s PSN',
                 'bad response: BAD_RESP +1, WQE fails, ERR, no local MR written', read_resp)

        def long_read_resp(row):
            q = rq()
            self.ctl.call('post.read', qpn=q.qpn, lkey=L['rkey'], offset=0x2000, length=64,
                          remote_addr=0x20000, rkey=0x4321)
            self.wire.wait(lambda p: any(r['kind'] == 'roce' and r['qpn'] == q.fake and
                                         r['op'] == READ_REQ for r in p), 3)
            reqs = [r for r in q.mine(self.barrier()) if r['op'] == READ_REQ]
            if not row.check(reqs and reqs[0]['dma_len'] == 64, f'READ request {reqs}'):
                return
            before = self.snap(q)
            self.xchg([q.frame(RR_ONLY, aeth(SYN_ACK, 1), self.data(256), psn=reqs[0]['psn'],
                               qpn=q.qpn, ackreq=0)])
            after = self.snap(q)
            self.counters(row, before, after, [('qp.BAD_RESP', '==', 1)])
            wc = self.poll(q.qpn)
            row.check(len(wc) == 1 and wc[0]['status'] != 0,
                      f'the READ should fail (response too long): {wc}')
            self.expect_state(row, q, 'ERR')
            self.verify_mrs(row, {'L': [(0x2000, 64)]})
        self.run('forged ACK/NAK/CNP', 'READ response of 256 B for a 64 B READ',
                 'bad response, WQE fails, ERR, nothing past the 64 B buffer', long_read_resp)

    def c_arp(self):
        W = self.mrs['W']

        def flood(row):
            q = self.new_qp()
            rng = self.rng
            frames = []
            for i in range(1500):
                m = '02:%02x:%02x:%02x:%02x:%02x' % tuple(rng.getrandbits(8) for _ in range(5))
                frames.append(raw(Ether(dst='ff:ff:ff:ff:ff:ff', src=m) /
                                  ARP(op=1, hwsrc=m, psrc=f'10.9.0.{rng.randrange(3, 250)}',
                                      pdst=IP_A)))
            for i in range(500):
                m = '02:%02x:%02x:%02x:%02x:%02x' % tuple(rng.getrandbits(8) for _ in range(5))
                frames.append(raw(Ether(dst='ff:ff:ff:ff:ff:ff', src=m) /
                                  ARP(op=1, hwsrc=m, psrc=f'10.9.0.{rng.randrange(3, 250)}',
                                      pdst='10.9.0.200')))
            # Poisoning: "the peer's IP is at the attacker's MAC", as requests and replies.
            for i in range(250):
                frames.append(raw(Ether(dst='ff:ff:ff:ff:ff:ff', src=MAC_EVIL) /
                                  ARP(op=2, hwsrc=MAC_EVIL, psrc=IP_B, hwdst='ff:ff:ff:ff:ff:ff',
                                      pdst=IP_B)))
                frames.append(raw(Ether(dst=self.mac_a, src=MAC_EVIL) /
                                  ARP(op=1, hwsrc=MAC_EVIL, psrc=IP_B, pdst=IP_A)))
            frames.append(raw(Ether(dst='ff:ff:ff:ff:ff:ff', src=MAC_EVIL) /
                              ARP(op=1, hwsrc=MAC_EVIL, psrc=IP_A, pdst=IP_A)))
            rng.shuffle(frames)
            before = self.snap(q)
            t0 = time.time()
            got = self.xchg(frames, pace=32)
            after = self.snap(q)
            replies = [r for r in got if r['kind'] == 'arp' and r['op'] == 2]
            print(f'       arp flood: {len(frames)} frames in {time.time() - t0:.2f}s, '
                  f'{len(replies)} replies', flush=True)
            other = [r for r in replies if r['spa'] != IP_A or r['sha'] != self.mac_a]
            row.check(not other, f'{len(other)} ARP replies for another address than ours: '
                      f'{other[:1]}')
            self.counters(row, before, after, [('NET_ARP_REPLY_TX', '>=', max(1, len(replies))),
                                               ('NET_ARP_NOT_US', '>=', 250),
                                               ('NET_ARP_CONFLICT', '>=', 1)])
            got = self.xchg([raw(Ether(dst='ff:ff:ff:ff:ff:ff', src=self.mac_b) /
                                 ARP(op=1, hwsrc=self.mac_b, psrc=IP_B, pdst=IP_A))])
            row.check(any(r['kind'] == 'arp' and r['op'] == 2 and r['sha'] == self.mac_a and
                          r['dst'] == self.mac_b for r in got),
                      f'no ARP reply to the genuine peer after the flood: {desc(got)}')
            off, d = self.slot(), self.data(64)
            got = self.xchg([q.write(W, off, d)])
            self.expect_ack(row, q, got, q.epsn, 'WRITE after the flood')
            self.apply('W', off, d)
            acks = q.mine(got)
            row.check(acks and all(r['dst'] == self.mac_b for r in acks),
                      f'ACKs go to {[r["dst"] for r in acks]}, not the peer '
                      f'{self.mac_b} (QP path poisoned)')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('ARP flood', '3001 ARP frames: requests from random hosts, for other hosts, '
                 'poisoning of the peer\'s IP, a conflict', 'replies only for our IP, counted; '
                 'the peer still resolved; the QP\'s ACKs still go to the peer', flood)

    def c_nd(self):
        W = self.mrs['W']
        snm, snm_mac = 'ff02::1:ff00:1', '33:33:ff:00:00:01'

        def ns(src_mac, src_ip, tgt=IP6_A, hlim=255):
            return raw(Ether(dst=snm_mac, src=src_mac) / IPv6(src=src_ip, dst=snm, hlim=hlim) /
                       ICMPv6ND_NS(tgt=tgt) / ICMPv6NDOptSrcLLAddr(lladdr=src_mac))

        def flood(row):
            q = self.new_qp()
            rng = self.rng
            frames = []

            def rmac():
                return '02:%02x:%02x:%02x:%02x:%02x' % tuple(rng.getrandbits(8)
                                                              for _ in range(5))

            def rip():
                return 'fd00:9::%x:%x' % (rng.getrandbits(16), rng.getrandbits(16) | 1)
            for _ in range(1200):
                frames.append(ns(rmac(), rip()))
            for _ in range(300):
                frames.append(ns(rmac(), rip(), tgt='fd00:9::99'))
            for _ in range(300):
                frames.append(ns(rmac(), rip(), hlim=64))
            for _ in range(300):
                m = rmac()
                frames.append(raw(Ether(dst='33:33:00:00:00:01', src=m) /
                                  IPv6(src=rip(), dst='ff02::1') /
                                  ICMPv6ND_NA(tgt='fd00:9::2', R=0, S=0, O=1) /
                                  ICMPv6NDOptDstLLAddr(lladdr=m)))
            rng.shuffle(frames)
            before = self.snap(q)
            t0 = time.time()
            got = self.xchg(frames, pace=32)
            after = self.snap(q)
            nas = [r for r in got if r['kind'] == 'icmp6' and r['type'] == 136]
            print(f'       nd flood: {len(frames)} frames in {time.time() - t0:.2f}s, '
                  f'{len(nas)} advertisements', flush=True)
            row.check(all(r['target'] == IP6_A for r in nas), 'advertised another target')
            self.counters(row, before, after, [('NET_NA_TX', '>=', max(1, len(nas))),
                                               ('NET_NS_NOT_US', '>=', 150),
                                               ('NET_ND_HOPLIMIT', '>=', 150),
                                               ('NET_NA_UNSOLICITED', '>=', 150)])
            got = self.xchg([ns(self.mac_b, 'fd00:9::2')])
            row.check(any(r['kind'] == 'icmp6' and r['type'] == 136 and r['target'] == IP6_A
                          and r['src'] == self.mac_a for r in got),
                      f'no NA to a genuine solicitation after the flood: {desc(got)}')
            off, d = self.slot(), self.data(64)
            got = self.xchg([q.write(W, off, d)])
            self.expect_ack(row, q, got, q.epsn, 'WRITE after the flood')
            self.apply('W', off, d)
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('ND flood', '2100 ND frames: solicitations from random hosts, for another '
                 'target, hop limit 64, unsolicited NAs', 'NAs only for our address, counted; '
                 'a genuine NS still answered; the QP still works', flood)

    def c_random(self):
        W = self.mrs['W']

        def drops(c):
            return sum(v for k, v in c.items() if k.startswith('DROP_'))

        def noise(row):
            q = self.new_qp()
            rng = self.rng
            frames = []
            for _ in range(1000):
                n = rng.randrange(0, 1200)
                body = bytes(rng.getrandbits(8) for _ in range(n))
                f = bytearray(raw(Ether(dst=self.mac_a, src=self.mac_b) /
                                  IP(src=IP_B, dst=IP_A) /
                                  UDP(sport=0xc0de, dport=4791, chksum=0) / Raw(body)))
                frames.append(bytes(f))
            before = self.snap(q)
            got = self.xchg(frames, pace=32)
            after = self.snap(q)
            row.check(not [r for r in got if r['kind'] == 'roce'], f'answers {desc(got)}')
            d = after['RX_ROCE'] - before['RX_ROCE']
            row.check(d == 0, f'{d} random datagrams taken as RoCE')
            dd = drops(after) - drops(before)
            row.check(dd >= 950, f'DROP_* moved by {dd} for 1000 random datagrams')
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
            off, dt = self.slot(), self.data(64)
            got = self.xchg([q.write(W, off, dt)])
            self.expect_ack(row, q, got, q.epsn, 'control WRITE after the noise')
            self.apply('W', off, dt)
            self.verify_mrs(row)
        self.run('random 4791', '1000 random UDP payloads to port 4791',
                 'every one dropped by the classifier (DROP_*), none acted on, RTS', noise)

        def valid_icrc(row):
            q = self.new_qp()
            rng = self.rng
            frames = []
            for i in range(1000):
                op = rng.getrandbits(8)
                qpn = q.qpn if i % 2 == 0 else rng.getrandbits(24)
                body = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 300)))
                f = roce_frame(self.mac_a, self.mac_b, IP_B, IP_A, op, qpn,
                               rng.getrandbits(24), body[:40], body[40:], sport=q.sport)
                frames.append(f)
            before = self.snap(q)
            got = self.xchg(frames, pace=32)
            after = self.snap(q)
            rx = (after['RX_ROCE'] - before['RX_ROCE']) + (drops(after) - drops(before))
            row.check(rx >= 950, f'RX_ROCE + DROP_* moved by {rx} for 1000 frames')
            leaked = [r for r in q.mine(got) if r['op'] == ATOMIC_ACK or
                      (r['op'] in (RR_FIRST, RR_ONLY) and r['payload'])]
            row.check(not leaked, f'{len(leaked)} READ/atomic responses with data to random '
                      'requests')
            print(f'       random BTH: QP state {self.state(q)}, {len(q.mine(got))} answers',
                  flush=True)
            self.verify_mrs(row)
        self.run('random 4791', '1000 random BTH/headers/payloads with a valid ICRC (half to '
                 'a live QP)', 'no MR written, no data out, daemon serves (QP state free)',
                 valid_icrc)

        def truncated(row):
            q = self.new_qp()
            off, d = self.slot(), self.data(64)
            full = q.write(W, off, d)
            frames = [full[:n] for n in range(14, len(full))]
            before = self.snap(q)
            got = self.xchg(frames)
            after = self.snap(q)
            self.expect_silent(row, q, got, 'a truncated frame')
            rx = after['PORT_RX_PKTS'] - before['PORT_RX_PKTS']
            dd = drops(after) - drops(before) + after['OTHER_DROP'] - before['OTHER_DROP']
            row.check(dd >= len(frames),
                      f'{len(frames)} truncated frames, {rx} received, {dd} dropped')
            self.counters(row, before, after, [('qp.RX_PKTS', '==', 0)])
            self.verify_mrs(row)
            got = self.xchg([full])
            self.expect_ack(row, q, got, q.epsn, 'the whole frame')
            self.apply('W', off, d)
            self.expect_state(row, q, 'RTS')
            self.verify_mrs(row)
        self.run('random 4791', 'a valid WRITE cut at every length',
                 'each prefix dropped and counted, not executed; the whole frame executes',
                 truncated)

    def c_model(self):
        """Random but plausible requests at the expected PSNs, checked against a model of IBA's
        responder: which request is NAKed, READ data byte for byte, MR bytes written only by
        requests the model accepts."""
        W, A, RO = self.mrs['W'], self.mrs['A'], self.mrs['RO']

        def inside(mr, va, n):
            return va >= mr['iova'] and n <= mr['length'] and \
                va - mr['iova'] <= mr['length'] - n

        def model(row):
            rng = random.Random(SEED + 7)
            plans, frames = [], []
            allowed = {'W': [], 'A': [], 'L': []}
            for n in range(48):
                q = self.new_qp()
                lbase = n * 256
                self.post_recv(q, lbase, 128)
                self.post_recv(q, lbase + 128, 128)
                recvs, psn, fate, reads = 2, q.epsn, None, {}
                for i in range(rng.randrange(1, 9)):
                    kind = rng.choice(('write', 'write', 'read', 'read', 'atomic', 'send'))
                    # Three in four are meant to be valid (the model still judges each).
                    tame = rng.random() < 0.75
                    key = rng.choices((W, A, RO, None), weights=(4, 4, 3, 1))[0]
                    if tame:
                        key = {'write': rng.choice((W, A)), 'read': RO, 'atomic': A,
                               'send': None}[kind]
                    rkey = key['rkey'] if key else rng.getrandbits(32)
                    base = key or W
                    off = rng.choice((0, 8, 64, 1000, base['length'] - 8, base['length'] - 64,
                                      base['length'], rng.randrange(0, base['length'] - 64),
                                      rng.randrange(0, base['length'] - 64),
                                      rng.randrange(-64, base['length'] + 64)))
                    if tame:
                        off = rng.randrange(0, base['length'] - 1024) & ~7
                    va = (base['iova'] + off) & M64
                    ok, npk, note = False, 1, None
                    if kind == 'write':
                        plen = rng.choice((0, 1, 7, 64, 1024))
                        rlen = plen if tame or rng.random() < 0.8 else \
                            rng.choice((plen + 1, 1 << 31))
                        f = q.write(base, 0, self.data(plen), va=va, rkey=rkey, rlen=rlen,
                                    psn=psn)
                        ok = rlen == plen and (plen == 0 or (key in (W, A) and
                                                             inside(key, va, plen)))
                        if ok and plen:
                            note = (key['name'], va - key['iova'], plen)
                    elif kind == 'read':
                        key = RO if key in (W, A) else key      # READ only what is never written
                        rkey = key['rkey'] if key else rkey
                        ln = rng.choice((0, 1, 8, 64, 100, 1024, 3000) if tame else
                                        (0, 1, 8, 100, 1024, 3000, 4096, 4097, 1 << 31,
                                         0xffffffff))
                        f = q.read(RO, 0, ln, va=va, rkey=rkey, psn=psn)
                        ok = ln <= (1 << 31) and (ln == 0 or (key is RO and inside(RO, va, ln)))
                        if ok and fate is None:
                            npk = max(1, -(-ln // MTU))
                            data = bytes(self.model['RO'][va - RO['iova']:va - RO['iova'] + ln]) \
                                if ln else b''
                            for j in range(npk):
                                reads[psn_add(psn, j)] = data[j * MTU:(j + 1) * MTU]
                    elif kind == 'atomic':
                        op = rng.choice((FETCH_ADD, CMP_SWAP))
                        f = q.atomic(op, base, 0, rng.getrandbits(64), rng.getrandbits(64),
                                     va=va, rkey=rkey, psn=psn)
                        ok = va % 8 == 0 and key is A and inside(A, va, 8)
                        if ok:
                            note = ('A', va - A['iova'], 8)
                    else:
                        plen = rng.choice((0, 1, 64, 128) if tame else (0, 64, 128, 129, 1024))
                        f = q.send(self.data(plen), psn=psn)
                        if recvs == 0:
                            fate = fate or ('rnr', psn)
                        ok = recvs > 0 and plen <= 128
                        if recvs > 0:
                            allowed['L'].append((lbase + 128 * (2 - recvs), 128))
                            recvs -= 1
                    frames.append(f)
                    if fate is None and not ok:
                        fate = ('nak', psn)
                    if fate is None:
                        if note:
                            allowed[note[0]].append(note[1:])
                        psn = psn_add(psn, npk)
                    else:
                        psn = psn_add(psn, 1)
                plans.append((q, fate, reads))
            before = self.snap()
            self.wire.send(frames, pace=16)
            nreads = sum(len(r) for _, _, r in plans)
            self.wire.wait(lambda p: sum(1 for r in p if r['kind'] == 'roce' and
                                         r['op'] in (RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY))
                           >= nreads, 5)
            got = self.barrier()
            after = self.snap()
            self.icrc_ok(row, got)
            fates = {'ok': 0, 'nak': 0, 'rnr': 0}
            for q, fate, reads in plans:
                m = q.mine(got)
                rr = {r['psn']: r['payload'] for r in m if r['op'] in
                      (RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY)}
                extra = sorted(set(rr) - set(reads))
                row.check(not extra, f'QP 0x{q.qpn:x}: READ responses for PSNs the model '
                          f'rejects: {[hex(p) for p in extra[:4]]}')
                bad = [p for p in reads if p in rr and rr[p] != reads[p]]
                row.check(not bad, f'QP 0x{q.qpn:x}: READ data differs from the MR at '
                          f'{[hex(p) for p in bad[:4]]}')
                missing = [p for p in reads if p not in rr]
                row.check(not missing, f'QP 0x{q.qpn:x}: {len(missing)} READ responses missing')
                fates[fate[0] if fate else 'ok'] += 1
                st = self.state(q)
                if fate is None:
                    nak = [r for r in m if r['op'] == ACK and r['syn'] >> 5 != 0]
                    row.check(not nak and st == 'RTS',
                              f'QP 0x{q.qpn:x}: all valid, got {desc(nak)}, state {st}')
                elif fate[0] == 'rnr':
                    row.check(any(r['op'] == ACK and r['syn'] >> 5 == 1 and r['psn'] == fate[1]
                                  for r in m) and st == 'RTS',
                              f'QP 0x{q.qpn:x}: want RNR at 0x{fate[1]:06x}: {desc(m)}, {st}')
                else:
                    row.check(any(r['op'] == ACK and r['syn'] in (NAK_INV, NAK_ACC, NAK_OP) and
                                  r['psn'] == fate[1] for r in m) and st == 'ERR',
                              f'QP 0x{q.qpn:x}: want a fatal NAK at 0x{fate[1]:06x}: '
                              f'{desc(m)}, state {st}')
            print(f'       model: {len(frames)} requests on {len(plans)} QPs: {fates}; '
                  f'{self.moved(before, after)}', flush=True)
            self.verify_mrs(row, allowed)
        self.run('random model', '48 QPs, 1-8 random requests each (random keys, addresses, '
                 'lengths around real MRs) at the expected PSNs',
                 'the NAK, READ data and MR writes a model of IBA predicts', model)

    def finish(self, rc):
        log = self.d.tail(400) if self.d else ''
        row = Row('daemon', 'exit and sanitizers', 'SIGTERM: exit 0, no ASan/UBSan report')
        row.check(rc == 0, f'roced exit status {rc}')
        for pat in ('ERROR: AddressSanitizer', 'runtime error:', 'ERROR: LeakSanitizer'):
            if pat in log:
                i = log.index(pat)
                row.fail(f'sanitizer: {log[i:i + 300]!r}')
        self.rows.append(row)
        print(f"[{'PASS' if not row.fails else 'FAIL'}] daemon: exit and sanitizers", flush=True)
        for f in row.fails:
            print(f'       - {f}', flush=True)
        if row.fails:
            print(f'--- roced log ---\n{self.d.tail(60)}', flush=True)

    def table(self):
        w1 = max(len(r.cls) for r in self.rows)
        w2 = min(64, max(len(r.case) for r in self.rows))
        w3 = max(len(r.expect) for r in self.rows)
        print()
        print(f"{'class':<{w1}} | {'case':<{w2}} | {'expectation':<{w3}} | result")
        print('-' * (w1 + w2 + w3 + 20))
        for r in self.rows:
            print(f"{r.cls:<{w1}} | {r.case[:w2]:<{w2}} | {r.expect:<{w3}} | "
                  f"{'PASS' if not r.fails else 'FAIL: ' + r.fails[0][:160]}")
        passed = sum(1 for r in self.rows if not r.fails)
        failed = len(self.rows) - passed
        print(f'{passed} passed, {failed} failed')
        return 1 if failed else 0


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if os.geteuid() != 0 or sh('ip', 'netns', 'list', check=False).returncode != 0:
        print('hostile: needs root and ip netns: skipped')
        return 77
    # A timeout's SIGTERM unwinds through the finally below: namespaces and daemon go.
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    h = Hostile(os.path.abspath(sys.argv[1]))
    t0 = time.time()
    try:
        try:
            h.setup()
            for c in (h.c_selfcheck, h.c_positive, h.c_l2, h.c_ip_udp, h.c_qpn, h.c_psn,
                      h.c_reth, h.c_atomic, h.c_rkey, h.c_sequence, h.c_read, h.c_rnr, h.c_sr,
                      h.c_forged, h.c_arp, h.c_nd, h.c_random, h.c_model):
                c()
        except (Failure, OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
            h.rows.append(Row('setup', 'the test itself', 'runs to the end'))
            h.rows[-1].fail(str(e))
            print(f'hostile: {e}', flush=True)
            if h.d is not None:
                print(f'--- roced log ---\n{h.d.tail()}')
        finally:
            rc = h.teardown()
        if h.d is not None:
            h.finish(rc)
    finally:
        shutil.rmtree(h.tmp, ignore_errors=True)
    ret = h.table()
    print(f'hostile: {time.time() - t0:.1f}s')
    return ret

if __name__ == '__main__':
    sys.exit(main())
