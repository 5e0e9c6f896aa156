#!/usr/bin/python3
"""Two roced over memif exchange a SIDR_REQ and its SIDR_REP from QP1 to QP1, driven only
through rocectl (gsi sidr, gsi show, counters): IPv4 and IPv6, each way; the answer is what
Linux gives with no UD listener (status 1, unsupported), the request and service IDs echoed;
the counters of both agents say who asked and who answered; a peer that does not resolve
times out with ETIMEDOUT and the MAD is dropped as TX_UNRESOLVED; a sleeping agent is woken by
the MAD (round trips of milliseconds); QP1 never counts NOT_OURS or
UNKNOWN_QP, and a UD QP of a client still works alongside.

usage: test_gsi_pair.py BUILD_DIR
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, poll_wc  # noqa: E402

SID = 0x0000000001110000 | 7174       # RDMA_PS_UDP, port 7174


def gsi(d):
    return {k: v for k, v in d.ctl('counters')['counters'].items() if k.startswith('GSI_')}


def delta(after, before, name):
    return after.get(name, 0) - before.get(name, 0)


def main():
    t = Checks('gsi_pair')
    with Pair(sys.argv[1]) as p:
        a, b = p.a, p.b
        for x, y, ip in ((a, b, '10.0.0.2'), (b, a, '10.0.0.1'), (a, b, 'fd00::2')):
            bx, by = gsi(x), gsi(y)
            r = x.ctl('gsi', 'sidr', ip, f'service_id={SID}')
            s = r.get('sidr', {})
            t(r.get('ok') and s.get('status') == 1 and s.get('status_name') == 'unsupported'
              and s.get('service_id') == f'0x{SID:016x}' and s.get('qpn') == 0 and
              s.get('qkey') == 0 and s.get('ip') == ip and 0 < s.get('rtt_us', 0) < 1e6,
              f'{x.name} -> {ip}: SIDR_REP status 1, service ID echoed: {r}')
            time.sleep(0.05)
            ax, ay = gsi(x), gsi(y)
            t(delta(ax, bx, 'GSI_TX') == 1 and delta(ax, bx, 'GSI_SIDR_REP_RX') == 1 and
              delta(ax, bx, 'GSI_SIDR_UNMATCHED') == 0,
              f'{x.name}: one SIDR_REQ sent, its SIDR_REP taken: {ax}')
            t(delta(ay, by, 'GSI_SIDR_REQ') == 1 and delta(ay, by, 'GSI_SIDR_REP_TX') == 1 and
              delta(ay, by, 'GSI_TX') == 1, f'{y.name}: one SIDR_REQ answered: {ay}')
        # Request IDs differ from one SIDR_REQ to the next.
        r1 = a.ctl('gsi', 'sidr', '10.0.0.2')['sidr']
        r2 = a.ctl('gsi', 'sidr', '10.0.0.2')['sidr']
        t(r1['request_id'] != r2['request_id'] and r1['service_id'] == '0x' + '0' * 16,
          f'fresh request IDs: {r1["request_id"]}, {r2["request_id"]}')
        # The peer's agent sleeps in its control loop (up to 100 ms) and its worker wakes it
        # for the MAD: a round trip in milliseconds, not a timer's tens of them.
        rtts = sorted(a.ctl('gsi', 'sidr', '10.0.0.2')['sidr']['rtt_us'] for _ in range(9))
        t(rtts[4] < 20000, f'SIDR round trips (us), the agents woken by MADs: {rtts}')

        # Nobody at 10.0.0.99: no MAC, no answer.
        before = gsi(a)
        t0 = time.time()
        r = a.rocectl('gsi', 'sidr', '10.0.0.99', 'timeout_ms=300', check=False)
        took = time.time() - t0
        err = json.loads(r.stdout).get('error', {}) if r.stdout.strip() else {}
        t(r.returncode != 0 and err.get('code') == 'ETIMEDOUT' and took < 3,
          f'unreachable peer: ETIMEDOUT after {took:.2f} s: {r.stdout}{r.stderr}')
        t(a.ctl('status')['ok'], 'a serves after the timeout')
        end = time.time() + 6
        while time.time() < end and delta(gsi(a), before, 'GSI_TX_UNRESOLVED') == 0:
            time.sleep(0.2)
        t(delta(gsi(a), before, 'GSI_TX_UNRESOLVED') == 1 and
          delta(gsi(a), before, 'GSI_TX') == 0,
          f'its SIDR_REQ dropped unresolved: {gsi(a)}')

        show = a.ctl('gsi', 'show')
        t(len(show['ports']) == 1 and show['ports'][0]['state'] == 'RTS' and
          show['ports'][0]['recv_posted'] == 64 and show['ports'][0]['tx_pkts'] >= 4 and
          show['counters']['SIDR_REP_RX'] >= 4, f'gsi show: {show}')

        # A client's UD QP is not disturbed.
        ma, mb = a.ctl('mr', 'reg', 65536)['mr'], b.ctl('mr', 'reg', 65536)['mr']
        qa = a.ctl('qp', 'create', 'type=ud', 'qkey=0x111')['qp']
        qb = b.ctl('qp', 'create', 'type=ud', 'qkey=0x111')['qp']
        b.ctl('post', 'recv', qb['qpn'], f"lkey={mb['lkey']}", 'length=1040')
        a.ctl('post', 'send', qa['qpn'], f"lkey={ma['lkey']}", 'length=1000',
              f"remote.qpn={qb['qpn']}", 'remote.qkey=0x111', 'remote.ip=10.0.0.2')
        wc = poll_wc(b, qb['qpn'], 1)
        t(len(wc) == 1 and wc[0]['status'] == 0 and wc[0]['src_qp'] == qa['qpn'],
          f'a UD QP alongside: {wc}')
        for d in (a, b):
            c = d.ctl('counters')['counters']
            t(c['NOT_OURS'] == 0 and c['UNKNOWN_QP'] == 0 and c['DROP_ICRC'] == 0,
              f'{d.name}: no NOT_OURS, UNKNOWN_QP or ICRC drops')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
