#!/usr/bin/python3
"""rocectl perf -R (perftest's rdma_cm mode) between two appliances over memif, each daemon in
both roles: the side channel on a QP roced's connection manager connected, the test QP's own
CM connection, the exchange as SENDs. write, read and send bandwidth and write latency; both
sides exit 0 with consistent results (the passive server prints the client's report, a
send_bw server counts its receives), the data verified with --verify, -q 2. Each run makes
two CM connections per side (one more per extra QP) and roced drops nothing; once the last
run's time wait is over no connection, listener, QP or MR is left. Then the refusals: -R
against a peer without -R fails on both sides, -R with -c UD or --run_infinitely is refused
up front, and a client with no server finds its REQs rejected and says so.

usage: test_perf_rcm.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair  # noqa: E402

PORT = 21515 + os.getpid() % 1000
DROPS = ('DROP_ICRC', 'RX_DROP', 'UNKNOWN_QP', 'STATE_DROP')


def load(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith('{'):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return {}


def perf(pair, srv_d, cl_d, srv_args, cl_args, timeout=120):
    """Server on srv_d, client on cl_d (to srv_d's address); ((rc, json, err) client, server)."""
    ctl = os.path.join(pair.build, 'app/rocectl')
    srv = subprocess.Popen([ctl, '-s', srv_d.sock, 'perf'] + srv_args +
                           ['--server', '-p', str(PORT), '--json'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the server listens through the CM: wait for its listener
    end = time.time() + 10
    while time.time() < end and srv.poll() is None and not any(
            x['port'] == PORT for x in srv_d.ctl('cm', 'show')['listeners']):
        time.sleep(0.05)
    ip = '10.0.0.1' if srv_d is pair.a else '10.0.0.2'
    cl = subprocess.run([ctl, '-s', cl_d.sock, 'perf'] + cl_args +
                        ['--client', ip, '-p', str(PORT), '--json'],
                        capture_output=True, text=True, timeout=timeout)
    try:
        out, err = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        out, err = srv.communicate()
    return (cl.returncode, load(cl.stdout), cl.stderr), (srv.returncode, load(out), err)


def counters(d):
    return d.ctl('counters')['counters']


def cm_counters(d):
    return d.ctl('cm', 'show')['counters']


def settled(t, name, *daemons, timeout=40):
    """No CM connection, orphan or listener, QP or MR left on any daemon."""
    end = time.time() + timeout
    left = {}
    while time.time() < end:
        left = {}
        for d in daemons:
            s = d.ctl('cm', 'show')
            if s['conns'] or s['listeners'] or s.get('orphans', 0):
                left[d.name] = (s['conns'], s['listeners'], s.get('orphans'))
        if not left:
            break
        time.sleep(0.5)
    t(not left, f'{name}: no CM connection or listener left: {left}')
    for d in daemons:
        t(d.ctl('qp', 'show').get('qps') == [] and d.ctl('mr', 'show').get('mrs') == [],
          f'{name}: {d.name} has no QP or MR left')


def run(t, pair, srv_d, cl_d, name, verb, args, iters, size, lat=False, qps=1):
    c0, s0 = counters(cl_d), counters(srv_d)
    e0 = (cm_counters(cl_d)['established'], cm_counters(srv_d)['established'])
    common = [verb, '-R'] + args
    (crc, cj, cerr), (src, sj, serr) = perf(pair, srv_d, cl_d, common, common)
    ok = t(crc == 0 and src == 0, f'{name}: both exit 0 (client {crc}: {cerr[-400:]}; '
           f'server {src}: {serr[-400:]})')
    t(cj.get('rdma_cm') is True and sj.get('rdma_cm') is True and cj.get('sr') is False,
      f'{name}: both ran -R, without selective repeat')
    t(cj.get('peer_rocedp') is True and cj.get('peer_version') == '6.06',
      f"{name}: the peer is a rocectl perf: {cj.get('peer_version')}")
    cr, sr = cj.get('results', []), sj.get('results', [])
    if ok and t(len(cr) >= 1, f'{name}: the client printed a result'):
        r = cr[-1]
        t(r['bytes'] == size and r['iterations'] == iters * qps,
          f'{name}: client result {r}')
        if lat:
            t(0 < r['min'] <= r['median'] <= r['max'], f'{name}: latencies ordered: {r}')
        else:
            t(r['bw_avg'] > 0 and r['msg_rate_mpps'] > 0, f'{name}: bandwidth > 0: {r}')
        if not (lat and verb == 'read'):
            t(len(sr) >= 1, f'{name}: the server printed a result')
        if sr and not lat and verb != 'send':
            t(sr[-1]['bw_avg'] == r['bw_avg'] and sr[-1]['iterations'] == r['iterations'],
              f"{name}: the server prints the client's report: {sr[-1]} {r}")
        if sr and verb == 'send' and not lat:
            t(sr[-1]['iterations'] == iters * qps, f'{name}: the server received every '
              f"SEND: {sr[-1]}")
    if '--verify' in args:
        t(cj.get('verify') in ('ok', 'sent') and sj.get('verify') in ('ok', 'sent') and
          'ok' in (cj.get('verify'), sj.get('verify')),
          f"{name}: verified: client {cj.get('verify')}, server {sj.get('verify')}")
    e1 = (cm_counters(cl_d)['established'], cm_counters(srv_d)['established'])
    t(e1[0] - e0[0] == 1 + qps and e1[1] - e0[1] == 1 + qps,
      f'{name}: {1 + qps} CM connections established on each side: {e0} -> {e1}')
    for d, before in ((cl_d, c0), (srv_d, s0)):
        after = counters(d)
        dd = {k: after.get(k, 0) - before.get(k, 0) for k in DROPS
              if after.get(k, 0) != before.get(k, 0)}
        t(not dd, f'{name}: {d.name} dropped nothing: {dd}')


def refusals(t, pair):
    a, b = pair.a, pair.b
    ctl = os.path.join(pair.build, 'app/rocectl')
    for extra, what in ((['-c', 'UD'], 'UD'), (['--run_infinitely'], 'run_infinitely')):
        r = subprocess.run([ctl, '-s', b.sock, 'perf', 'send', '-R', '--client', '10.0.0.1',
                            '-p', str(PORT)] + extra, capture_output=True, text=True,
                           timeout=30)
        t(r.returncode == 2 and '-R with' in r.stderr and
          len(r.stderr.strip().splitlines()) == 1,
          f'-R with {what}: refused in one line ({r.stderr.strip()})')
    # nobody listens: every REQ rejected (invalid service ID), retried, then said
    t0 = time.time()
    r = subprocess.run([ctl, '-s', b.sock, 'perf', 'write', '-R', '--client', '10.0.0.1',
                        '-p', str(PORT), '--oob-timeout', '5'], capture_output=True, text=True,
                       timeout=60)
    t(r.returncode != 0 and 'rejected' in r.stderr and time.time() - t0 < 30,
      f'-R to a port nobody listens on: rejected, said ({r.returncode}, '
      f'{time.time() - t0:.1f} s): {r.stderr.strip()[-300:]}')
    # -R against a peer without it: the server sees no REQ, the client no TCP peer
    srv = subprocess.Popen([ctl, '-s', a.sock, 'perf', 'write', '--server', '-p', str(PORT),
                            '--oob-timeout', '5'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    r = subprocess.run([ctl, '-s', b.sock, 'perf', 'write', '-R', '--client', '10.0.0.1',
                        '-p', str(PORT), '--oob-timeout', '5'], capture_output=True, text=True,
                       timeout=60)
    t(r.returncode != 0, f'-R client, TCP server: the client fails ({r.returncode}): '
      f'{r.stderr.strip()[-300:]}')
    srv.terminate()
    try:
        srv.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
    settled(t, 'refusals', a, b)


def main():
    t = Checks('perf_rcm')
    with Pair(sys.argv[1]) as p:
        a, b = p.a, p.b
        # each daemon in both roles
        run(t, p, a, b, 'write_bw A<-B', 'write', ['-n', '2000', '-s', '65536'], 2000, 65536)
        run(t, p, b, a, 'write_bw B<-A', 'write', ['-n', '2000', '-s', '4096', '--verify'],
            2000, 4096)
        run(t, p, a, b, 'read_bw', 'read', ['-n', '1000', '-s', '16384', '--verify'], 1000,
            16384)
        run(t, p, b, a, 'read_bw reversed', 'read', ['-n', '1000', '-s', '16384'], 1000, 16384)
        run(t, p, a, b, 'send_bw', 'send', ['-n', '2000', '-s', '8192', '--verify'], 2000, 8192)
        run(t, p, b, a, 'send_bw reversed', 'send', ['-n', '2000', '-s', '8192'], 2000, 8192)
        run(t, p, a, b, 'write_lat', 'write', ['--lat', '-n', '300'], 300, 2, lat=True)
        run(t, p, b, a, 'write_lat reversed', 'write', ['--lat', '-n', '300'], 300, 2, lat=True)
        run(t, p, a, b, 'write_bw -q 2', 'write', ['-n', '500', '-s', '4096', '-q', '2',
                                                   '--verify'], 500, 4096, qps=2)
        # Once, not after every run: each run's connections sit in time wait for the ACK
        # timeout (2.1 s at rdma_cm's packet life time), as ib_cm's do; the next run
        # connects beside them.
        settled(t, 'the runs', a, b)
        refusals(t, p)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
