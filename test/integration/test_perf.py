#!/usr/bin/python3
"""rocectl perf between two appliances over memif: every mode (write/read/send/atomic x bw/lat,
-a, -q 8, -D, --verify, --report-gbits, --rate) reports consistent numbers on both sides; a
hostile out-of-band peer (garbage, wrong sizes, early close) ends the run with a clear error
and leaves the daemon serving with nothing left behind.

usage: test_perf.py BUILD_DIR
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair  # noqa: E402

PORT = 19515 + os.getpid() % 1000


def perf(pair, args, timeout=120):
    """Run a server on A and a client on B; return (client, server) parsed JSON and rcs."""
    ctl = os.path.join(pair.build, 'app/rocectl')
    srv = subprocess.Popen([ctl, '-s', pair.a.sock, 'perf'] + args +
                           ['--server', '-p', str(PORT), '--json'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cl = subprocess.run([ctl, '-s', pair.b.sock, 'perf'] + args +
                        ['--client', '127.0.0.1', '-p', str(PORT), '--json'],
                        capture_output=True, text=True, timeout=timeout)
    try:
        out, err = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        out, err = srv.communicate()

    def load(text):
        try:
            return json.loads(text.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {}
    return (cl.returncode, load(cl.stdout), cl.stderr), (srv.returncode, load(out), err)


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def check_bw(t, name, c, s, iters, qps=1, report_from_client=True):
    (crc, cj, cerr), (src, sj, serr) = c, s
    t(crc == 0 and src == 0, f"{name}: both exit 0 (client {crc}: {cerr[-300:]}; "
      f"server {src}: {serr[-300:]})")
    cr, sr = cj.get('results', []), sj.get('results', [])
    if not t(len(cr) >= 1 and len(sr) == 1, f"{name}: result lines {len(cr)}/{len(sr)}"):
        return
    t(cr[-1]['iterations'] == iters * qps, f"{name}: client iterations {cr[-1]['iterations']}")
    t(cr[-1]['bw_avg'] > 0 and cr[-1]['bw_peak'] >= cr[-1]['bw_avg'],
      f"{name}: peak {cr[-1]['bw_peak']} >= average {cr[-1]['bw_avg']} > 0")
    if report_from_client:
        # The server prints the client's report, as perftest does.
        t(all(close(cr[-1][k], sr[0][k]) for k in ('bytes', 'iterations', 'bw_avg',
                                                       'bw_peak', 'msg_rate_mpps')),
          f"{name}: server reports what the client measured: {cr[-1]} vs {sr[0]}")
    t(len(cj.get('qps', [])) == qps and len(sj.get('qps', [])) == qps, f"{name}: {qps} QPs")
    t(cj['qps'][0]['remote']['qpn'] == sj['qps'][0]['local']['qpn'] and
      cj['qps'][0]['local']['psn'] == sj['qps'][0]['remote']['psn'],
      f"{name}: QP parameter blocks agree")


def check_lat(t, name, c, s, iters, server_reports=True):
    (crc, cj, cerr), (src, sj, serr) = c, s
    t(crc == 0 and src == 0, f"{name}: both exit 0 ({cerr[-300:]} {serr[-300:]})")
    sides = [('client', cj)] + ([('server', sj)] if server_reports else [])
    for side, j in sides:
        r = j.get('results', [])
        if not t(len(r) == 1, f"{name}: {side} has one result line"):
            continue
        r = r[0]
        t(r['iterations'] == iters and r['samples'] == iters - 1,
          f"{name}: {side} iterations {r['iterations']}, samples {r['samples']}")
        t(0 < r['min'] <= r['median'] <= r['p99'] <= r['p999'] <= r['max'] and
          r['min'] <= r['avg'] <= r['max'],
          f"{name}: {side} min <= typical <= 99% <= 99.9% <= max: {r}")
    if not server_reports:
        t(sj.get('results') == [], f"{name}: the passive server prints no result")


def modes(t, pair):
    sack0 = pair.a.ctl('counters')['counters'].get('SR_SACK_TX', 0)
    c, s = perf(pair, ['write', '-n', '2000'])
    check_bw(t, 'write bw', c, s, 2000)
    # Two rocectl perf agree on selective repeat in the side channel; the QPs then use it.
    t(c[1].get('sr') is True and s[1].get('sr') is True, 'write bw: selective repeat agreed')
    t(pair.a.ctl('counters')['counters'].get('SR_SACK_TX', 0) > sack0,
      'write bw: the responder answered with SR ACKs')
    c, s = perf(pair, ['write', '-n', '500', '--no-sr'])
    check_bw(t, 'write bw --no-sr', c, s, 500)
    t(c[1].get('sr') is False and s[1].get('sr') is False,
      'write bw --no-sr on both sides: go-back-N')
    c, s = perf(pair, ['read', '-n', '1000', '--verify'])
    check_bw(t, 'read bw', c, s, 1000)
    t(c[1].get('verify') == 'ok', f"read bw: the client verified the data: {c[1].get('verify')}")
    c, s = perf(pair, ['atomic', '-n', '1000', '--verify'])
    check_bw(t, 'atomic bw', c, s, 1000)
    t(s[1].get('verify') == 'ok', 'atomic bw: the targets add up to the fetch-and-adds')
    t(c[1]['results'][0]['bytes'] == 8, 'atomic bw: 8-byte operations')
    c, s = perf(pair, ['send', '-n', '1000', '--verify'])
    check_bw(t, 'send bw', c, s, 1000, report_from_client=False)
    if s[1].get('results'):
        t(s[1]['results'][0]['iterations'] == 1000, 'send bw: the server received 1000')
    t(s[1].get('verify') == 'ok', 'send bw: the server verified the data')

    c, s = perf(pair, ['write', '-a', '-n', '5', '--verify'])
    check_bw(t, 'write bw -a', c, s, 5)
    sizes = [r['bytes'] for r in c[1].get('results', [])]
    t(sizes == [2 ** k for k in range(1, 24)], f"write bw -a: sizes 2 .. 8 MiB ({sizes})")
    t(s[1].get('results', [{}])[0].get('bytes') == 8 << 20,
      'write bw -a: the server prints the last size, as perftest')
    t(s[1].get('verify') == 'ok', 'write bw -a: the server verified the data')

    c, s = perf(pair, ['write', '-D', '2'])
    t(c[0] == 0 and s[0] == 0, 'write bw -D 2: both exit 0')
    r = c[1].get('results', [{}])[0]
    t(r.get('iterations', 0) > 0 and close(r.get('bw_avg', 0),
                                           s[1].get('results', [{}])[0].get('bw_avg', -1)),
      f"write bw -D 2: iterations {r.get('iterations')}, both sides agree")

    c, s = perf(pair, ['write', '-n', '3000', '--rate', '0.5', '--report-gbits'])
    r = c[1].get('results', [{}])[0]
    t(c[0] == 0 and 0.3 < r.get('bw_avg', 0) <= 0.55,
      f"write bw --rate 0.5: average {r.get('bw_avg')} Gb/s")

    for verb, lat_server in (('write', True), ('send', True), ('read', False),
                             ('atomic', False)):
        c, s = perf(pair, [verb, '--lat', '-n', '200', '-s', '64', '--verify'])
        check_lat(t, f"{verb} lat", c, s, 200, server_reports=lat_server)
        if verb != 'atomic':
            t(c[1].get('verify') == 'ok', f"{verb} lat: the client verified the data")


def two_workers(t, build):
    """-q 8 between daemons with two workers each: the QPs spread over both lcores."""
    with Pair(build, start=False) as pair:
        m = os.path.join(pair.tmp, 'memif.sock')
        pair.a = pair.start('a', ['--lcores', '0@0,1@1,2@1',
                                  f'--vdev=net_memif0,role=server,socket={m},bsize=8192'],
                            ['--port', 'net_memif0', '--ip', '10.0.0.1/24', '--workers', '2'])
        pair.a.wait_ready()
        pair.b = pair.start('b', ['--lcores', '0@0,1@1,2@0',
                                  f'--vdev=net_memif0,role=client,socket={m},bsize=8192'],
                            ['--port', 'net_memif0', '--ip', '10.0.0.2/24', '--workers', '2'])
        pair.b.wait_ready()
        pair.wait_link()
        for verb in ('write', 'read'):
            c, s = perf(pair, [verb, '-q', '8', '-n', '300', '-s', '16384', '-t', '32', '--verify',
                               '--report-gbits'])
            check_bw(t, f"{verb} bw -q 8", c, s, 300, qps=8)
            t(c[1].get('results', [{}])[0].get('unit') == 'Gb/sec',
              f"{verb} bw --report-gbits: Gb/s")
            t('ok' in (c[1].get('verify'), s[1].get('verify')),
              f"{verb} bw -q 8: every QP's data verified")
            workers = {q['local']['qpn'] >> 16 for q in c[1].get('qps', [])}
            t(workers == {1, 2}, f"{verb} bw -q 8: QPs on both workers ({workers})")


def hostile(t, pair):
    """Out-of-band peers that break the protocol: rocectl perf fails cleanly, roced serves."""
    ctl = os.path.join(pair.build, 'app/rocectl')
    cases = [
        ('garbage version', [b'hello, perftest!']),
        ('short version then close', [b'6.06\0']),
        ('old version', [b'5.60'.ljust(16, b'\0')]),
        ('garbage key', [b'6.06'.ljust(16, b'\0'), b'\0\0\x10\0', b'\0\0\0\x40', b'3\0',
                         b'x' * 108]),
        ('close before the keys', [b'6.06'.ljust(16, b'\0'), b'\0\0\x10\0', b'\0\0\0\x40',
                                   b'3\0']),
        ('wrong MTU', [b'6.06'.ljust(16, b'\0'), b'\0\0\x10\0', b'\0\0\0\x40', b'9\0']),
    ]
    for name, msgs in cases:
        srv = subprocess.Popen([ctl, '-s', pair.a.sock, 'perf', 'write', '--server', '-p',
                                str(PORT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        sock = None
        for _ in range(50):
            try:
                sock = socket.create_connection(('127.0.0.1', PORT), timeout=5)
                break
            except OSError:
                time.sleep(0.1)
        if not t(sock is not None, f"{name}: connected"):
            srv.kill()
            continue
        for m in msgs:
            sock.sendall(m)
            time.sleep(0.05)
        sock.close()
        try:
            out, err = srv.communicate(timeout=70)
        except subprocess.TimeoutExpired:
            srv.kill()
            out, err = srv.communicate()
        t(srv.returncode == 1 and 'out-of-band exchange with the peer failed' in err,
          f"{name}: rocectl perf exits 1 with a clear error ({srv.returncode}: {err.strip()})")
    st = pair.a.ctl('status')
    t(st.get('ok'), 'the daemon still serves')
    t(pair.a.ctl('qp', 'show').get('qps') == [] and pair.a.ctl('mr', 'show').get('mrs') == [],
      'rocectl perf removed its QPs and MRs after every failure')

    # Different -q on the two sides (perftest's exchange does not carry the count).
    srv = subprocess.Popen([ctl, '-s', pair.a.sock, 'perf', 'write', '--server', '-p',
                            str(PORT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    r = subprocess.run([ctl, '-s', pair.b.sock, 'perf', 'write', '-q', '2', '--client',
                        '127.0.0.1', '-p', str(PORT)], capture_output=True, text=True,
                       timeout=60)
    try:
        srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
    t(r.returncode == 1 and 'same -q' in r.stderr and srv.returncode == 1,
      f"-q 2 against -q 1: both fail, the client says why ({r.stderr.strip()})")

    # Nobody listening: the client gives up after a few seconds with a clear message.
    r = subprocess.run([ctl, '-s', pair.b.sock, 'perf', 'write', '--client', '127.0.0.1', '-p',
                        str(PORT)], capture_output=True, text=True, timeout=30)
    t(r.returncode == 1 and 'cannot connect' in r.stderr, f"no server: {r.stderr.strip()}")

    # Ctrl-C while the server waits for a client: it cleans up and exits.
    srv = subprocess.Popen([ctl, '-s', pair.a.sock, 'perf', 'read', '--server', '-p',
                            str(PORT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    srv.send_signal(signal.SIGINT)
    try:
        srv.wait(10)
    except subprocess.TimeoutExpired:
        srv.kill()
    t(srv.returncode == 1 and pair.a.ctl('qp', 'show').get('qps') == [],
      f"SIGINT: exit 1 ({srv.returncode}) and nothing left behind")


def main():
    t = Checks('perf')
    with Pair(sys.argv[1]) as pair:
        modes(t, pair)
        hostile(t, pair)
        for d in (pair.a, pair.b):
            c = d.ctl('counters')['counters']
            t(c.get('DROP_ICRC') == 0, f"{d.name}: no ICRC errors ({c.get('DROP_ICRC')})")
    two_workers(t, sys.argv[1])
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
