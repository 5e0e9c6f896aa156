"""Incast through a bottleneck between roced daemons over memif, through rocectl only: the
scenario test_incast.py asserts on and bench/incast.sh tabulates.

N QPs on the sender daemon A write to one receiver B through a bottleneck on B's rx (the switch
queue in front of B: drivers/impair `bneck=RATE:BUFFER`, RED/ECN marking, tail drop or PFC
lossless mode). Each QP runs a WRITE_IMM job and B's QP a `recv` job, so that every message is
counted once at the receiver: exactly once means B received what A completed, QP by QP.
During the run the QPs' payload bytes are sampled every WINDOW seconds (qp show) for
utilisation and Jain's fairness, and the bottleneck's counters and depth samples are read from
impair show.
"""
import os
import time

from rocedp_it import Pair, MR_ALL, QP_ALL

MSG = 65536


class ApartPair(Pair):
    """A Pair whose workers do not share a CPU (A's on CPU 1, B's on CPU 0; the main lcores,
    which sleep in poll(), take the other): congestion control closes its loop in
    microseconds only when neither end waits for a scheduler slice."""

    def __enter__(self):
        m = os.path.join(self.tmp, 'memif.sock')
        self.a = self.start('a', ['-l', '0,1', f'--vdev=net_memif0,role=server,socket={m},'
                                  'bsize=8192'],
                            ['--port', 'net_memif0', '--ip', '10.0.0.1/24', '--mtu', '9000'])
        self.a.wait_ready()
        self.b = self.start('b', ['-l', '0,1', '--main-lcore', '1',
                                  f'--vdev=net_memif0,role=client,socket={m},bsize=8192'],
                            ['--port', 'net_memif0', '--ip', '10.0.0.2/24', '--mtu', '9000'])
        self.b.wait_ready()
        self.wait_link()
        return self


def jain(xs):
    s, q = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else 0.0


class Incast:
    """One run: N QPs A -> B, bottleneck on B's rx, cc on or off, SR or go-back-N."""

    def __init__(self, pair, n, rate, buffer, red, lossless=None, cc='mlx5', sr=False,
                 secs=4.0, window=1.0, depth=4, victim=None, timeout=16, max_rate=0,
                 cc_set=()):
        self.p, self.n, self.rate, self.buffer = pair, n, rate, buffer
        self.max_rate, self.cc_set = max_rate, list(cc_set)
        self.red, self.lossless, self.cc, self.sr = red, lossless, cc, sr
        self.secs, self.window, self.depth, self.victim = secs, window, depth, victim
        self.timeout = timeout

    def spec(self):
        s = f'bneck={self.rate}:{self.buffer}'
        if self.red:
            s += ',red=' + ':'.join(str(x) for x in self.red)
        if self.lossless:
            s += ',lossless=' + ':'.join(str(x) for x in self.lossless)
        return s

    def setup(self):
        a, b = self.p.a, self.p.b
        for d in (a, b):
            d.ctl('cc', 'set', f'profile={self.cc}')
            if self.cc_set:
                d.ctl('cc', 'set', *self.cc_set)
        if self.max_rate and self.cc != 'off':
            # The senders' line rate (Mb/s), as a NIC's speed bounds its RP: memif reports
            # 100 Gb/s whatever the bottleneck.
            a.ctl('cc', 'set', f'rp_max_rate={self.max_rate}')
        size = max(self.n, 1) * MSG * 2
        self.ma = a.ctl('mr', 'reg', size, MR_ALL)['mr']
        self.mb = b.ctl('mr', 'reg', size, MR_ALL)['mr']
        self.qps = []
        extra = [f'sr={str(self.sr).lower()}', f'timeout={self.timeout}']
        if self.lossless:
            # memif says 100 Gb/s, where a pause lasts 335 us: shorter than a daemon's
            # silence here. A reckons the quanta at 10 Gb/s; B's resumes end them.
            a.ctl('pfc', 'set', 0, 'link_mbps=10000')
        for i in range(self.n):
            qa = a.ctl('qp', 'create', QP_ALL, 'sq_depth=64', 'rq_depth=64')['qp']
            qb = b.ctl('qp', 'create', QP_ALL, 'sq_depth=64', 'rq_depth=256')['qp']
            dscp = []
            if self.victim is not None and i == self.n - 1:
                dscp = [f'dscp={self.victim}']
            a.ctl('qp', 'connect', qa['qpn'], qb['qpn'], qb['psn'], qb['ip'], *extra, *dscp)
            b.ctl('qp', 'connect', qb['qpn'], qa['qpn'], qa['psn'], qa['ip'], *extra, *dscp)
            self.qps.append((qa, qb))
        b.ctl('impair', 'set', f'spec={self.spec()}', 'dir=rx')
        a.ctl('counters', 'clear')
        b.ctl('counters', 'clear')

    def start(self):
        a, b = self.p.a, self.p.b
        dur = int(self.secs * 1000)
        for i, (qa, qb) in enumerate(self.qps):
            b.ctl('job', 'start', qb['qpn'], 'op=recv', f"lkey={self.mb['lkey']}",
                  f'offset={i * MSG * 2}', f'length={MSG}')
        for i, (qa, qb) in enumerate(self.qps):
            a.ctl('job', 'start', qa['qpn'], 'op=write_imm', f"lkey={self.ma['lkey']}",
                  f'offset={i * MSG * 2}', f'length={MSG}',
                  f"remote_addr={self.mb['iova'] + i * MSG * 2}", f"rkey={self.mb['rkey']}",
                  f'duration_ms={dur}', f'depth={self.depth}')

    def sample(self):
        r = self.p.a.ctl('qp', 'show')
        by = {q['qpn']: q['tx_bytes'] for q in r['qps']}
        return r['clock_ns'], [by.get(qa['qpn'], 0) for qa, _ in self.qps]

    def run(self):
        self.setup()
        imp0 = self.bneck()
        self.start()
        t_start = time.time()
        samples = [self.sample()]
        while time.time() - t_start < self.secs + 0.5:
            time.sleep(self.window)
            samples.append(self.sample())
        end = time.time() + 30
        while time.time() < end and any(self.p.a.ctl('job', 'show', qa['qpn'])['job']['running']
                                        for qa, _ in self.qps):
            time.sleep(0.2)
        res = self.results(samples, imp0)
        self.teardown()
        return res

    def bneck(self):
        return self.p.b.ctl('impair', 'show', 0, 'dir=rx')['impair'][0]

    def results(self, samples, imp0):
        a, b = self.p.a, self.p.b
        jobs = [a.ctl('job', 'show', qa['qpn'])['job'] for qa, _ in self.qps]
        recv = [b.ctl('job', 'show', qb['qpn'])['job'] for _, qb in self.qps]
        for _, qb in self.qps:
            b.ctl('job', 'stop', qb['qpn'])
        imp = self.bneck()
        c0, c1 = imp0['counters'], imp['counters']
        d = {k: c1[k] - c0.get(k, 0) for k in c1}
        # Windows while every sender ran (the first one has the start, the last the end).
        wins = []
        for (t0, b0), (t1, b1) in zip(samples, samples[1:]):
            dt = (t1 - t0) / 1e9
            wins.append([(y - x) * 8 / dt for x, y in zip(b0, b1)])
        full = wins[1:-1] if len(wins) > 2 else wins
        ca, cb = a.ctl('counters', 'nonzero=true')['counters'], b.ctl('counters', 'nonzero=true')['counters']
        # The bottleneck served every job: from the first one's start to the last one's end
        # (jobs start one control call after another).
        span = (max(j['end_ns'] for j in jobs) - min(j['start_ns'] for j in jobs)) / 1e9 or 1
        goodput = sum(j['bytes'] for j in jobs) * 8 / span
        out_bits = d.get('bneck_out_bytes', 0) * 8 + d.get('bneck_out', 0) * 24 * 8
        q = imp.get('queue', {})
        return {
            'n': self.n, 'cc': self.cc, 'sr': self.sr, 'lossless': bool(self.lossless),
            'rate': self.rate, 'goodput': goodput,
            'util': out_bits / span / self.rate,
            'win_util': [sum(w) / self.rate for w in full],
            'jain': [jain(w) for w in full],
            'per_qp': [sum(w) / len(full) if full else 0 for w in zip(*full)] if full else [],
            'tail_dropped': d.get('tail_dropped', 0), 'red_dropped': d.get('red_dropped', 0),
            'headroom_dropped': d.get('headroom_dropped', 0),
            'red_marked': d.get('red_marked', 0),
            'pause_tx': d.get('pfc_pause_tx', 0), 'resume_tx': d.get('pfc_resume_tx', 0),
            'q_p50': q.get('p50_bytes', 0), 'q_p99': q.get('p99_bytes', 0),
            'q_max': q.get('max_bytes', 0),
            'cnp_tx': cb.get('CNP_TX', 0), 'cnp_rx': ca.get('CNP_RX', 0),
            'retransmits': ca.get('RETRANSMITS', 0) + ca.get('SR_RETRANSMITS', 0),
            'timeouts': ca.get('TIMEOUTS', 0) + ca.get('SR_TIMEOUTS', 0),
            'pfc_rx_pause': ca.get('PFC_RX_PAUSE', 0), 'pfc_held': ca.get('PFC_HELD', 0),
            'pfc_paused_ns': ca.get('PFC_PAUSED_NS', 0),
            'completed': [j['completed'] for j in jobs], 'errors': sum(j['errors'] for j in jobs),
            'failed': [j['errors'] != 0 for j in jobs],
            'first_errors': sorted({j['first_error'] for j in jobs if j['errors']}),
            'received': [r['completed'] for r in recv],
            'recv_errors': sum(r['errors'] for r in recv),
            'secs': span,
        }

    def teardown(self):
        a, b = self.p.a, self.p.b
        b.ctl('impair', 'clear', 0)
        for qa, qb in self.qps:
            a.ctl('qp', 'destroy', qa['qpn'])
            b.ctl('qp', 'destroy', qb['qpn'])
        a.ctl('mr', 'dereg', self.ma['rkey'])
        b.ctl('mr', 'dereg', self.mb['rkey'])


def fmt(r):
    return (f"n={r['n']:<3} cc={r['cc']:<5} {'SR ' if r['sr'] else 'GBN'} "
            f"{'lossless' if r['lossless'] else 'lossy   '} goodput {r['goodput'] / 1e6:8.1f} Mb/s "
            f"util {r['util']:.3f} jain {min(r['jain']) if r['jain'] else 0:.3f} "
            f"q p50/p99/max {r['q_p50']}/{r['q_p99']}/{r['q_max']} B "
            f"drops tail {r['tail_dropped']} red {r['red_dropped']} marks {r['red_marked']} "
            f"CNPs {r['cnp_tx']}/{r['cnp_rx']} pauses {r['pause_tx']}/{r['resume_tx']} "
            f"retx {r['retransmits']} to {r['timeouts']} "
            f"{'exactly-once' if once(r) else 'MISMATCH'} "
            f"failed QPs {sum(r['failed'])} {','.join(r['first_errors'])}")


def once(r):
    """Every message a QP completed arrived once: B's receive completions equal A's, for the
    QPs that did not fail (a failed QP's last messages may have arrived unacknowledged)."""
    return all(f or c == v for f, c, v in zip(r['failed'], r['completed'], r['received']))
