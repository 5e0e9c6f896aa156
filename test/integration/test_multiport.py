#!/usr/bin/python3
"""Two roced joined by two memif links (two ports each, one subnet per link): a QP created on
port 1 sends on port 1 and one created on port 0 on port 0 — the ethdev counters of each port
(port show) say which link carried the traffic — and the data arrives intact on both.

usage: test_multiport.py BUILD_DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, connect, poll_wc, MR_ALL, QP_ALL  # noqa: E402

SIZE = 1 << 20
CONF = """[roced]
mtu = 9000
[port0]
device = net_memif0
ipv4 = 10.0.{side}.1/24
[port1]
device = net_memif1
ipv4 = 10.1.{side}.1/24
"""


def start(p, name, role, side):
    conf = os.path.join(p.tmp, f'{name}.conf')
    with open(conf, 'w') as f:
        # Both ends of a link share a subnet: 10.0.0.x on link 0, 10.1.0.x on link 1.
        f.write(CONF.format(side=0).replace('.1/24', f'.{side}/24'))
    vdevs = [f'--vdev=net_memif{i},role={role},socket={p.tmp}/memif{i}.sock,bsize=8192'
             for i in range(2)]
    d = p.start(name, ['-l', '0,1'] + vdevs, ['--config', conf])
    d.wait_ready()
    return d


def opackets(d):
    return [port['stats']['opackets'] for port in d.ctl('port', 'show')['ports']]


def wait_links(p, timeout=10):
    import time
    end = time.time() + timeout
    while time.time() < end:
        if all(port['link_up'] for d in (p.a, p.b) for port in d.ctl('port', 'show')['ports']):
            return True
        time.sleep(0.1)
    return False


def write_on(t, a, b, port, seed):
    """A WRITE of SIZE bytes over QPs on @port; @return the packets each port of A sent."""
    ma, mb = a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
    qa = a.ctl('qp', 'create', QP_ALL, f'port={port}')['qp']
    qb = b.ctl('qp', 'create', QP_ALL, f'port={port}')['qp']
    t(qa['port'] == port and qa['ip'].startswith(f'10.{port}.'), f'QP on port {port}: {qa}')
    a.ctl('qp', 'connect', qa['qpn'], qb['qpn'], qb['psn'], qb['ip'])
    b.ctl('qp', 'connect', qb['qpn'], qa['qpn'], qa['psn'], qa['ip'])
    a.ctl('mr', 'fill', ma['rkey'], f'random:{seed}')
    before = opackets(a)
    a.ctl('post', 'write', qa['qpn'], f"lkey={ma['lkey']}", f'length={SIZE}',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}")
    wc = poll_wc(a, qa['qpn'], 1)
    t(len(wc) == 1 and wc[0]['status'] == 0, f'port {port}: WRITE completes: {wc}')
    da = a.ctl('mr', 'digest', ma['rkey'])['crc32']
    db = b.ctl('mr', 'digest', mb['rkey'])['crc32']
    t(da == db, f'port {port}: data equal ({da}, {db})')
    after = opackets(a)
    return [x - y for x, y in zip(after, before)]


def main():
    build = sys.argv[1]
    t = Checks('multiport')
    p = Pair(build, start=False)
    try:
        p.a = start(p, 'a', 'server', 1)
        p.b = start(p, 'b', 'client', 2)
        t(wait_links(p), 'both memif links up')
        pkts = SIZE // 4096
        for port in (1, 0):
            sent = write_on(t, p.a, p.b, port, 7 + port)
            other = 1 - port
            t(sent[port] >= pkts and sent[other] < 8,
              f'QP on port {port}: {sent[port]} frames on port {port}, {sent[other]} on '
              f'port {other} (expected >= {pkts} and a few ARP at most)')
        t(p.a.stop() == 0 and p.b.stop() == 0, 'clean stops')
    finally:
        p.__exit__(None, None, None)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
