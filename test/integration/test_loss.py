#!/usr/bin/python3
"""Verified mixed traffic between two roced over memif under impairment, go-back-N and selective
repeat: 10 000 messages (WRITE, SEND, READ, WRITE_IMM, FETCH_ADD, CMP_SWAP of 8 B .. 4 KiB,
MTU 1024) over 8 QPs under 0.1 %, 1 %, 5 % uniform loss, bursty (Gilbert-Elliott) loss, 5 %
reorder and 5 % duplication, impaired on both daemons' receive side. The daemons' traffic jobs
check every completion (order, READ data, atomic results: each atomic executed exactly once)
and every received message (order, length, bytes), so "complete exactly once, in order, with
verified data" is what their counters say.

usage: test_loss.py BUILD_DIR [MODE...]     (modes: gbn sr; default both)
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, MR_ALL, QP_ALL  # noqa: E402

QPS = 8
MESSAGES = 10000
SIZE = 4096
RQ = 128
SLOTS, WSLOTS = 16, 256
PERIOD_CONSUMERS = (1, 3, 5)       # SEND, WRITE_IMM, SEND in each period of 8

IMPAIRMENTS = [
    ('0.1 % loss', 'loss=0.1%'),
    ('1 % loss', 'loss=1%'),
    ('5 % loss', 'loss=5%'),
    ('bursty loss', 'ge=0.005:0.3:0.5:0'),
    ('5 % reorder', 'reorder=5%:4'),
    ('5 % duplication', 'dup=5%'),
]


def consumers(n):
    return sum(1 for i in range(n) if i % 8 in PERIOD_CONSUMERS)


def run(t, pair, mode, what, spec, seed):
    a, b = pair.a, pair.b
    per_qp = MESSAGES // QPS
    ra, rb = SIZE * SLOTS, SIZE * (1 + WSLOTS + RQ) + 16
    ma = a.ctl('mr', 'reg', ra * QPS, MR_ALL)['mr']
    mb = b.ctl('mr', 'reg', rb * QPS, MR_ALL)['mr']
    # ACK timeout 16.8 ms (SR: a 500 us RTO, doubling): short enough for tail losses, long
    # enough for daemons that share two cores with everything else a CI machine runs.
    extra = ['sr=true', 'sr_rto_us=500'] if mode == 'sr' else []
    pairs = []
    for k in range(QPS):
        qa = a.ctl('qp', 'create', QP_ALL, 'sq_depth=64', f'rq_depth={RQ}')['qp']
        qb = b.ctl('qp', 'create', QP_ALL, 'sq_depth=64', f'rq_depth={RQ}')['qp']
        a.ctl('qp', 'connect', qa['qpn'], qb['qpn'], qb['psn'], qb['ip'], 'mtu=1024',
              'timeout=12', 'retry_cnt=7', *extra)
        b.ctl('qp', 'connect', qb['qpn'], qa['qpn'], qa['psn'], qa['ip'], 'mtu=1024',
              'timeout=12', 'retry_cnt=7', *extra)
        pairs.append((qa['qpn'], qb['qpn']))
    imp0 = b.ctl('impair', 'show', 0, 'dir=rx')['impair'][0]['counters']
    for d in (a, b):
        d.ctl('impair', 'set', f'spec={spec},seed={seed}', 'dir=rx')
    for k, (na, nb) in enumerate(pairs):
        b.ctl('job', 'start', nb, 'op=mixed_recv', f"lkey={mb['lkey']}", f'offset={k * rb}',
              f'length={SIZE}', f'depth={RQ}', f'count={consumers(per_qp)}', f'seed={seed + k}')
        a.ctl('job', 'start', na, 'op=mixed', f"lkey={ma['lkey']}", f'offset={k * ra}',
              f'length={SIZE}', f'count={per_qp}', 'depth=16',
              f"remote_addr={mb['iova'] + k * rb}", f"rkey={mb['rkey']}", f'seed={seed + k}')
    start, jobs = time.time(), []
    while time.time() < start + 120:
        jobs = [(a.ctl('job', 'show', na)['job'], b.ctl('job', 'show', nb)['job'])
                for na, nb in pairs]
        if not any(ja['running'] or jb['running'] for ja, jb in jobs):
            break
        time.sleep(0.2)
    secs = time.time() - start
    done = sum(ja['completed'] for ja, _ in jobs)
    got = sum(jb['completed'] for _, jb in jobs)
    bad = sum(ja['verify_errors'] + jb['verify_errors'] for ja, jb in jobs)
    errs = sum(ja['errors'] + jb['errors'] for ja, jb in jobs)
    imp = b.ctl('impair', 'show', 0, 'dir=rx')['impair'][0]['counters']
    ok = t(done == per_qp * QPS and got == consumers(per_qp) * QPS and bad == 0 and errs == 0,
           f"{mode} {what}: {done}/{per_qp * QPS} completed, {got}/"
           f"{consumers(per_qp) * QPS} received, {bad} out of order or wrong, {errs} failed "
           f"({[ja['first_error'] for ja, _ in jobs if ja['errors']]})")
    print(f"{mode:3} {what:16} {secs:6.1f} s  {'ok' if ok else 'FAILED'}  impair on B rx: "
          f"{ {k: v - imp0.get(k, 0) for k, v in imp.items() if v - imp0.get(k, 0)} }",
          flush=True)
    for d in (a, b):
        d.ctl('impair', 'clear')
    for na, nb in pairs:
        a.ctl('qp', 'destroy', na)
        b.ctl('qp', 'destroy', nb)
    a.ctl('mr', 'dereg', ma['rkey'])
    b.ctl('mr', 'dereg', mb['rkey'])


def main():
    modes = sys.argv[2:] or ['gbn', 'sr']
    t = Checks('loss')
    with Pair(sys.argv[1]) as pair:
        for mode in modes:
            for n, (what, spec) in enumerate(IMPAIRMENTS):
                run(t, pair, mode, what, spec, 11 + n)
        c = pair.a.ctl('counters')['counters']
        t(c.get('DROP_ICRC') == 0, 'no ICRC errors')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
