#!/usr/bin/python3
"""QP1 of a real roced, from the wire: roced in a network namespace on two net_af_packet
ports (two veth pairs, a subnet each); in a second namespace this test writes MADs to QPN 1
with scapy (ICRC computed as test_hostile.py does) and reads what comes back on raw sockets.

- The REQ rping sent in ../shared/captures/roce_rdma_cm_rping.pcap, readdressed: reaches the
  GSI agent (GSI_RX), no connection manager runs, so it counts as GSI_NO_CM and nothing is
  answered (no REP, no REJ).
- A SIDR_REQ on each port: a SIDR_REP comes back from that port's QP1, decoded field by field
  here and by tshark (MAD header, no expert info): UD SEND Only with AckReq, P_Key 0xFFFF, to
  QPN 1, DETH Q_Key 0x80010000 from QP 1, UDP source port 0xD872, TTL 64, DF, DSCP 0, not
  ECT, a valid ICRC; class 0x07 version 2 Send(), attribute 0x0018, the request's TID, the
  request ID and service ID echoed, status 1 (unsupported), QPN and Q_Key 0.
- Malformed MADs, each counted under its name and answered with nothing: 200 bytes
  (GSI_BAD_LEN), 300 bytes (QP1's UD_RX_TOO_LONG), base version 0x80, PerfMgt class, class
  version 1, method Get(), attribute 0x0030 and ClassPortInfo (GSI_BAD_ATTR), a REJ with an
  ARI length of 100 (GSI_BAD_FIELD), a LAP (GSI_DROP), a SIDR_REP nobody asked for
  (GSI_SIDR_UNMATCHED); the wrong Q_Key (UD_QKEY_DROP), the wrong P_Key (BAD_PKEY), a bad
  ICRC (DROP_ICRC); on port 1's wire to port 0's address (GSI_BAD_DGID).
- A burst of 400 SIDR_REQs: every one is answered or counted (GSI_SIDR_REP_TX,
  GSI_RX_RING_FULL, QP1's UD_NO_RECV), none lost unaccounted.
- Throughout: QPN 1 never counts NOT_OURS or UNKNOWN_QP, the daemon answers a fresh rocectl,
  a UD QP of a client receives before and after untouched, and QP1 stays in RTS with its
  receives posted (gsi.show).

usage: test_gsi.py BUILD_DIR
"""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Daemon, Failure, poll_wc  # noqa: E402

try:
    import test_hostile as H
    from scapy.all import rdpcap, wrpcap, Ether
except ImportError as e:  # pragma: no cover
    print(f'gsi: scapy unavailable ({e}): skipped')
    sys.exit(77)

# The frames roced sends, raw bytes kept too (sidr_rep_fields(), tshark).
_parse = H.parse


def _parse_raw(f):
    r = _parse(f)
    r['raw'] = bytes(f)
    return r


H.parse = _parse_raw


class Wire(H.Wire):
    """test_hostile's raw socket on a peer interface; only the first holds UDP port 4791 (so
    that the peer's kernel sends no ICMP unreachable for roced's frames)."""

    def __init__(self, ns, ifname, udp_port):
        def make():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
            s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)      # SO_RCVBUFFORCE
            s.bind((ifname, 0))
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.bind(('0.0.0.0', udp_port))
            return s, u
        self.s, self.udp = H.in_netns(ns, make)
        self.s.setblocking(False)
        self.udp.setblocking(False)
        self.pending = []

TAG = f'gq{os.getpid() % 100000}'
NS_A, NS_B = f'{TAG}a', f'{TAG}b'
IFS = [(f'{TAG}x0', f'{TAG}y0'), (f'{TAG}x1', f'{TAG}y1')]
IP_A = ['10.31.0.1', '10.31.1.1']
IP_B = ['10.31.0.2', '10.31.1.2']
GSI_QKEY = 0x80010000
UD_SEND_ONLY = 0x64
CONF = """[roced]
mtu = 1500
[port0]
device = net_af_packet0
ipv4 = {a0}/24
[port1]
device = net_af_packet1
ipv4 = {a1}/24
"""

# CM attributes and the MAD header (IBA 13.4.2, 12.6).
ATTR_REQ, ATTR_REJ, ATTR_SIDR_REQ, ATTR_SIDR_REP, ATTR_LAP = 0x10, 0x12, 0x17, 0x18, 0x19
ATTR_DREQ, ATTR_DREP = 0x15, 0x16


def mad_hdr(attr, tid, base=1, mclass=7, cver=2, method=3, status=0):
    return struct.pack('!BBBBHHQHHI', base, mclass, cver, method, status, 0, tid, attr, 0, 0)


def mad(attr, tid, body=b'', **kw):
    m = mad_hdr(attr, tid, **kw) + body
    return m + bytes(256 - len(m))


def sidr_req(req_id, service_id, tid):
    """IBA table 119: request ID, P_Key, reserved, service ID, private data."""
    return mad(ATTR_SIDR_REQ, tid, struct.pack('!IHHQ', req_id, 0xffff, 0, service_id))


class Gsi:
    def __init__(self, build):
        self.build = build
        self.tmp = tempfile.mkdtemp(prefix='rocedp-gsi-')
        self.nets, self.d, self.wires = [], None, []

    def setup(self):
        for ns in (NS_A, NS_B):
            H.sh('ip', 'netns', 'add', ns)
            self.nets.append(ns)
            H.sh('ip', '-n', ns, 'link', 'set', 'lo', 'up')
            for k in ('all', 'default'):
                H.sh('ip', 'netns', 'exec', ns, 'sysctl', '-qw',
                     f'net.ipv6.conf.{k}.disable_ipv6=1', check=False)
        self.mac_b = []
        for i, (x, y) in enumerate(IFS):
            H.sh('ip', 'link', 'add', x, 'netns', NS_A, 'type', 'veth', 'peer', 'name', y,
                 'netns', NS_B)
            for ns, dev in ((NS_A, x), (NS_B, y)):
                H.sh('ip', 'netns', 'exec', ns, 'ethtool', '-K', dev, 'tx', 'off', 'rx', 'off',
                     check=False)
                H.sh('ip', '-n', ns, 'link', 'set', dev, 'up')
            H.sh('ip', '-n', NS_B, 'addr', 'add', f'{IP_B[i]}/24', 'dev', y)
            self.mac_b.append(json.loads(H.sh('ip', '-n', NS_B, '-j', 'link', 'show', y).stdout)
                              [0]['address'].lower())
            self.wires.append(Wire(NS_B, y, 4791 if i == 0 else 0))
        conf = os.path.join(self.tmp, 'roced.conf')
        with open(conf, 'w') as f:
            f.write(CONF.format(a0=IP_A[0], a1=IP_A[1]))
        self.d = Daemon(self.build, self.tmp, 'gsi',
                        # A null device first: the ports' ethdev ids (1, 2) are not their
                        # dataplane indexes (0, 1), which QP1's routing must use.
                        ['-l', '0,1', '--vdev=net_null0'] +
                        [f'--vdev=net_af_packet{i},iface={x}' for i, (x, _) in enumerate(IFS)],
                        ['--config', conf], NS_A)
        self.d.wait_ready()
        ports = self.d.ctl('port', 'show')['ports']
        self.mac_a = [p['mac'].lower() for p in ports]
        # "dataplane: port ID (DEVICE, ...)": the ethdev id of each dataplane port.
        log = open(self.d.log).read()
        self.port_ids = [int(m.group(1)) for dev in ('net_af_packet0', 'net_af_packet1')
                         for m in [re.search(r'port (\d+) \(' + dev + ',', log)] if m]

    def teardown(self):
        rc = None
        if self.d is not None:
            rc = self.d.stop()
        for w in self.wires:
            w.close()
        for ns in self.nets:
            H.sh('ip', 'netns', 'del', ns, check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return rc

    def frame(self, port, payload, qkey=GSI_QKEY, src_qp=1, dst_ip=None, qpn=1, **kw):
        return H.roce_frame(self.mac_a[port], self.mac_b[port], IP_B[port],
                            dst_ip or IP_A[port], UD_SEND_ONLY, qpn, 0,
                            ext=H.deth(qkey, src_qp), payload=payload, **kw)

    def counters(self):
        return self.d.ctl('counters')['counters']

    def settle(self):
        """Wait until QP1's receives are all back: what was sent has been taken in."""
        end = time.time() + 3
        while time.time() < end:
            ports = self.d.ctl('gsi', 'show')['ports']
            if all(p['recv_posted'] == 64 for p in ports):
                time.sleep(0.05)        # the agent's loop: at most 10 ms behind
                return ports
            time.sleep(0.02)
        return self.d.ctl('gsi', 'show')['ports']

    def roce_back(self, port, timeout):
        """RoCE frames roced sent on @port's wire within @timeout."""
        w = self.wires[port]
        w.pump(timeout)
        end = time.time() + timeout
        while time.time() < end:
            w.pump(0.05)
        return [r for r in w.take() if r['kind'] == 'roce']


def delta(after, before, name):
    return after.get(name, 0) - before.get(name, 0)


def sidr_rep_fields(raw):
    """The SIDR_REP in a raw frame (IPv4, no VLAN): what the checks compare."""
    ip, udp, bth = 14, 34, 42
    mad_off = bth + 12 + 8
    m = raw[mad_off:mad_off + 256]
    base, mclass, cver, method, status, _, tid, attr, _, amod = \
        struct.unpack_from('!BBBBHHQHHI', m, 0)
    d = m[24:]
    return {
        'ttl': raw[ip + 8], 'tos': raw[ip + 1], 'df': bool(raw[ip + 6] & 0x40),
        'sport': H.u16(raw, udp), 'op': raw[bth], 'ackreq': raw[bth + 8] >> 7,
        'pkey': H.u16(raw, bth + 2), 'dqpn': H.u32(raw, bth + 4) & 0xffffff,
        'qkey': H.u32(raw, bth + 12), 'sqp': H.u32(raw, bth + 16) & 0xffffff,
        'mad_len': len(raw) - mad_off - 4,
        'base': base, 'class': mclass, 'cver': cver, 'method': method, 'mad_status': status,
        'tid': tid, 'attr': attr, 'attr_mod': amod,
        'request_id': H.u32(d, 0), 'status': d[4], 'info_len': d[5],
        'qpn': H.u32(d, 8) >> 8, 'service_id': H.u64(d, 12), 'rep_qkey': H.u32(d, 20),
        'rest_zero': d[24:] == bytes(len(d) - 24),
    }


def tshark_check(t, tmp, raw, tid):
    """tshark decodes the MAD header of our SIDR_REP and finds nothing to complain about."""
    if shutil.which('tshark') is None:
        t(False, 'tshark present (the SIDR_REP decode needs it)')
        return
    pcap = os.path.join(tmp, 'sidr_rep.pcap')
    wrpcap(pcap, [Ether(raw)])
    r = subprocess.run(['tshark', '-r', pcap, '-T', 'fields', '-e', 'infiniband.bth.opcode',
                        '-e', 'infiniband.deth.q_key', '-e', 'infiniband.deth.srcqp',
                        '-e', 'infiniband.mad.mgmtclass', '-e', 'infiniband.mad.classversion',
                        '-e', 'infiniband.mad.method', '-e', 'infiniband.mad.transactionid',
                        '-e', 'infiniband.mad.attributeid', '-e', '_ws.expert'],
                       capture_output=True, text=True, timeout=30)
    f = r.stdout.strip().split('\t')
    t(r.returncode == 0 and len(f) >= 8 and f[0] == '100' and int(f[1], 16) == GSI_QKEY and
      int(f[2], 16) == 1 and int(f[3], 16) == 7 and int(f[4], 16) == 2 and
      int(f[5], 16) == 3 and int(f[6], 16) == tid and int(f[7], 16) == ATTR_SIDR_REP and
      (len(f) < 9 or f[8] == ''),
      f'tshark: UD SEND Only, Q_Key, QP 1, class 7 v2 Send(), TID, SIDR_REP, no expert info: '
      f'{r.stdout.strip()} {r.stderr[-200:]}')


def run(g, t):
    d = g.d
    wire = g.wires
    # A UD QP of a client on port 0, to show other QPs unaffected.
    mr = d.ctl('mr', 'reg', 65536)['mr']
    ud = d.ctl('qp', 'create', 'type=ud', 'qkey=0x1234')['qp']

    def ud_ok(what, seq):
        d.ctl('post', 'recv', ud['qpn'], f"lkey={mr['lkey']}", 'length=2048')
        wire[0].send([g.frame(0, bytes([seq]) * 64, qkey=0x1234, src_qp=0x77, qpn=ud['qpn'])])
        wc = poll_wc(d, ud['qpn'], 1, timeout=3)
        t(len(wc) == 1 and wc[0]['status'] == 0 and wc[0]['src_qp'] == 0x77 and
          wc[0]['byte_len'] == 104, f'{what}: the client\'s UD QP receives: {wc}')

    t(g.port_ids == [1, 2], f'ethdev ids 1 and 2 behind ports 0 and 1: {g.port_ids}')
    ud_ok('before', 1)
    ports = d.ctl('gsi', 'show')['ports']
    t(len(ports) == 2 and all(p['qpn'] == 1 and p['state'] == 'RTS' and p['qkey'] == GSI_QKEY
                              and p['recv_posted'] == 64 for p in ports),
      f'a QP1 per port in RTS, 64 receives posted: {ports}')
    t(all(q['qpn'] != 1 for q in d.ctl('qp', 'show')['qps']), 'qp show lists no QP1')

    # The captured rping REQ, readdressed: the agent hands it to the CM, which answers as
    # Linux's does when nobody listens on the service: a REJ, reason 8 (invalid service ID),
    # from QP1 to the sender's QP1, with the REQ's transaction ID.
    caps = rdpcap(os.path.join(H.CAPTURES, 'roce_rdma_cm_rping.pcap'))
    req = bytes(caps[0])[14 + 20 + 8 + 12 + 8:-4]
    t(len(req) == 256 and req[1] == 7 and struct.unpack_from('!H', req, 16)[0] == ATTR_REQ,
      'the capture\'s first frame is the REQ')
    b = g.counters()
    wire[0].send([g.frame(0, req)])
    back = g.roce_back(0, 0.5)
    g.settle()
    a = g.counters()
    t(delta(a, b, 'GSI_RX') == 1 and delta(a, b, 'GSI_CM') == 1 and
      delta(a, b, 'GSI_NO_CM') == 0 and delta(a, b, 'GSI_TX') == 1,
      f'rping REQ: GSI_RX +{delta(a, b, "GSI_RX")}, GSI_CM +{delta(a, b, "GSI_CM")}, '
      f'GSI_TX +{delta(a, b, "GSI_TX")}')
    rej = [f for f in back if f['qpn'] == 1 and len(f['payload']) >= 8 + 256]
    if t(len(rej) == 1, f'one MAD back to QP1: {back}'):
        r = rej[0]['payload'][8:8 + 256]        # after the DETH
        t(struct.unpack_from('!H', r, 16)[0] == ATTR_REJ and r[8:16] == req[8:16] and
          struct.unpack_from('!H', r, 24 + 10)[0] == 8,
          f"the answer is a REJ with the REQ's TID and reason 8: {r[:40].hex()}")

    # A SIDR_REQ on each port: the SIDR_REP of that port's QP1.
    for port in (0, 1):
        req_id, sid, tid = 0x1234567 + port, 0x0000000001110000 | (4791 + port), \
            0x0000000200000000 | (0xabc0 + port)
        b = g.counters()
        before = d.ctl('gsi', 'show')['ports']
        wire[port].pending.clear()
        wire[port].send([g.frame(port, sidr_req(req_id, sid, tid))])
        ok = wire[port].wait(lambda rs: any(r['kind'] == 'roce' for r in rs), 3)
        reps = [r for r in wire[port].take() if r['kind'] == 'roce']
        t(ok and len(reps) == 1, f'port {port}: one RoCE frame back: {reps}')
        if not reps:
            continue
        r = reps[0]
        t(r['icrc_ok'] and r['src_ip'] == IP_A[port] and r['dst_ip'] == IP_B[port] and
          r['dst'] == g.mac_b[port] and r['src'] == g.mac_a[port],
          f'port {port}: from its address to ours, ICRC valid: {r}')
        raw = bytes(r['raw'])
        f = sidr_rep_fields(raw)
        t(f['op'] == UD_SEND_ONLY and f['ackreq'] == 1 and f['pkey'] == 0xffff and
          f['dqpn'] == 1 and f['qkey'] == GSI_QKEY and f['sqp'] == 1 and
          f['sport'] == 0xd872 and f['ttl'] == 64 and f['df'] and f['tos'] == 0 and
          f['mad_len'] == 256,
          f'port {port}: UD/BTH/DETH/IP as rxe sends a CM MAD: {f}')
        t(f['base'] == 1 and f['class'] == 7 and f['cver'] == 2 and f['method'] == 3 and
          f['mad_status'] == 0 and f['tid'] == tid and f['attr'] == ATTR_SIDR_REP and
          f['attr_mod'] == 0, f'port {port}: MAD header, the request\'s TID: {f}')
        t(f['request_id'] == req_id and f['status'] == 1 and f['info_len'] == 0 and
          f['qpn'] == 0 and f['service_id'] == sid and f['rep_qkey'] == 0 and f['rest_zero'],
          f'port {port}: SIDR_REP status 1, request and service IDs echoed: {f}')
        if port == 0:
            tshark_check(t, g.tmp, raw, tid)
        after = g.settle()
        a = g.counters()
        t(delta(a, b, 'GSI_SIDR_REQ') == 1 and delta(a, b, 'GSI_SIDR_REP_TX') == 1 and
          delta(a, b, 'GSI_TX') == 1, f'port {port}: GSI_SIDR_REQ, GSI_SIDR_REP_TX, GSI_TX +1')
        t(after[port]['rx_pkts'] == before[port]['rx_pkts'] + 1 and
          after[port]['tx_pkts'] == before[port]['tx_pkts'] + 1 and
          after[1 - port]['rx_pkts'] == before[1 - port]['rx_pkts'],
          f'port {port}: its own QP1 took it and answered, not the other port\'s: '
          f'{before} -> {after}')

    # Malformed: each counted under its name, nothing sent back.
    rej_bad_ari = mad(ATTR_REJ, 5, struct.pack('!IIBB', 1, 2, 0, 100 << 1))
    cases = [
        ('200 bytes', g.frame(0, sidr_req(1, 0, 1)[:200]), 'GSI_BAD_LEN'),
        ('300 bytes', g.frame(0, sidr_req(1, 0, 1) + bytes(44)), 'UD_RX_TOO_LONG'),
        ('base version 0x80', g.frame(0, mad(ATTR_SIDR_REQ, 2, base=0x80)),
         'GSI_BAD_BASE_VERSION'),
        ('PerfMgt class', g.frame(0, mad(ATTR_SIDR_REQ, 3, mclass=4)), 'GSI_BAD_CLASS'),
        ('class version 1', g.frame(0, mad(ATTR_SIDR_REQ, 4, cver=1)), 'GSI_BAD_CLASS_VERSION'),
        ('method Get()', g.frame(0, mad(ATTR_SIDR_REQ, 5, method=1)), 'GSI_BAD_METHOD'),
        ('attribute 0x0030', g.frame(0, mad(0x30, 6)), 'GSI_BAD_ATTR'),
        ('ClassPortInfo', g.frame(0, mad(0x01, 7)), 'GSI_BAD_ATTR'),
        ('REJ with ARI length 100', g.frame(0, rej_bad_ari), 'GSI_BAD_FIELD'),
        ('LAP', g.frame(0, mad(ATTR_LAP, 8)), 'GSI_DROP'),
        ('SIDR_REP unasked', g.frame(0, mad(ATTR_SIDR_REP, 9, struct.pack('!I', 77))),
         'GSI_SIDR_UNMATCHED'),
        ('Q_Key 0x80010001', g.frame(0, sidr_req(10, 0, 10), qkey=GSI_QKEY + 1),
         'UD_QKEY_DROP'),
        ('P_Key 0x1234', g.frame(0, sidr_req(11, 0, 11), pkey=0x1234), 'BAD_PKEY'),
        ('bad ICRC', g.frame(0, sidr_req(12, 0, 12), bad_icrc=True), 'DROP_ICRC'),
        ('on port 1 to port 0\'s IP', g.frame(1, sidr_req(13, 0, 13), dst_ip=IP_A[0]),
         'GSI_BAD_DGID'),
    ]
    for what, frame, name in cases:
        b = g.counters()
        port = 1 if 'port 1' in what else 0
        wire[port].send([frame])
        back = g.roce_back(port, 0.3)
        g.settle()
        a = g.counters()
        moved = {k: a[k] - b.get(k, 0) for k in a if a[k] != b.get(k, 0) and
                 (k.startswith('GSI_') or k in ('UD_RX_TOO_LONG', 'UD_QKEY_DROP', 'BAD_PKEY',
                                                'DROP_ICRC', 'NOT_OURS', 'UNKNOWN_QP'))}
        want = {name: 1}
        if name.startswith('GSI_') and name != 'GSI_BAD_DGID':
            want['GSI_RX'] = 1
        if name == 'GSI_BAD_DGID':
            want['GSI_RX'] = 1
        t(moved == want and not back, f'{what}: {want} moved, nothing back: {moved}, {back}')

    # A burst: every SIDR_REQ answered or counted.
    n = 400
    b = g.counters()
    qb = d.ctl('gsi', 'show')['ports'][0]
    wire[0].pending.clear()
    wire[0].send([g.frame(0, sidr_req(0x100000 + i, 0, 0x100000 + i)) for i in range(n)])
    end = time.time() + 10
    got = 0
    while time.time() < end:
        wire[0].pump(0.1)
        got += sum(1 for r in wire[0].take() if r['kind'] == 'roce')
        a = g.counters()
        qa = d.ctl('gsi', 'show')['ports'][0]
        acc = delta(a, b, 'GSI_SIDR_REQ') + delta(a, b, 'GSI_RX_RING_FULL') + \
            (qa['no_recv'] - qb['no_recv'])
        if acc >= n and got >= delta(a, b, 'GSI_SIDR_REP_TX'):
            break
    t(acc == n and delta(a, b, 'GSI_SIDR_REP_TX') == delta(a, b, 'GSI_SIDR_REQ') and
      got == delta(a, b, 'GSI_SIDR_REP_TX') and delta(a, b, 'GSI_SIDR_REQ') > 0,
      f'burst of {n}: {delta(a, b, "GSI_SIDR_REQ")} answered ({got} on the wire), '
      f'{delta(a, b, "GSI_RX_RING_FULL")} ring full, {qa["no_recv"] - qb["no_recv"]} no '
      'receive: all accounted')

    # A DREQ for a connection that does not exist: answered with a DREP all the same, as
    # Linux's cm_issue_drep(), its comm IDs swapped, its TID the DREQ's; counted.
    b = d.ctl('cm', 'show')['counters']
    dreq = mad(ATTR_DREQ, 0x77, struct.pack('!III', 0x11112222, 0x33334444, 0x000123 << 8))
    wire[0].pending.clear()
    wire[0].send([g.frame(0, dreq)])
    back = [f for f in g.roce_back(0, 0.5) if f['qpn'] == 1 and len(f['payload']) >= 8 + 256]
    g.settle()
    r = back[0]['payload'][8:8 + 256] if len(back) == 1 else bytes(256)
    t(len(back) == 1 and struct.unpack_from('!H', r, 16)[0] == ATTR_DREP and
      struct.unpack_from('!Q', r, 8)[0] == 0x77 and
      struct.unpack_from('!II', r, 24) == (0x33334444, 0x11112222) and
      d.ctl('cm', 'show')['counters']['dreq_unknown'] == b['dreq_unknown'] + 1,
      f'a DREQ for nothing gets a DREP (comm IDs swapped, same TID), counted: {r[:32].hex()}')

    # A REQ flood on a listener: pending connections stay within its backlog, the rest are
    # dropped and counted, and a REQ from an address that does not resolve costs the control
    # thread at most its short wait, then a REJ and a connect_error.
    req_flood(g, t, req)

    # Nothing else hurt.
    ud_ok('after', 2)
    c = g.counters()
    t(c.get('NOT_OURS', 0) == 0 and c.get('UNKNOWN_QP', 0) == 0,
      f'QPN 1 never NOT_OURS or UNKNOWN_QP: {c.get("NOT_OURS")}, {c.get("UNKNOWN_QP")}')
    ports = g.settle()
    t(all(p['state'] == 'RTS' and p['recv_posted'] == 64 for p in ports),
      f'QP1s still in RTS, receives posted: {ports}')
    r = d.rocectl('status', check=False)
    t(r.returncode == 0 and json.loads(r.stdout).get('ok') is True, 'a fresh rocectl: status')


def req_of(template, comm_id, qpn, port):
    """The captured REQ as another connection: its comm ID and QPN, our listener's service."""
    m = bytearray(template)
    struct.pack_into('!I', m, 8 + 4, comm_id)         # the TID's low half, as Linux forms it
    struct.pack_into('!I', m, 24, comm_id)
    struct.pack_into('!Q', m, 32, 0x0000000001060000 | port)
    m[56:59] = qpn.to_bytes(3, 'big')
    return bytes(m)


def req_flood(g, t, template):
    d, wire = g.d, g.wires
    port, backlog, n = 7174, 4, 12
    d.ctl('cm', 'listen', port, f'backlog={backlog}')
    qps0 = len(d.ctl('qp', 'show')['qps'])
    b = d.ctl('cm', 'show')['counters']
    wire[0].pending.clear()
    wire[0].send([g.frame(0, req_of(template, 0x5000 + i, 0x100 + i, port)) for i in range(n)])
    g.roce_back(0, 0.5)
    g.settle()
    s = d.ctl('cm', 'show')
    li = next(x for x in s['listeners'] if x['port'] == port)
    drop = s['counters']['backlog_full'] - b['backlog_full']
    t(li['pending'] == backlog and li['requests'] == backlog and drop == n - backlog,
      f'REQ flood of {n} on a backlog of {backlog}: {li["pending"]} pending, '
      f'{li["requests"]} taken, {drop} dropped as backlog_full: {li}')
    t(len(d.ctl('qp', 'show')['qps']) == qps0 + backlog,
      f'one QP per connection taken: {len(d.ctl("qp", "show")["qps"]) - qps0}')
    # From an address on the subnet that nobody answers ARP for: no MAC, no connection.
    spoofed = '10.31.0.77'
    b = d.ctl('cm', 'show')['counters']
    d.ctl('cm', 'unlisten', port)
    d.ctl('cm', 'listen', port + 1, 'backlog=64')
    k = 8
    t0 = time.time()
    wire[0].send([H.roce_frame(g.mac_a[0], g.mac_b[0], spoofed, IP_A[0], UD_SEND_ONLY, 1, 0,
                               ext=H.deth(GSI_QKEY, 1),
                               payload=req_of(template, 0x6000 + i, 0x200 + i, port + 1))
                  for i in range(k)])
    g.roce_back(0, 0.5)
    g.settle()
    r = d.rocectl('status', check=False)
    secs = time.time() - t0
    a = d.ctl('cm', 'show')['counters']
    t(r.returncode == 0 and a['qp_errors'] - b['qp_errors'] == k,
      f'{k} REQs from {spoofed}, which does not resolve: each refused (qp_errors '
      f'+{a["qp_errors"] - b["qp_errors"]}), the daemon answering ({secs:.1f} s)')
    t(len(d.ctl('qp', 'show')['qps']) == qps0 + backlog, 'no QP left by the refused ones')
    evs = d.ctl('cm', 'events', 0, 'max=256')['events']
    t(sum(1 for e in evs if e['event'] == 'connect_error' and e['remote_ip'] == spoofed) == k,
      f'a connect_error event for each: {[e["event"] for e in evs][-12:]}')
    d.ctl('cm', 'unlisten', port + 1)


def main():
    if os.geteuid() != 0 or shutil.which('ip') is None:
        print('gsi: [machine] needs root and ip netns: skipped')
        return 77
    t = Checks('gsi')
    g = Gsi(sys.argv[1])
    rc = None
    try:
        g.setup()
        run(g, t)
    except Failure as e:
        t(False, str(e))
    finally:
        rc = g.teardown()
    t(rc == 0, f'roced exits 0 on SIGTERM: {rc}')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
