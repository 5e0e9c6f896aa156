#!/usr/bin/python3
"""Two roced over memif, driven only through rocectl: WRITE, READ, SEND with receives, CAS and
FAA with the data verified on both sides by MR digests; counters that agree; a job; malformed
control input; kill -9 of one daemon during traffic; SIGTERM stops cleanly with exit 0.

usage: test_memif_pair.py BUILD_DIR
"""
import json
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, connect, poll_wc, MR_ALL, QP_ALL  # noqa: E402

SIZE = 1 << 20


def ops(t, p, exact_ports=True):
    a, b = p.a, p.b
    ma, mb = a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
    qa, qb = connect(a, b)
    n = qa['qpn']
    a.ctl('mr', 'fill', ma['rkey'], 'random:1')
    b.ctl('mr', 'fill', mb['rkey'], 'random:2')

    def digest(d, m, off, length):
        return d.ctl('mr', 'digest', m['rkey'], f'offset={off}', f'length={length}')['crc32']

    def one(d, qpn, what):
        wc = poll_wc(d, qpn, 1)
        t(len(wc) == 1 and wc[0]['status'] == 0, f"{what}: completion {wc}")
        return wc[0] if wc else {}

    # WRITE 100000 bytes A[0..] -> B[0..]
    a.ctl('post', 'write', n, f"lkey={ma['lkey']}", 'length=100000',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}")
    one(a, n, 'write')
    t(digest(a, ma, 0, 100000) == digest(b, mb, 0, 100000), 'WRITE data equal on both sides')
    # READ B[200000..] -> A[200000..]
    a.ctl('post', 'read', n, f"lkey={ma['lkey']}", 'offset=200000', 'length=70000',
          f"remote_addr={mb['iova'] + 200000}", f"rkey={mb['rkey']}")
    one(a, n, 'read')
    t(digest(a, ma, 200000, 70000) == digest(b, mb, 200000, 70000), 'READ data equal')
    # SEND A[300000..] -> B receive at [400000..]
    b.ctl('post', 'recv', qb['qpn'], f"lkey={mb['lkey']}", 'offset=400000', 'length=8192')
    a.ctl('post', 'send', n, f"lkey={ma['lkey']}", 'offset=300000', 'length=5000', 'imm=7')
    one(a, n, 'send')
    rwc = one(b, qb['qpn'], 'recv')
    t(rwc.get('byte_len') == 5000 and rwc.get('imm') == 7, f'receive completion {rwc}')
    t(digest(a, ma, 300000, 5000) == digest(b, mb, 400000, 5000), 'SEND data equal')
    # Atomics on B[512]: set 40 by filling, FAA +2, CAS 42->99
    b.ctl('mr', 'fill', mb['rkey'], 'zero', 'offset=512', 'length=8')
    a.ctl('post', 'faa', n, f"lkey={ma['lkey']}", 'offset=600000',
          f"remote_addr={mb['iova'] + 512}", f"rkey={mb['rkey']}", 'add=40')
    one(a, n, 'faa')
    a.ctl('post', 'faa', n, f"lkey={ma['lkey']}", 'offset=600008',
          f"remote_addr={mb['iova'] + 512}", f"rkey={mb['rkey']}", 'add=2')
    one(a, n, 'faa')
    a.ctl('post', 'cas', n, f"lkey={ma['lkey']}", 'offset=600016',
          f"remote_addr={mb['iova'] + 512}", f"rkey={mb['rkey']}", 'compare=42', 'swap=99')
    one(a, n, 'cas')
    got = a.ctl('mr', 'dump', ma['rkey'], 'offset=600000', 'length=24')['hex']
    vals = [int.from_bytes(bytes.fromhex(got[i:i + 16]), 'little') for i in (0, 16, 32)]
    t(vals == [0, 40, 42], f'atomic originals {vals}')
    now = b.ctl('mr', 'dump', mb['rkey'], 'offset=512', 'length=8')['hex']
    t(int.from_bytes(bytes.fromhex(now), 'little') == 99, f'atomic result {now}')
    # Counters agree: what one side sent, the other received.
    ca, cb = a.ctl('counters')['counters'], b.ctl('counters')['counters']
    # On a veth the kernel adds its own frames (IPv6 router solicitations...): RoCE only.
    t(not exact_ports or
      (ca['PORT_TX_PKTS'] == cb['PORT_RX_PKTS'] and cb['PORT_TX_PKTS'] == ca['PORT_RX_PKTS']),
      f"port counters agree: A tx {ca['PORT_TX_PKTS']} B rx {cb['PORT_RX_PKTS']}, "
      f"B tx {cb['PORT_TX_PKTS']} A rx {ca['PORT_RX_PKTS']}")
    t(ca['TX_REQ'] == cb['RX_PKTS'] and cb['TX_RESP'] == ca['RX_PKTS'],
      'every request and response arrived')
    t(ca['RETRANSMITS'] == 0 and ca['DROP_ICRC'] == 0 and cb['DROP_ICRC'] == 0,
      'no retransmission, no ICRC drop')
    return ma, mb, qa, qb


def job(t, p, ma, mb, qa):
    a = p.a
    a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=65536',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'duration_ms=1000')
    time.sleep(1.5)
    j = a.ctl('job', 'show', qa['qpn'])['job']
    t(not j['running'] and j['completed'] > 0 and j['errors'] == 0 and j['gbps'] > 0,
      f'job ran: {j}')
    print(f"  job: {j['completed']} x 64 KiB WRITE in {j['seconds']:.2f} s, "
          f"{j['gbps']:.2f} Gb/s", flush=True)
    # Path MTU 4096: the pair runs at IP MTU 9000.
    qx, qy = connect(a, p.b, mtu=4096)
    a.ctl('job', 'start', qx['qpn'], 'op=read', f"lkey={ma['lkey']}", 'length=65536',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'count=200')
    time.sleep(1)
    j = a.ctl('job', 'show', qx['qpn'])['job']
    t(j['completed'] == 200 and j['errors'] == 0, f'200 READs at MTU 4096: {j}')
    c = a.ctl('counters', 'qpn=' + str(qx['qpn']))
    t(c['scope'] == 'qp' and c['counters']['TX_REQ'] == 200,
      f"per-QP counters: {c['counters']['TX_REQ']} READ requests")


def ipv6(t, p, ma, mb):
    """A QP over IPv6: the peer's MAC found with neighbour discovery."""
    a, b = p.a, p.b
    qx, qy = a.ctl('qp', 'create', QP_ALL)['qp'], b.ctl('qp', 'create', QP_ALL)['qp']
    r = a.ctl('qp', 'connect', qx['qpn'], qy['qpn'], qy['psn'], 'fd00::2')['qp']
    b.ctl('qp', 'connect', qy['qpn'], qx['qpn'], qx['psn'], 'fd00::1')
    t(r['remote']['ip'] == 'fd00::2', f"IPv6 peer: {r['remote']}")
    a.ctl('mr', 'fill', ma['rkey'], 'random:9', 'offset=700000', 'length=30000')
    a.ctl('post', 'write', qx['qpn'], f"lkey={ma['lkey']}", 'offset=700000', 'length=30000',
          f"remote_addr={mb['iova'] + 700000}", f"rkey={mb['rkey']}")
    wc = poll_wc(a, qx['qpn'], 1)
    t(len(wc) == 1 and wc[0]['status'] == 0, f'IPv6 WRITE completion {wc}')
    da = a.ctl('mr', 'digest', ma['rkey'], 'offset=700000', 'length=30000')['crc32']
    db = b.ctl('mr', 'digest', mb['rkey'], 'offset=700000', 'length=30000')['crc32']
    t(da == db, 'IPv6 WRITE data equal')
    c = a.ctl('counters')['counters']
    t(c['NET_NS_TX'] > 0 and c['NET_NA_RX'] > 0,
      f"neighbour discovery ran: NS sent {c['NET_NS_TX']}, NA received {c['NET_NA_RX']}")


def telemetry(t, p):
    import subprocess
    prefix = f'rocedp-it-a-{os.getpid()}'
    r = subprocess.run(['dpdk-telemetry.py', '-f', prefix], input='/roce/counters\n',
                       capture_output=True, text=True, timeout=20)
    t(r.returncode == 0 and '"TX_REQ"' in r.stdout and '"PORT_TX_PKTS"' in r.stdout,
      f'dpdk-telemetry.py shows /roce/counters: {r.stdout[-300:]} {r.stderr[-300:]}')
    # One emitter: telemetry publishes the counters command's set, in the same order.
    tel = [json.loads(line) for line in r.stdout.splitlines() if line.startswith('{"/roce/')]
    keys = list(tel[0]['/roce/counters']) if tel else []
    want = list(p.a.ctl('counters')['counters'])
    t(keys == want, f'/roce/counters has the counters command\'s names: '
      f'{sorted(set(keys) ^ set(want))[:10]}')


def hostile_control(t, p):
    a = p.a
    s = socket.socket(socket.AF_UNIX)
    s.connect(a.sock)
    f = s.makefile('rwb')
    for line in [b'not json\n', b'[1,2]\n', b'{"v":1,"id":1}\n', b'{"v":1,"id":2,"cmd":"nope"}\n',
                 b'{"v":1,"id":3,"cmd":"qp.create","sq_depth":"x"}\n']:
        f.write(line)
        f.flush()
        r = f.readline()
        t(b'"ok": false' in r or b'"ok":false' in r, f'error reply to {line!r}: {r!r}')
    try:
        # The daemon cuts a line over its limit off, so the write may fail midway.
        f.write(b'{' + b' ' * (1 << 20) + b'\n')
        f.flush()
        r = f.readline()
        t(r == b'' or b'E2BIG' in r, f'a 1 MiB line is refused: {r[:80]!r}')
    except (BrokenPipeError, ConnectionResetError):
        pass
    s.close()
    clients = [socket.socket(socket.AF_UNIX) for _ in range(100)]
    for c in clients:
        try:
            c.connect(a.sock)
        except OSError:
            pass
    for c in clients:
        c.close()
    st = a.ctl('status')
    t(st['ok'], 'daemon serves after garbage, a 1 MiB line and 100 clients')
    t(st['ctl']['oversized'] >= 1 and st['ctl']['errors'] >= 5 and st['ctl']['rejected'] == 0,
      f"status counts the control socket's refusals: {st['ctl']}")


def kill9(t, p, ma, mb, qa):
    a, b = p.a, p.b
    # Short timeout so that the retries run out quickly: 4.096 us * 2^12 = 16.8 ms, 7 retries.
    mb2, ma2 = mb, ma
    qx, qy = connect(a, b, timeout=12, retry_cnt=3)
    a.ctl('job', 'start', qx['qpn'], 'op=write', f"lkey={ma2['lkey']}", 'length=65536',
          f"remote_addr={mb2['iova']}", f"rkey={mb2['rkey']}")
    time.sleep(0.5)
    b.stop(signal.SIGKILL)
    time.sleep(1.5)
    j = a.ctl('job', 'show', qx['qpn'])['job']
    t(not j['running'] and j['errors'] > 0 and
      j['first_error'] == 'transport retry counter exceeded',
      f'after kill -9 of the peer, outstanding work failed with retry exceeded: {j}')
    st = [q for q in a.ctl('qp', 'show')['qps'] if q['qpn'] == qx['qpn']]
    t(st and st[0]['state'] == 'ERR', f'QP in ERR: {st}')
    t(a.ctl('status')['ok'], 'the survivor keeps serving')


def main():
    build = sys.argv[1]
    t = Checks('memif_pair')
    with Pair(build) as p:
        ma, mb, qa, qb = ops(t, p)
        job(t, p, ma, mb, qa)
        telemetry(t, p)
        ipv6(t, p, ma, mb)
        hostile_control(t, p)
        kill9(t, p, ma, mb, qa)
        rc = p.a.stop()
        t(rc == 0, f'SIGTERM: exit status {rc}')
        t('final counters' in p.a.tail(200), 'final counters printed')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
