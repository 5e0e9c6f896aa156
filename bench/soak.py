#!/usr/bin/python3
"""The soak driver of bench/soak.sh (which starts the two roced and passes their sockets): N QP
pairs of verified mixed traffic (op=mixed -> op=mixed_recv) between A and B for SECS seconds
under loss, reordering and duplication on both daemons' receive and transmit sides, half the
QPs selective repeat and half go-back-N, half of each with A as requester and half with B.

Every ~10 s one sample line. At the end, checks that must hold exactly (the exit status says
whether they all did):
  - jobs: every requester job finished with completed == posted, no failed completion, no
    verify error (order, READ data, atomic results) on any job; every receiver job got
    exactly the SENDs and WRITE_IMMs of the messages its requester completed, verified; the
    FETCH_ADD and CMP_SWAP counters in each receiver's memory equal the number of atomics
    completed (each executed exactly once). On a QP whose requester failed (that is a failed
    check already) at least the completed and at most the posted messages were executed;
  - counters, over the traffic window (from a quiescent point after impairment was set to one
    after the traffic drained, impairment still set): completions (WQE_COMPLETED,
    RECV_COMPLETED) equal the jobs' figures; for each direction every frame is accounted for
    from the sender's engine through its tx impairment stage, the port, memif, the receiver's
    rx stage, the classifier, to the receiver's engine, and the RoCE packets the sender built
    minus impairment drops plus duplicates equal the packets the receiver's QPs took;
    nothing failed (RETRY_EXC, CQ_OVERRUN, TX_NOMBUF, TX_RING_FULL, HANDOFF_DROP, ICRC
    drops, ...);
  - resources: heap bytes and mbufs in use flat (last third of the samples taken while the
    traffic runs against the first third: heap means; mbufs each daemon's floor and the mean
    of A + B, as one side's engine transmit ring is full at a time; within the bounds
    printed), mbufs in use back to the idle figure once the traffic drained, heap and mbufs
    back to the pre-setup figures (after a warm-up) once the QPs and MRs are destroyed.

usage: soak.py (run by bench/soak.sh; settings in the environment, see soak.sh)
"""
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time

E = os.environ
BUILD = E['SOAK_BUILD']
TMP = E['SOAK_TMP']
SECS = int(E['SOAK_SECS'])
QPS = int(E.get('SOAK_QPS', '1024'))
SIZE = int(E.get('SOAK_SIZE', '1024'))
MTU = int(E.get('SOAK_MTU', '256'))
DEPTH = int(E.get('SOAK_DEPTH', '4'))
RQ = int(E.get('SOAK_RQ', '32'))
TIMEOUT = int(E.get('SOAK_TIMEOUT', '16'))
# roced grants exactly the rights named: the mixed traffic writes, reads and does atomics.
MR_RIGHTS = ['local_write', 'remote_write', 'remote_read', 'remote_atomic']
QP_RIGHTS = MR_RIGHTS[1:]
SR_RTO = int(E.get('SOAK_SR_RTO_US', '2000'))
IMPAIR = E.get('SOAK_IMPAIR', 'loss=0.2%,reorder=0.5%:4,dup=0.2%')
PERIOD = float(E.get('SOAK_PERIOD', '10'))
MODES = E.get('SOAK_MODES', 'sr gbn').split()
# Bounds of the flatness checks (the last third of the samples taken while the traffic runs
# against the first third): heap growth in bytes (means), mbuf growth in mbufs (each daemon's
# floor, and the mean of A + B).
HEAP_BOUND = int(E.get('SOAK_HEAP_BOUND', str(256 * 1024)))
MBUF_BOUND = int(E.get('SOAK_MBUF_BOUND', '256'))
# Counters of the "no failure counters" checks that may be non-zero (none by default).
ALLOW = set(E.get('SOAK_ALLOW', '').split())

SLOTS, WSLOTS = 16, 256
PERIOD_OPS = ['write', 'send', 'read', 'write_imm', 'faa', 'send', 'write', 'cas']
RA = SIZE * SLOTS                       # ROCE_MIX_REGION(size)
RB = SIZE * (1 + WSLOTS + RQ) + 16      # ROCE_MIX_RECV_REGION(size, RQ)


class Failure(Exception):
    pass


def log(*a):
    print(*a, flush=True)


class Ctl:
    """A rocectl prompt on stdin (one connection), one JSON reply line per `call` line."""

    def __init__(self, name):
        self.name = name
        self.sock = os.path.join(TMP, f'{name}.sock')
        self.p = subprocess.Popen(
            [os.path.join(BUILD, 'app/rocectl'), '-s', self.sock, '--json', '--timeout',
             '30000'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=open(os.path.join(TMP, f'rocectl-{name}.err'), 'w'), text=True, bufsize=1)
        self.q = queue.Queue()
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        for line in self.p.stdout:
            self.q.put(line)
        self.q.put(None)

    def many(self, reqs, check=True):
        """reqs: [(cmd, {args})]; replies in order. Written 64 at a time, replies read back."""
        out = []
        for i in range(0, len(reqs), 64):
            chunk = reqs[i:i + 64]
            # rocectl's words split at '=' (NAME=VALUE): inside the JSON strings it is \u003d.
            self.p.stdin.write(''.join(
                f"call {c} '{json.dumps(a, separators=(',', ':'))}'\n".replace('=', '\\u003d')
                for c, a in chunk))
            self.p.stdin.flush()
            for c, a in chunk:
                try:
                    line = self.q.get(timeout=60)
                except queue.Empty:
                    raise Failure(f'{self.name}: no reply to {c} {a} (see rocectl-{self.name}.err)')
                if line is None:
                    raise Failure(f'{self.name}: rocectl exited (see rocectl-{self.name}.err)')
                r = json.loads(line)
                if check and not r.get('ok'):
                    raise Failure(f'{self.name}: {c} {a}: {r.get("error")}')
                out.append(r)
        return out

    def __call__(self, cmd, **args):
        return self.many([(cmd, args)])[0]

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)


class Tel:
    """The DPDK telemetry socket of a daemon (EAL file prefix)."""

    def __init__(self, prefix):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(f'/var/run/dpdk/{prefix}/dpdk_telemetry.v2')
        self.s.recv(4096)

    def __call__(self, cmd):
        self.s.send(cmd.encode())
        return json.loads(self.s.recv(1 << 16).decode())[cmd.split(',')[0]]


def consumers(n):
    """Messages of [0, n) that consume a receive (SEND, WRITE_IMM)."""
    full, rest = divmod(n, 8)
    return full * 3 + sum(1 for i in range(rest) if PERIOD_OPS[i] in ('send', 'write_imm'))


def atomics(n, op):
    full, rest = divmod(n, 8)
    return full + sum(1 for i in range(rest) if PERIOD_OPS[i] == op)


class Daemon:
    def __init__(self, name, prefix):
        self.name, self.ctl, self.tel = name, Ctl(name), Tel(prefix)

    def snap(self):
        """Everything the balances need, read while nothing moves."""
        st = self.ctl('status')
        c = self.ctl('counters')['counters']
        imp = {x['dir']: x['counters'] for x in self.ctl('impair.show', port=0)['impair']}
        eth = self.tel('/ethdev/stats,0')
        heap = self.tel('/eal/heap_info,0')
        return {'c': c, 'imp': imp, 'eth': eth, 'heap': heap['Alloc_size'],
                'allocs': heap['Alloc_count'], 'heap_bytes': st['heap_bytes'],
                'mbufs': st['mbufs_in_use']}


def delta(x1, x0):
    if isinstance(x1, dict):
        return {k: delta(v, x0.get(k, 0) if isinstance(x0, dict) else 0) for k, v in x1.items()}
    if isinstance(x1, list):
        return x1
    return x1 - x0


NET_TX = ['NET_ARP_REPLY_TX', 'NET_ECHO_REPLY_TX', 'NET_ECHO6_REPLY_TX', 'NET_NA_TX',
          'NET_ARP_REQ_TX', 'NET_NS_TX']
IMP_DROPS = ['dropped_uniform', 'dropped_burst', 'rate_dropped', 'overflow']
# Packets rocedp itself dropped (not the impairment): a full transmit ring, QP state, ...
INTERNAL_DROPS = ['TX_RING_FULL', 'TX_NOMBUF', 'STATE_DROP', 'UNKNOWN_QP', 'HANDOFF_DROP',
                  'PORT_TX_DROP', 'RX_DROP', 'SR_OOO_DROP', 'SR_WINDOW_DROP']
ZERO = ['RETRY_EXC', 'RNR_RETRY_EXC', 'CQ_OVERRUN', 'TX_NOMBUF', 'TX_RING_FULL', 'HANDOFF_DROP',
        'NOT_OURS', 'UNKNOWN_QP', 'STATE_DROP', 'BAD_PKEY', 'PORT_TX_DROP', 'RX_DROP',
        'NAK_INV_TX', 'NAK_ACC_TX', 'NAK_OP_TX', 'NAK_RNR_TX', 'SR_REJECT', 'SR_OOO_DROP',
        'GHOST_ACK', 'BAD_RESP', 'ROCE_L2_DST', 'ROCE_VLAN', 'OTHER_DROP']


class Checks:
    def __init__(self):
        self.rows, self.failed = [], 0

    def __call__(self, what, ok, detail=''):
        self.rows.append((what, ok, detail))
        if not ok:
            self.failed += 1
        return ok


def warm_up(a, b):
    """One QP pair of mixed traffic under impairment, then everything destroyed: what the
    daemons allocate once (a port's impairment stages) exists before the pre-setup figures."""
    ma, mb = a.ctl('mr.reg', size=RA, access=MR_RIGHTS)['mr'], b.ctl('mr.reg', size=RB, access=MR_RIGHTS)['mr']
    x = a.ctl('qp.create', sq_depth=SLOTS, rq_depth=RQ, access=QP_RIGHTS)['qp']
    y = b.ctl('qp.create', sq_depth=SLOTS, rq_depth=RQ, access=QP_RIGHTS)['qp']
    for d, q, r in ((a, x, y), (b, y, x)):
        d.ctl('qp.connect', qpn=q['qpn'], mtu=MTU, timeout=TIMEOUT,
              remote={'qpn': r['qpn'], 'psn': r['psn'], 'ip': r['ip'], 'mac': r['mac']})
        for dr in ('rx', 'tx'):
            d.ctl('impair.set', spec=IMPAIR, port=0, dir=dr)
    b.ctl('job.start', qpn=y['qpn'], op='mixed_recv', lkey=mb['lkey'], length=SIZE, depth=RQ,
          count=consumers(200))
    a.ctl('job.start', qpn=x['qpn'], op='mixed', lkey=ma['lkey'], length=SIZE, depth=DEPTH,
          remote_addr=mb['iova'], rkey=mb['rkey'], count=200)
    end = time.time() + 20
    while time.time() < end and (a.ctl('job.show', qpn=x['qpn'])['job']['running'] or
                                 b.ctl('job.show', qpn=y['qpn'])['job']['running']):
        time.sleep(0.1)
    ja, jb = a.ctl('job.show', qpn=x['qpn'])['job'], b.ctl('job.show', qpn=y['qpn'])['job']
    if ja['running'] or ja['completed'] != 200 or ja['errors'] or ja['verify_errors'] or \
            jb['completed'] != consumers(200) or jb['errors'] or jb['verify_errors']:
        raise Failure(f'warm-up: 200 mixed messages on one QP pair failed: {ja} {jb}')
    for d, q, m in ((a, x, ma), (b, y, mb)):
        d.ctl('impair.clear')
        d.ctl('qp.destroy', qpn=q['qpn'])
        d.ctl('mr.dereg', rkey=m['rkey'])
    time.sleep(0.5)


def main():
    t0 = time.time()
    a = Daemon('a', E['SOAK_PREFIX_A'])
    b = Daemon('b', E['SOAK_PREFIX_B'])
    ds = {'a': a, 'b': b}
    chk = Checks()
    warm_up(a, b)
    idle0 = {n: d.snap() for n, d in ds.items()}

    # ---- setup: MRs, QP pairs (k % 2: mode; k // 2 % 2: which daemon requests) ----
    pairs = []
    for k in range(QPS):
        mode = MODES[k % len(MODES)]
        req, rsp = ('a', 'b') if (k // len(MODES)) % 2 == 0 else ('b', 'a')
        pairs.append({'k': k, 'mode': mode, 'req': req, 'rsp': rsp})
    nreq = {n: sum(1 for p in pairs if p['req'] == n) for n in ds}
    nrsp = {n: sum(1 for p in pairs if p['rsp'] == n) for n in ds}
    mr_req = {n: ds[n].ctl('mr.reg', size=max(1, nreq[n]) * RA, access=MR_RIGHTS)['mr'] for n in ds}
    mr_rsp = {n: ds[n].ctl('mr.reg', size=max(1, nrsp[n]) * RB, access=MR_RIGHTS)['mr'] for n in ds}
    slot = {n: [0, 0] for n in ds}
    for p in pairs:
        p['loff'] = slot[p['req']][0] * RA
        slot[p['req']][0] += 1
        p['roff'] = slot[p['rsp']][1] * RB
        slot[p['rsp']][1] += 1
    qa = a.ctl.many([('qp.create', {'sq_depth': SLOTS, 'rq_depth': RQ, 'access': QP_RIGHTS})] * QPS)
    qb = b.ctl.many([('qp.create', {'sq_depth': SLOTS, 'rq_depth': RQ, 'access': QP_RIGHTS})] * QPS)
    for p, x, y in zip(pairs, qa, qb):
        p['qp'] = {'a': x['qp'], 'b': y['qp']}

    def conn(me, peer, p):
        q, r = p['qp'][me], p['qp'][peer]
        args = {'qpn': q['qpn'], 'remote': {'qpn': r['qpn'], 'psn': r['psn'], 'ip': r['ip'],
                                            'mac': r['mac']},
                'mtu': MTU, 'timeout': TIMEOUT, 'retry_cnt': 7}
        if p['mode'] == 'sr':
            args.update(sr=True, sr_rto_us=SR_RTO)
        return ('qp.connect', args)
    a.ctl.many([conn('a', 'b', p) for p in pairs])
    b.ctl.many([conn('b', 'a', p) for p in pairs])
    t_setup = time.time() - t0

    # ---- impairment on both daemons, both directions, each stage its own seed ----
    seeds = {('a', 'rx'): 101, ('a', 'tx'): 102, ('b', 'rx'): 103, ('b', 'tx'): 104}
    for (n, dr), s in seeds.items():
        ds[n].ctl('impair.set', spec=f'{IMPAIR},seed={s}', port=0, dir=dr)
    time.sleep(1)
    base = {n: d.snap() for n, d in ds.items()}

    # ---- jobs ----
    for n in ds:
        ds[n].ctl.many([('job.start', {
            'qpn': p['qp'][n]['qpn'], 'op': 'mixed_recv', 'lkey': mr_rsp[n]['lkey'],
            'offset': p['roff'], 'length': SIZE, 'depth': RQ, 'seed': 1000 + p['k']})
            for p in pairs if p['rsp'] == n])
    for n in ds:
        peer = 'b' if n == 'a' else 'a'
        ds[n].ctl.many([('job.start', {
            'qpn': p['qp'][n]['qpn'], 'op': 'mixed', 'lkey': mr_req[n]['lkey'],
            'offset': p['loff'], 'length': SIZE, 'depth': DEPTH,
            'remote_addr': mr_rsp[peer]['iova'] + p['roff'], 'rkey': mr_rsp[peer]['rkey'],
            'duration_ms': SECS * 1000, 'seed': 1000 + p['k']})
            for p in pairs if p['req'] == n])
    tj = time.time()
    log(f'soak: {QPS} QP pairs ({", ".join(MODES)}; requester A on {nreq["a"]}, B on '
        f'{nreq["b"]}), mixed {8}..{SIZE} B, path MTU {MTU}, depth {DEPTH}, {SECS} s; '
        f'impairment on A and B, rx and tx: {IMPAIR}; setup {t_setup:.1f} s')
    hdr = (f'{"t_s":>6} {"msgs":>11} {"msg/s":>8} {"err":>4} {"heapA_B":>11} {"heapB_B":>11} '
           f'{"mbufA":>6} {"mbufB":>6} {"retrans":>9} {"timeouts":>8} {"imp_drop":>9} '
           f'{"imp_dup":>8} {"nak_seq":>8} {"sr_rtx":>8} {"int_drop":>8} {"rtr_exc":>7}')
    log(hdr)
    samples = []
    last_msgs, last_t = 0, tj
    next_t = tj + PERIOD
    while True:
        now = time.time()
        if now < next_t:
            time.sleep(min(next_t - now, 1.0))
            if time.time() < next_t:
                continue
        next_t += PERIOD
        s = {'t': time.time() - tj}
        run = 0
        for n, d in ds.items():
            st = d.ctl('status')
            c = d.ctl('counters')['counters']
            tot = d.ctl('job.total')['total']
            imp = {x['dir']: x['counters'] for x in d.ctl('impair.show', port=0)['impair']}
            s[n] = {'heap': st['heap_bytes'], 'mbufs': st['mbufs_in_use'],
                    'allocs': d.tel('/eal/heap_info,0')['Alloc_count'],
                    'wqe': c['WQE_COMPLETED'] - base[n]['c']['WQE_COMPLETED'],
                    'err': tot['errors'] + tot['verify_errors'],
                    'retx': c['RETRANSMITS'] - base[n]['c']['RETRANSMITS'],
                    'srtx': c['SR_RETRANSMITS'] - base[n]['c']['SR_RETRANSMITS'],
                    'tmo': c['TIMEOUTS'] - base[n]['c']['TIMEOUTS'],
                    'nak': c['NAK_SEQ_RX'] - base[n]['c']['NAK_SEQ_RX'],
                    'drop': sum(imp[dr][k] - base[n]['imp'][dr][k]
                                for dr in imp for k in IMP_DROPS),
                    'dup': sum(imp[dr]['duplicated'] - base[n]['imp'][dr]['duplicated']
                               for dr in imp),
                    'idrop': sum(c[k] - base[n]['c'][k] for k in INTERNAL_DROPS),
                    'rexc': c['RETRY_EXC'] - base[n]['c']['RETRY_EXC']}
            run += tot['running']
        msgs = s['a']['wqe'] + s['b']['wqe']
        rate = (msgs - last_msgs) / max(1e-9, time.time() - last_t)
        last_msgs, last_t = msgs, time.time()
        s['msgs'], s['running'] = msgs, run
        samples.append(s)
        log(f'{s["t"]:6.0f} {msgs:11d} {rate:8.0f} {s["a"]["err"] + s["b"]["err"]:4d} '
            f'{s["a"]["heap"]:11d} {s["b"]["heap"]:11d} {s["a"]["mbufs"]:6d} '
            f'{s["b"]["mbufs"]:6d} {s["a"]["retx"] + s["b"]["retx"]:9d} '
            f'{s["a"]["tmo"] + s["b"]["tmo"]:8d} {s["a"]["drop"] + s["b"]["drop"]:9d} '
            f'{s["a"]["dup"] + s["b"]["dup"]:8d} {s["a"]["nak"] + s["b"]["nak"]:8d} '
            f'{s["a"]["srtx"] + s["b"]["srtx"]:8d} {s["a"]["idrop"] + s["b"]["idrop"]:8d} '
            f'{s["a"]["rexc"] + s["b"]["rexc"]:7d}')
        # Only the receiver jobs (they run until stopped) left: the requesters are done.
        if (s['t'] >= SECS and run <= len(pairs)) or s['t'] > SECS + 120:
            break
    t_traffic = time.time() - tj

    # ---- requesters finished: receivers must have seen exactly their messages ----
    jobs = {}
    for n in ds:
        mine = [p for p in pairs if p['req'] == n]
        for p, r in zip(mine, ds[n].ctl.many([('job.show', {'qpn': p['qp'][n]['qpn']})
                                             for p in mine])):
            p['rj'] = r['job']
    end = time.time() + 30
    while True:
        for n in ds:
            mine = [p for p in pairs if p['rsp'] == n]
            for p, r in zip(mine, ds[n].ctl.many([('job.show', {'qpn': p['qp'][n]['qpn']})
                                                 for p in mine])):
                p['sj'] = r['job']
        short = [p for p in pairs if p['sj']['completed'] < consumers(p['rj']['completed'])]
        if not short or time.time() > end:
            break
        time.sleep(0.5)
    for n in ds:
        ds[n].ctl.many([('job.stop', {'qpn': p['qp'][n]['qpn']}) for p in pairs
                        if p['rsp'] == n], check=False)
    # Drained: nothing moves any more (ACKs of duplicates, held frames released) -- impairment
    # still set, so the stages' counters stay consistent.
    prev = None
    for _ in range(30):
        time.sleep(1)
        cur = [(d.ctl('counters')['counters']['PORT_TX_PKTS'],
                d.ctl('counters')['counters']['PORT_RX_PKTS']) for d in ds.values()]
        if cur == prev:
            break
        prev = cur
    fin = {n: d.snap() for n, d in ds.items()}
    dl = {n: delta(fin[n], base[n]) for n in ds}

    # ---- jobs ----
    posted = sum(p['rj']['posted'] for p in pairs)
    completed = sum(p['rj']['completed'] for p in pairs)
    bad_req = [p for p in pairs if p['rj']['running'] or p['rj']['errors'] or
               p['rj']['verify_errors'] or p['rj']['completed'] != p['rj']['posted']]
    chk('requester jobs: finished, completed == posted, 0 failed, 0 verify errors',
        not bad_req, f'{len(pairs) - len(bad_req)}/{len(pairs)} QPs; {completed}/{posted} msgs'
        + (f'; failed QPs (k, mode, requester, completed): '
           f'{[(p["k"], p["mode"], p["req"], p["rj"]["completed"]) for p in bad_req][:40]}'
           if bad_req else '')
        + (f'; first bad: k={bad_req[0]["k"]} {bad_req[0]["mode"]} {bad_req[0]["rj"]}'
           if bad_req else ''))
    # A QP whose requester failed (RETRY_EXC) may have had messages executed whose ACK never
    # came: there, each message must have been executed at most once and none beyond those
    # posted; everywhere else exactly the completed ones.
    clean = [p for p in pairs if not p['rj']['errors']]
    failed = [p for p in pairs if p['rj']['errors']]
    vbad = [p for p in pairs if p['rj']['verify_errors'] or p['sj']['verify_errors']]
    chk('no verify error on any job (order, lengths, bytes, READ data, atomic results)',
        not vbad, f'{len(pairs) - len(vbad)}/{len(pairs)} QP pairs clean' +
        (f'; first bad: k={vbad[0]["k"]} {vbad[0]["rj"]} {vbad[0]["sj"]}' if vbad else ''))
    want = sum(consumers(p['rj']['completed']) for p in pairs)
    got = sum(p['sj']['completed'] for p in pairs)
    bad_rcv = [p for p in clean if p['sj']['errors'] or p['sj']['verify_errors'] or
               p['sj']['completed'] != consumers(p['rj']['completed'])]
    chk('receiver jobs: exactly the SENDs/WRITE_IMMs completed, verified', not bad_rcv,
        f'{len(clean) - len(bad_rcv)}/{len(clean)} QPs whose requester did not fail'
        + (f'; first bad: k={bad_rcv[0]["k"]} {bad_rcv[0]["sj"]}' if bad_rcv else ''))
    at = {}
    for n in ds:
        mine = [p for p in pairs if p['rsp'] == n]
        dumps = ds[n].ctl.many([('mr.dump', {'rkey': mr_rsp[n]['rkey'],
                                             'offset': p['roff'] + SIZE * (1 + WSLOTS),
                                             'length': 16}) for p in mine])
        for p, r in zip(mine, dumps):
            h = bytes.fromhex(r['hex'])
            at[p['k']] = (int.from_bytes(h[:8], 'little'), int.from_bytes(h[8:], 'little'))
    bad_at = [(p['k'],) + at[p['k']] for p in clean
              if at[p['k']] != (atomics(p['rj']['completed'], 'faa'),
                                atomics(p['rj']['completed'], 'cas'))]
    n_at = sum(atomics(p['rj']['completed'], 'faa') + atomics(p['rj']['completed'], 'cas')
               for p in pairs)
    chk('atomics executed exactly once (responder memory == atomics completed)', not bad_at,
        f'{n_at} atomics on {len(clean)} QPs' +
        (f'; first bad (k, faa, cas): {bad_at[0]}' if bad_at else ''))

    def within(p, v, f):
        return f(p['rj']['completed']) <= v <= f(p['rj']['posted'])
    bad_f = [p for p in failed if p['sj']['errors'] or p['sj']['verify_errors'] or
             not within(p, p['sj']['completed'], consumers) or
             not within(p, at[p['k']][0], lambda x: atomics(x, 'faa')) or
             not within(p, at[p['k']][1], lambda x: atomics(x, 'cas'))]
    extra = sum(p['sj']['completed'] - consumers(p['rj']['completed']) for p in failed)
    extra_at = sum(sum(at[p['k']]) - atomics(p['rj']['completed'], 'faa') -
                   atomics(p['rj']['completed'], 'cas') for p in failed)
    chk('QPs whose requester failed: nothing executed twice or beyond what was posted',
        not bad_f, f'{len(failed)} such QPs; executed but not completed: {extra} receives, '
        f'{extra_at} atomics' + (f'; first bad: k={bad_f[0]["k"]} {bad_f[0]["rj"]} '
                                 f'{bad_f[0]["sj"]} {at[bad_f[0]["k"]]}' if bad_f else ''))

    # ---- counters over the window ----
    for n in ds:
        peer = 'b' if n == 'a' else 'a'
        c = dl[n]['c']
        wqe = sum(p['rj']['completed'] + p['rj']['errors'] for p in pairs if p['req'] == n)
        rcv = sum(p['sj']['completed'] + p['sj']['errors'] for p in pairs if p['rsp'] == n)
        chk(f'{n}: WQE_COMPLETED == its requester jobs\' completions (+ failed ones)',
            c['WQE_COMPLETED'] == wqe, f'{c["WQE_COMPLETED"]} == {wqe}')
        chk(f'{n}: RECV_COMPLETED == its receiver jobs\' completions (+ failed ones)',
            c['RECV_COMPLETED'] == rcv, f'{c["RECV_COMPLETED"]} == {rcv}')
        nz = {k: c.get(k) for k in ZERO if c.get(k) and k not in ALLOW}
        nz.update({k: v for k, v in c.items() if k.startswith('DROP_') and v})
        nz.update({f'{dr}.nomem': dl[n]['imp'][dr]['nomem'] for dr in ('rx', 'tx')
                   if dl[n]['imp'][dr]['nomem']})
        chk(f'{n}: no failure counters ({", ".join(ZERO[:6])}, ...)', not nz, str(nz or 'all 0'))
        for dr in ('rx', 'tx'):
            i = dl[n]['imp'][dr]
            lhs, rhs = i['seen'] + i['duplicated'], i['passed'] + sum(i[k] for k in IMP_DROPS)
            chk(f'{n} {dr} impairment: seen + duplicated == passed + dropped', lhs == rhs,
                f'{i["seen"]} + {i["duplicated"]} == {i["passed"]} + '
                f'{sum(i[k] for k in IMP_DROPS)}')
        # Transmit side of n: engine + lib/net -> tx stage -> port -> ethdev.
        net = sum(c[k] for k in NET_TX)
        it = dl[n]['imp']['tx']
        chk(f'{n} tx: TX_PKTS + lib/net frames == tx stage seen', c['TX_PKTS'] + net == it['seen'],
            f'{c["TX_PKTS"]} + {net} == {it["seen"]}')
        chk(f'{n} tx: tx stage passed == PORT_TX_PKTS == ethdev opackets',
            it['passed'] == c['PORT_TX_PKTS'] == dl[n]['eth']['opackets'],
            f'{it["passed"]} == {c["PORT_TX_PKTS"]} == {dl[n]["eth"]["opackets"]}')
        # The wire: memif loses nothing (a full ring refuses, and the worker sends again).
        chk(f'memif {n}->{peer}: opackets == peer ipackets',
            dl[n]['eth']['opackets'] == dl[peer]['eth']['ipackets'],
            f'{dl[n]["eth"]["opackets"]} == {dl[peer]["eth"]["ipackets"]}')
        # Receive side of n: ethdev -> rx stage -> port counter -> classifier -> engine.
        ir = dl[n]['imp']['rx']
        chk(f'{n} rx: ethdev ipackets == rx stage seen, passed == PORT_RX_PKTS',
            dl[n]['eth']['ipackets'] == ir['seen'] and ir['passed'] == c['PORT_RX_PKTS'],
            f'{dl[n]["eth"]["ipackets"]} == {ir["seen"]}, {ir["passed"]} == {c["PORT_RX_PKTS"]}')
        types = sum(v for k, v in c.items() if k.startswith('RX_') and k not in
                    ('RX_PKTS', 'RX_BYTES'))
        chk(f'{n} rx: PORT_RX_PKTS == sum of classifier types', c['PORT_RX_PKTS'] == types,
            f'{c["PORT_RX_PKTS"]} == {types}')
        lost = sum(c[k] for k in ('UNKNOWN_QP', 'STATE_DROP', 'BAD_PKEY', 'ROCE_L2_DST',
                                  'ROCE_VLAN', 'NOT_OURS', 'HANDOFF_DROP'))
        chk(f'{n} rx: RX_ROCE == QPs\' RX_PKTS + RoCE drops', c['RX_ROCE'] == c['RX_PKTS'] + lost,
            f'{c["RX_ROCE"]} == {c["RX_PKTS"]} + {lost}')
    for n, peer in (('a', 'b'), ('b', 'a')):
        c, cp = dl[n]['c'], dl[peer]['c']
        it, ir = dl[n]['imp']['tx'], dl[peer]['imp']['rx']
        drops = sum(it[k] + ir[k] for k in IMP_DROPS)
        dups = it['duplicated'] + ir['duplicated']
        net = sum(c[k] for k in NET_TX)
        nonroce = cp['PORT_RX_PKTS'] - cp['RX_ROCE']
        chk(f'RoCE {n}->{peer}: built - impairment drops + dups == RoCE frames the peer got',
            c['TX_PKTS'] - drops + dups == cp['RX_ROCE'] and net == 0 and nonroce == 0,
            f'{c["TX_PKTS"]} - {drops} + {dups} == {cp["RX_ROCE"]} (net frames {net}, '
            f'non-RoCE received {nonroce}; the peer\'s QPs took {cp["RX_PKTS"]})')

    # ---- resources ----
    # Flat while the traffic runs: the samples up to SECS (the rest are the drain).
    busy = [x for x in samples if x['t'] <= SECS - 2] or samples
    third = max(1, len(busy) // 3)
    first, last = busy[:third], busy[-third:]
    # Heap: means. Mbufs in use swing between ~0 and a full engine transmit ring (4096)
    # with whichever side's peer is slower at the moment, so their means say little; a leak
    # raises the floor (the least of a third) and the pair's total.
    drift = {}
    for n in ds:
        m0 = sum(x[n]['heap'] for x in first) / len(first)
        m1 = sum(x[n]['heap'] for x in last) / len(last)
        drift[(n, 'heap')] = m1 - m0
        chk(f'{n}: heap flat (mean of the last third - the first third <= {HEAP_BOUND} B)',
            len(busy) >= 3 and m1 - m0 <= HEAP_BOUND,
            f'{m0:.0f} -> {m1:.0f} ({m1 - m0:+.0f} B; {len(first)} and {len(last)} of '
            f'{len(busy)} samples)')
        f0, f1 = min(x[n]['mbufs'] for x in first), min(x[n]['mbufs'] for x in last)
        m0 = sum(x[n]['mbufs'] for x in first) / len(first)
        m1 = sum(x[n]['mbufs'] for x in last) / len(last)
        drift[(n, 'mbufs')] = f1 - f0
        drift[(n, 'mbufs_mean')] = m1 - m0
        # One daemon's figure is not a leak signal: the full send buffer (up to 4096
        # packets) moves to whichever side's peer is slower, and stays for a while. The pair's
        # sum below and the drained figures are the checks.
        print(f'  info {n}: mbufs in use, floor {f0} -> {f1} ({f1 - f0:+d}); mean {m0:.0f} -> '
              f'{m1:.0f} ({m1 - m0:+.0f}), max {max(x[n]["mbufs"] for x in first)} -> '
              f'{max(x[n]["mbufs"] for x in last)}')
        chk(f'{n}: mbufs in use back to idle once drained', fin[n]['mbufs'] <= base[n]['mbufs'],
            f'{base[n]["mbufs"]} before the traffic, {fin[n]["mbufs"]} after')
    m0 = sum(x['a']['mbufs'] + x['b']['mbufs'] for x in first) / len(first)
    m1 = sum(x['a']['mbufs'] + x['b']['mbufs'] for x in last) / len(last)
    drift['pair_mbufs'] = m1 - m0
    chk(f'A + B: mbufs in use flat (mean of the last third - the first third <= {MBUF_BOUND})',
        len(busy) >= 3 and m1 - m0 <= MBUF_BOUND, f'{m0:.0f} -> {m1:.0f} ({m1 - m0:+.0f})')
    for n in ds:
        ds[n].ctl('impair.clear')
    for n in ds:
        ds[n].ctl.many([('qp.destroy', {'qpn': p['qp'][n]['qpn']}) for p in pairs])
        ds[n].ctl('mr.dereg', rkey=mr_req[n]['rkey'])
        ds[n].ctl('mr.dereg', rkey=mr_rsp[n]['rkey'])
    time.sleep(1)
    idle1 = {n: d.snap() for n, d in ds.items()}
    for n in ds:
        chk(f'{n}: heap and mbufs back to the pre-setup figures after destroy',
            idle1[n]['heap_bytes'] == idle0[n]['heap_bytes'] and
            idle1[n]['mbufs'] <= idle0[n]['mbufs'],
            f'heap {idle0[n]["heap_bytes"]} -> {idle1[n]["heap_bytes"]} '
            f'({idle1[n]["heap_bytes"] - idle0[n]["heap_bytes"]:+d} B, allocations '
            f'{idle0[n]["allocs"]} -> {idle1[n]["allocs"]}), mbufs {idle0[n]["mbufs"]} -> '
            f'{idle1[n]["mbufs"]}')

    # ---- summary ----
    sc = {k: dl['a']['c'][k] + dl['b']['c'][k] for k in dl['a']['c']}
    si = {k: sum(dl[n]['imp'][dr][k] for n in ds for dr in ('rx', 'tx'))
          for k in dl['a']['imp']['rx']}
    byq = {}
    for p in pairs:
        g = (p['mode'], p['req'])
        byq.setdefault(g, [0, 0, 0])
        byq[g][0] += 1
        byq[g][1] += p['rj']['completed']
        byq[g][2] += p['rj']['errors'] + p['rj']['verify_errors'] + p['sj']['errors'] + \
            p['sj']['verify_errors']
    log('')
    log(f'soak summary: {t_traffic:.0f} s of traffic, {len(samples)} samples')
    rows = [('messages completed (posted)', f'{completed} ({posted})'),
            ('message rate', f'{completed / max(1e-9, t_traffic):.0f} msg/s'),
            ('receives verified (expected)', f'{got} ({want})'),
            ('atomics executed once', f'{n_at}'),
            ('job errors / verify errors',
             f'{sum(p["rj"]["errors"] + p["sj"]["errors"] for p in pairs)} / '
             f'{sum(p["rj"]["verify_errors"] + p["sj"]["verify_errors"] for p in pairs)}')]
    for (mode, req), (nq, nm, ne) in sorted(byq.items()):
        rows.append((f'  {mode} QPs, requester {req.upper()}', f'{nq} QPs, {nm} msgs, {ne} errors'))
    rows += [('RoCE packets sent (A+B)', f'{sc["TX_PKTS"]}'),
             ('retransmits (GBN+SR) / SR singles', f'{sc["RETRANSMITS"]} / {sc["SR_RETRANSMITS"]}'),
             ('ACK timeouts (SR RTO)', f'{sc["TIMEOUTS"]} ({sc["SR_TIMEOUTS"]})'),
             ('NAK seq sent / received', f'{sc["NAK_SEQ_TX"]} / {sc["NAK_SEQ_RX"]}'),
             ('duplicates seen (req, read, atomic, SR)',
              f'{sc["DUP_REQ"]}, {sc["DUP_READ"]}, {sc["DUP_ATOMIC"]}, {sc["SR_DUP"]}'),
             ('OOS drops / SR out-of-order placed', f'{sc["OOS_DROP"]} / {sc["SR_OOO_PLACED"]}'),
             ('rocedp\'s own drops', ', '.join(f'{k} {sc[k]}' for k in INTERNAL_DROPS
                                               if sc[k]) or 'none'),
             ('QPs failed: RETRY_EXC / RNR_RETRY_EXC',
              f'{sc["RETRY_EXC"]} / {sc["RNR_RETRY_EXC"]}'),
             ('impairment: seen, dropped, reordered, duplicated',
              f'{si["seen"]}, {sum(si[k] for k in IMP_DROPS)}, {si["reordered"]}, '
              f'{si["duplicated"]}')]
    for n in ds:
        rows.append((f'heap drift {n.upper()} (bound {HEAP_BOUND} B)',
                     f'{drift[(n, "heap")]:+.0f} B'))
        rows.append((f'mbuf floor drift {n.upper()} (bound {MBUF_BOUND})',
                     f'{drift[(n, "mbufs")]:+d} (mean {drift[(n, "mbufs_mean")]:+.0f})'))
    rows.append((f'mbuf drift A + B, mean (bound {MBUF_BOUND})', f'{drift["pair_mbufs"]:+.0f}'))
    w = max(len(r[0]) for r in rows)
    for k, v in rows:
        log(f'  {k:<{w}}  {v}')
    log('')
    for what, ok, detail in chk.rows:
        log(f'  {"ok  " if ok else "FAIL"} {what}: {detail}')
    log(f'soak: {len(chk.rows)} checks, {chk.failed} failed')
    for d in ds.values():
        d.ctl.close()
    return 1 if chk.failed else 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Failure as e:
        print(f'soak: FAILED: {e}', flush=True)
        for n in ('a', 'b'):
            try:
                err = open(os.path.join(TMP, f'rocectl-{n}.err')).read()
            except OSError:
                err = ''
            if err:
                print(f'rocectl {n} said:\n{err[-2000:]}', flush=True)
        sys.exit(1)
