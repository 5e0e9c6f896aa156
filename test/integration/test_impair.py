#!/usr/bin/python3
"""Impairment between two roced over memif, driven only through rocectl: 5 % loss on B's rx
while WRITEs, READs and a WRITE job run; the data still arrives intact (digests equal), the
impairment and the requester's retransmission counters moved, `impair show` reports it and
`impair clear` stops it. Then loss, delay and duplication on A's tx: the data still arrives,
and impairment puts nothing of its own on the link (B's counters of foreign frames do not
move; B receives exactly what A's stage let through). Then a spec given on the command line
and refused specs.

usage: test_impair.py BUILD_DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, connect, poll_wc, MR_ALL, QP_ALL  # noqa: E402

SIZE = 4 << 20
MIB = 1 << 20


def digest(d, m, off, length):
    return d.ctl('mr', 'digest', m['rkey'], f'offset={off}', f'length={length}')['crc32']


def show(d, port=0, direction='rx'):
    return d.ctl('impair', 'show', port, f'dir={direction}')['impair'][0]


def transfer(t, a, b, ma, mb, qpn, off, what):
    """WRITE 1 MiB A->B at off, READ 1 MiB B->A at off + 1 MiB; check both digests."""
    a.ctl('mr', 'fill', ma['rkey'], f'random:{off}', f'offset={off}', f'length={MIB}')
    b.ctl('mr', 'fill', mb['rkey'], f'random:{off + 1}', f'offset={off + MIB}',
          f'length={MIB}')
    a.ctl('post', 'write', qpn, f"lkey={ma['lkey']}", f'offset={off}', f'length={MIB}',
          f"remote_addr={mb['iova'] + off}", f"rkey={mb['rkey']}")
    a.ctl('post', 'read', qpn, f"lkey={ma['lkey']}", f'offset={off + MIB}', f'length={MIB}',
          f"remote_addr={mb['iova'] + off + MIB}", f"rkey={mb['rkey']}")
    wc = poll_wc(a, qpn, 2, timeout=20)
    t(len(wc) == 2 and all(w['status'] == 0 for w in wc), f'{what}: completions {wc}')
    t(digest(a, ma, off, MIB) == digest(b, mb, off, MIB), f'{what}: WRITE data equal')
    t(digest(a, ma, off + MIB, MIB) == digest(b, mb, off + MIB, MIB),
      f'{what}: READ data equal')


def rx_loss(t, p, ma, mb, qa):
    a, b = p.a, p.b
    r = b.ctl('impair', 'set', 'spec=loss=5%,seed=7', 'dir=rx')['impair']
    t(len(r) == 1 and r[0]['active'] and r[0]['spec'] == 'seed=7,loss=0.05' and
      r[0]['dir'] == 'rx', f'impair set: {r}')
    s = show(b)
    t(s['active'] and s['spec'] == 'seed=7,loss=0.05', f'impair show: {s}')
    text = b.rocectl('impair', 'show', json_out=False).stdout
    t('seed=7,loss=0.05' in text and 'dropped_uniform' in text, f'human output:\n{text}')
    retrans0 = a.ctl('counters')['counters']['RETRANSMITS']
    transfer(t, a, b, ma, mb, qa['qpn'], 0, '5 % rx loss')
    # Go-back-N resends the whole window after each loss: a shallow job keeps that small.
    a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=16384',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'duration_ms=1500', 'depth=4')
    end = time.time() + 15
    while True:
        time.sleep(0.5)
        j = a.ctl('job', 'show', qa['qpn'])['job']
        if not j['running'] or time.time() > end:
            break
    t(not j['running'] and j['completed'] > 0 and j['errors'] == 0,
      f'WRITE job through 5 % loss: {j}')
    s = show(b)
    c = s['counters']
    ratio = c['dropped_uniform'] / max(c['seen'], 1)
    print(f"  B rx: {c['seen']} seen, {c['dropped_uniform']} dropped ({100 * ratio:.2f} %); "
          f"job {j['completed']} x 16 KiB, {j['gbps']:.2f} Gb/s", flush=True)
    t(c['seen'] > 1000 and 0.03 < ratio < 0.07, f'loss near 5 %: {c}')
    t(c['passed'] == c['seen'] - c['dropped_uniform'], f'accounted: {c}')
    ca = a.ctl('counters')['counters']
    t(ca['RETRANSMITS'] > retrans0, f"A retransmitted: {ca['RETRANSMITS']}")
    cb = b.ctl('counters')['counters']
    t(cb.get('IMPAIR_RX_DROPPED_UNIFORM', 0) >= c['dropped_uniform'],
      f"rocectl counters shows IMPAIR_RX_*: {cb.get('IMPAIR_RX_DROPPED_UNIFORM')}")
    # Cleared: nothing more is seen or dropped, and traffic is clean again.
    r = b.ctl('impair', 'clear')
    t(r['cleared'] == 1, f'impair clear: {r}')
    before = show(b)
    retrans1 = a.ctl('counters')['counters']['RETRANSMITS']
    transfer(t, a, b, ma, mb, qa['qpn'], 0, 'after clear')
    after = show(b)
    t(not after['active'] and after['spec'] == 'none', f'show after clear: {after}')
    t(after['counters']['seen'] == before['counters']['seen'] and
      after['counters']['dropped_uniform'] == before['counters']['dropped_uniform'],
      f"no more impairment: {before['counters']} -> {after['counters']}")
    # Informational: the transport's own timers may still retransmit once after a lossy run.
    print(f"  retransmissions after clear: "
          f"{a.ctl('counters')['counters']['RETRANSMITS'] - retrans1}", flush=True)


def link_counts(d):
    c = d.ctl('counters')['counters']
    return {k: c.get(k, 0) for k in ('PORT_TX_PKTS', 'PORT_RX_PKTS', 'RX_OTHER', 'OTHER_DROP')}


def tx_loss_delay(t, p, ma, mb, qa):
    a, b = p.a, p.b
    a.ctl('impair', 'set', 'spec=dir=tx,loss=0.02,delay=50us:20us,dup=0.01,seed=3')
    c0 = show(a, direction='tx')['counters']
    a0, b0 = link_counts(a), link_counts(b)
    transfer(t, a, b, ma, mb, qa['qpn'], 2 * MIB, '2 % tx loss, 50 us delay')
    # Let the last ACKs (and B's answers to duplicates) land before counting.
    time.sleep(0.5)
    c = show(a, direction='tx')['counters']
    a1, b1 = link_counts(a), link_counts(b)
    print(f"  A tx: {c['seen']} seen, {c['dropped_uniform']} dropped, {c['delayed']} delayed, "
          f"{c['duplicated']} duplicated; A sent {a1['PORT_TX_PKTS'] - a0['PORT_TX_PKTS']}, "
          f"B received {b1['PORT_RX_PKTS'] - b0['PORT_RX_PKTS']} frames", flush=True)
    t(c['dropped_uniform'] > 0 and c['delayed'] > 0 and c['duplicated'] > 0, f'tx counters {c}')
    t('voids' not in c and 'early' not in c, f'no void-frame counters: {sorted(c)}')
    t(c['passed'] == c['seen'] - c['dropped_uniform'] + c['duplicated'] - c['overflow'] -
      c['rate_dropped'] - c['dropped_burst'], f'tx accounted, nothing held: {c}')
    t(b1['RX_OTHER'] == b0['RX_OTHER'] and b1['OTHER_DROP'] == b0['OTHER_DROP'],
      f'B saw no foreign frame: RX_OTHER {b0["RX_OTHER"]} -> {b1["RX_OTHER"]}, '
      f'OTHER_DROP {b0["OTHER_DROP"]} -> {b1["OTHER_DROP"]}')
    sent = a1['PORT_TX_PKTS'] - a0['PORT_TX_PKTS']
    t(sent == c['passed'] - c0['passed'],
      f"A sent what its stage passed, no more: {sent} frames, {c['passed'] - c0['passed']} passed")
    t(b1['PORT_RX_PKTS'] - b0['PORT_RX_PKTS'] == sent,
      f"B received what A sent: {b1['PORT_RX_PKTS'] - b0['PORT_RX_PKTS']} of {sent}")
    a.ctl('impair', 'clear', 'dir=tx')
    t(not show(a, direction='tx')['active'], 'tx cleared')
    # Cleared: traffic still flows through the (now empty) stage, untouched.
    transfer(t, a, b, ma, mb, qa['qpn'], 2 * MIB, 'after tx clear')
    c2 = show(a, direction='tx')['counters']
    t(c2['seen'] == c['seen'] and c2['dropped_uniform'] == c['dropped_uniform'],
      f"no more tx impairment: {c} -> {c2}")


def refused(t, p):
    b = p.b
    for spec in ['loss=5', 'loss=0.1,bogus=1', 'delay=2s', 'reorder=0.1:99']:
        r = b.rocectl('impair', 'set', f'spec={spec}', check=False)
        t(r.returncode == 1 and 'EINVAL' in r.stderr, f'{spec} refused: {r.stderr.strip()}')
    r = b.rocectl('impair', 'set', 'spec=loss=0.1', 'port=3', check=False)
    t(r.returncode == 1, f'port 3 refused: {r.stderr.strip()}')
    t(not show(b)['active'], 'nothing set by refused requests')


def command_line(t, p):
    """A third daemon started with --impair: the spec is active from the start."""
    d = p.start('c', ['-l', '0,1', '--vdev=net_null0'],
                ['--port', 'net_null0', '--ip', '10.0.1.1/24',
                 '--impair', 'port=0,dir=tx,ecn=0.5,seed=9'])
    d.wait_ready()
    s = d.ctl('impair', 'show', 0, 'dir=tx')['impair'][0]
    t(s['active'] and s['spec'] == 'seed=9,ecn=0.5', f'--impair: {s}')
    d.stop()
    bad = p.start('d', ['-l', '0,1', '--vdev=net_null1'],
                  ['--port', 'net_null1', '--ip', '10.0.2.1/24', '--impair', 'loss=7'])
    rc = bad.proc.wait(20)
    t(rc == 2 and 'impair' in bad.tail(), f'bad --impair: exit {rc}: {bad.tail(3)}')


def main():
    build = sys.argv[1]
    t = Checks('impair')
    with Pair(build) as p:
        ma, mb = p.a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], p.b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
        # ACK timeout 4.096 us * 2^12 = 16.8 ms: a lost tail packet costs little time, and
        # 7 retries still outlast a loaded machine (or an ASan build).
        qa, qb = connect(p.a, p.b, timeout=12)
        rx_loss(t, p, ma, mb, qa)
        tx_loss_delay(t, p, ma, mb, qa)
        refused(t, p)
        command_line(t, p)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
