#!/usr/bin/python3
"""A SEND stream against a receiver that posts late, then runs out and posts again, between two
roced over memif, go-back-N and selective repeat: the sender's job starts before the receiver's
(RNR NAKs from the first SEND), and the receiver's first job takes only part of the stream, so
the sender waits on RNR NAKs with nothing posted until a second receive job is started. Both
times the stream goes on once receives are posted, every SEND completes once, in order.

Selective repeat holds SENDs to the receive credits its responder reports: while the receiver
has nothing posted, each RNR NAK costs the sender one packet (the first of the limited WQE,
as a probe), and the responder drops no other SEND packet for want of a receive
(SR_OOO_DROP). Go-back-N resends everything
outstanding after each RNR timer, as IBA and rxe do; only its completion is checked.

usage: test_rnr.py BUILD_DIR [MODE...]     (modes: gbn sr; default both)
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, MR_ALL, QP_ALL  # noqa: E402

SENDS = 20000
FIRST = 8000          # receives the first receive job posts
SIZE = 4096
DEPTH = 128


def counters(d, qpn):
    return d.ctl('counters', f'qpn={qpn}')['counters']


def wait(d, qpn, cond, secs):
    end, j = time.time() + secs, None
    while time.time() < end:
        j = d.ctl('job', 'show', qpn)['job']
        if cond(j):
            break
        time.sleep(0.1)
    return j


def run(t, pair, mode):
    a, b = pair.a, pair.b
    extra = ['sr=true'] if mode == 'sr' else []
    qa = a.ctl('qp', 'create', QP_ALL, f'sq_depth={DEPTH}', f'rq_depth={DEPTH}')['qp']
    qb = b.ctl('qp', 'create', QP_ALL, f'sq_depth={DEPTH}', f'rq_depth={DEPTH}')['qp']
    # min_rnr_timer 12: 0.64 ms; rnr_retry 7: for ever, as perftest connects.
    for x, qx, qy in ((a, qa, qb), (b, qb, qa)):
        x.ctl('qp', 'connect', qx['qpn'], qy['qpn'], qy['psn'], qy['ip'], 'mtu=1024',
              'min_rnr_timer=12', 'rnr_retry=7', *extra)
    ma = a.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr']
    mb = b.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr']

    # The sender first: nothing is posted for 0.3 s.
    b.ctl('job', 'start', qb['qpn'], 'op=send', f"lkey={mb['lkey']}", f'length={SIZE}',
          f'count={SENDS}', f'depth={DEPTH}')
    time.sleep(0.3)
    late = counters(b, qb['qpn'])
    a.ctl('job', 'start', qa['qpn'], 'op=recv', f"lkey={ma['lkey']}", f'length={SIZE}',
          f'count={FIRST}')
    jb = wait(b, qb['qpn'], lambda j: j['completed'] >= FIRST, 30)
    t(jb['completed'] == FIRST and jb['errors'] == 0,
      f"{mode}: late receiver: the stream went on once receives were posted "
      f"({jb['completed']} of {FIRST} completed, {jb['errors']} errors)")

    # The first receive job is spent: the sender waits on RNR NAKs for 0.5 s.
    c0 = counters(b, qb['qpn'])
    time.sleep(0.5)
    c1, r1 = counters(b, qb['qpn']), counters(a, qa['qpn'])
    jb = b.ctl('job', 'show', qb['qpn'])['job']
    rnr = c1['NAK_RNR_RX'] - c0['NAK_RNR_RX']
    rtx = c1['RETRANSMITS'] - c0['RETRANSMITS']
    t(jb['completed'] == FIRST and rnr > 0,
      f"{mode}: receiver out of receives: no progress, {rnr} RNR NAKs in 0.5 s")
    a.ctl('job', 'start', qa['qpn'], 'op=recv', f"lkey={ma['lkey']}", f'length={SIZE}',
          f'count={SENDS - FIRST}')
    jb = wait(b, qb['qpn'], lambda j: not j['running'], 60)
    ja = a.ctl('job', 'show', qa['qpn'])['job']
    t(jb['completed'] == SENDS and jb['errors'] == 0 and ja['completed'] == SENDS - FIRST and
      ja['errors'] == 0,
      f"{mode}: receives posted again: {jb['completed']} of {SENDS} sends, "
      f"{ja['completed']} receives of the second job, errors {jb['errors']}/{ja['errors']}")
    c2, r2 = counters(b, qb['qpn']), counters(a, qa['qpn'])
    print(f"  {mode}: late start {late['NAK_RNR_RX']} RNR NAKs, {late['RETRANSMITS']} resent; "
          f"receiver out: {rnr} RNR NAKs, {rtx} resent; total {c2['RETRANSMITS']} resent, "
          f"{c2['TIMEOUTS']} timeouts, responder dropped "
          f"{r2.get('SR_OOO_DROP', 0) + r2.get('OOS_DROP', 0)}", flush=True)
    if mode == 'sr':
        # One packet per RNR NAK (the probe) or timeout, and the rest of the limited SEND
        # (3 packets of 1 KiB) once it found a receive.
        timeouts = c1['TIMEOUTS'] - c0['TIMEOUTS']
        t(rtx <= rnr + timeouts + 3 + 8,
          f"sr: receiver out: {rtx} packets resent for {rnr} RNR NAKs and {timeouts} timeouts")
        t(late['RETRANSMITS'] <= late['NAK_RNR_RX'] + late['TIMEOUTS'] + 3 + 8,
          f"sr: late start: {late['RETRANSMITS']} resent for {late['NAK_RNR_RX']} RNR NAKs")
        t(r2['SR_OOO_DROP'] <= 3 * 3,
          f"sr: the responder dropped {r2['SR_OOO_DROP']} SEND packets for want of a receive "
          f"({r2['NAK_RNR_TX']} RNR NAKs): only the rest of the limited SENDs' first sends")
    for d, q in ((a, qa), (b, qb)):
        d.ctl('qp', 'destroy', q['qpn'])
    for d, m in ((a, ma), (b, mb)):
        d.ctl('mr', 'dereg', m['rkey'])


def main():
    build = sys.argv[1]
    modes = sys.argv[2:] or ['gbn', 'sr']
    t = Checks('rnr')
    with Pair(build) as pair:
        for mode in modes:
            run(t, pair, mode)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
