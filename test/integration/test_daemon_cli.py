#!/usr/bin/python3
"""roced's command line and configuration: every invalid input fails with one clear line naming
what is wrong and exit code 2; --help exits 0; every short option --help lists works. Then two
workers per daemon over memif: QPs on the worker that does not read the port get their packets
through the inbound rings. Last, the neighbour table: listed after traffic, flushed, and traffic
going on.

usage: test_daemon_cli.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, connect, MR_ALL, QP_ALL  # noqa: E402

EAL = ['--no-huge', '-m', '256', '--no-pci', '--log-level', 'lib.eal:error']


def run(build, eal, args, conf=None):
    with tempfile.NamedTemporaryFile('w', suffix='.conf', delete=False) as f:
        if conf is not None:
            f.write(conf)
    args = [a.replace('@CONF', f.name) for a in args]
    lcores = [] if any(a.startswith('--lcores') for a in eal) else ['-l', '0,1']
    cmd = [os.path.join(build, 'app/roced/roced')] + lcores + \
        [f'--file-prefix=rocedp-cli-{os.getpid()}'] + EAL + eal + ['--'] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    os.unlink(f.name)
    return r


CASES = [
    # (what, EAL extra, args, config file, text the error line must contain)
    ('bad IPv4', [], ['--port', '0', '--ip', '10.0.0.300/24'], None, "10.0.0.300/24"),
    ('bad prefix', [], ['--port', '0', '--ip', '10.0.0.1/40'], None, "10.0.0.1/40"),
    ('no port', [], ['--ip', '10.0.0.1/24'], None, 'device'),
    ('nothing at all', [], [], None, 'no port'),
    ('unknown device', [], ['--port', 'net_nothere0', '--ip', '10.0.0.1/24'], None,
     'net_nothere0'),
    ('missing address', ['--vdev=net_null0'], ['--port', 'net_null0'], None, 'ipv4'),
    ('too many workers', ['--vdev=net_null0'],
     ['--port', 'net_null0', '--ip', '10.0.0.1/24', '--workers', '3'], None, 'workers'),
    ('workers not a number', [], ['--workers', 'x'], None, 'workers'),
    ('unknown option', [], ['--frobnicate'], None, 'unknown option'),
    ('stray argument', [], ['extra'], None, 'extra'),
    ('unreadable config', [], ['--config', '/nonexistent/roced.conf'], None, 'roced.conf'),
    ('unknown key', [], ['--config', '@CONF'], '[roced]\nbogus = 1\n', 'bogus'),
    ('unknown section', [], ['--config', '@CONF'], '[nowhere]\na = 1\n', 'nowhere'),
    ('bad mtu', [], ['--config', '@CONF'], '[roced]\nmtu = 99999\n', 'mtu'),
    ('bad port section', [], ['--config', '@CONF'], '[port9]\ndevice = x\n', 'port9'),
    ('bad port key', [], ['--config', '@CONF'], '[port0]\ncolour = red\n', 'colour'),
    ('bad log level', ['--vdev=net_null0'],
     ['--port', 'net_null0', '--ip', '10.0.0.1/24', '--log-level', 'loud'], None, 'loud'),
    ('bad tx copy', [], ['--tx-copy', 'sometimes'], None, 'option --tx-copy'),
    ('bad tx_zc_min', [], ['--config', '@CONF'], '[port0]\ntx_zc_min = 0\n', 'tx_zc_min'),
    # null cannot send chained mbufs: zero-copy asked for is an error naming the PMD.
    ('zero-copy on null', ['--vdev=net_null0'],
     ['--port', 'net_null0', '--ip', '10.0.0.1/24', '--tx-copy', 'never'], None,
     'tx_copy=never, but the PMD cannot send chained mbufs'),
    # ring hands its mbufs to the reader: zero-copy would lend it the MR.
    ('zero-copy on ring', ['--vdev=net_ring0'],
     ['--port', 'net_ring0', '--ip', '10.0.0.1/24', '--tx-copy', 'never'], None,
     'hands the mbufs themselves to its reader'),
    # Queue pairs: a count, no more than the workers, and only where traffic can be spread.
    ('bad queues', [], ['--config', '@CONF'], '[port0]\nqueues = 0\n', 'queues'),
    ('queues over workers', ['--vdev=net_null0'],
     ['--port', 'net_null0', '--ip', '10.0.0.1/24', '--queues', '2'], None,
     'queues=2: more than the 1 worker(s)'),
    ('queues on null', ['--lcores', '0@0,1@1,2@1', '--vdev=net_null0'],
     ['--port', 'net_null0', '--ip', '10.0.0.1/24', '--workers', '2', '--queues', '2'], None,
     'queues=2: the PMD cannot spread RoCE over queues'),
    # The short options --help lists, each with a value it refuses.
    ('-c unreadable', [], ['-c', '/nonexistent/roced.conf'], None, 'roced.conf'),
    ('-c bad key', [], ['-c', '@CONF'], '[roced]\nbogus = 1\n', 'bogus'),
    ('-s too long', [], ['-s', 'x' * 200], None, 'socket'),
    ('-w not a number', [], ['-w', 'x'], None, 'workers'),
    ('-p empty', [], ['-p', ''], None, 'option --port: empty'),
    ('-i bad', [], ['-p', '0', '-i', '10.0.0.300/24'], None, '10.0.0.300/24'),
    ('-6 bad', [], ['-p', '0', '-i', '10.0.0.1/24', '-6', 'zz::1/64'], None, 'zz::1/64'),
    ('-g bad', [], ['-p', '0', '-i', '10.0.0.1/24', '-g', '10.0.0'], None, '10.0.0'),
    ('-m bad', [], ['-m', '99999'], None, 'mtu'),
    ('-I bad', [], ['-I', 'x'], None, 'idle-sleep'),
    ('-Q bad', [], ['-Q', '0'], None, 'max-qps'),
    ('-L bad', ['--vdev=net_null0'], ['-p', 'net_null0', '-i', '10.0.0.1/24', '-L', 'loud'],
     None, 'loud'),
    # The mistakes a new user makes, word for word, are in test_startup.py.
]


def cli(t, build):
    for what, eal, args, conf, text in CASES:
        r = run(build, eal, args, conf)
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith('roced:')]
        t(r.returncode == 2 and len(lines) == 1 and text in lines[0],
          f'{what}: exit {r.returncode}, roced lines {lines}')
    r = run(build, [], ['--help'])
    t(r.returncode == 0 and '--config' in r.stdout, f'--help: exit {r.returncode}')
    r2 = run(build, [], ['-h'])
    t(r2.returncode == 0 and r2.stdout == r.stdout, f'-h: exit {r2.returncode}')


def short_options(t, build):
    """A daemon configured with short options only (and -c FILE): each one took effect."""
    p = Pair(build, start=False)
    try:
        conf = os.path.join(p.tmp, 'short.conf')
        with open(conf, 'w') as f:
            f.write('[roced]\nmtu = 9000\n[port0]\nimpair = dir=tx,ecn=0.5,seed=4\n')
        d = p.start('short', ['-l', '0,1', '--vdev=net_null0'],
                    ['-c', conf, '-w', '1', '-p', 'net_null0', '-i', '10.0.3.1/24',
                     '-6', 'fd00:3::1/64', '-g', '10.0.3.254', '-m', '1400', '-I', '0',
                     '-Q', '64', '-L', 'info'])
        d.wait_ready()
        port = d.ctl('port', 'show')['ports'][0]
        t(port['device'] == 'net_null0' and port['ip'] == '10.0.3.1' and
          port['prefix'] == 24 and port['ip_mtu'] == 1400,
          f'-p, -i, -m (over the file): {port}')
        s = d.ctl('impair', 'show', 0, 'dir=tx')['impair'][0]
        t(s['active'] and s['spec'] == 'seed=4,ecn=0.5', f'-c loaded the file: {s}')
        d.stop()
    finally:
        p.__exit__(None, None, None)


def two_workers(t, build):
    p = Pair(build)
    try:
        m = os.path.join(p.tmp, 'memif.sock')
        p.a = p.start('a', ['--lcores', '0@0,1@1,2@1', f'--vdev=net_memif0,role=server,socket={m},bsize=8192'],
                      ['--port', 'net_memif0', '--ip', '10.0.0.1/24', '--workers', '2'])
        p.a.wait_ready()
        p.b = p.start('b', ['--lcores', '0@0,1@1,2@0', f'--vdev=net_memif0,role=client,socket={m},bsize=8192'],
                      ['--port', 'net_memif0', '--ip', '10.0.0.2/24', '--workers', '2'])
        p.b.wait_ready()
        p.wait_link()
        a, b = p.a, p.b
        ma, mb = a.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr'], b.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr']
        a.ctl('mr', 'fill', ma['rkey'], 'random:5')
        # Three polling threads share CPU 1 here, so a round trip through the handoff rings
        # can take several scheduler slices: an ACK timeout of 0.5 s rather than 67 ms keeps
        # go-back-N from spending its retries on a slow path that loses nothing.
        qps = [connect(a, b, timeout=17) for _ in range(4)]
        workers = sorted({q[0]['worker'] for q in qps})
        t(workers == [0, 1], f'QPs spread over both workers: {workers}')
        for qa, qb in qps:
            a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}",
                  'length=16384', f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}",
                  'count=500', 'depth=16')
        # depth=16: 4 QPs x 16 messages x 16 packets (path MTU 1024) stay within an inbound
        # ring (4096), so no handoff can be lost however long the owner waits for the CPU.
        # Two workers share a CPU here: wait for the jobs to end rather than a fixed time.
        end = time.time() + 60
        while time.time() < end and any(a.ctl('job', 'show', qa['qpn'])['job']['running']
                                        for qa, _ in qps):
            time.sleep(0.1)
        for qa, qb in qps:
            j = a.ctl('job', 'show', qa['qpn'])['job']
            t(j['completed'] == 500 and j['errors'] == 0,
              f"QP {qa['qpn']:#x} on worker {qa['worker']}: {j['completed']} done, {j['first_error']}")
        ca, cb = a.ctl('counters')['counters'], b.ctl('counters')['counters']
        t(ca['HANDOFF'] > 0 and cb['HANDOFF'] > 0,
          f"packets handed between workers: a {ca['HANDOFF']}, b {cb['HANDOFF']}")
        t(ca['HANDOFF_DROP'] == 0 and cb['HANDOFF_DROP'] == 0, 'no handoff loss')
        w1 = a.ctl('counters', 'worker=1')
        t(w1['scope'] == 'worker' and w1['counters']['TX_REQ'] > 0, 'worker 1 sent requests')
        # --nonzero and --describe: the same counters, fewer of them, or described.
        text = a.rocectl('counters', json_out=False).stdout.splitlines()
        t(len(text) == len(ca) and all(len(line.split()) == 2 for line in text),
          f'counters prints every counter as NAME VALUE: {len(text)} lines, {len(ca)} counters')
        nz = a.ctl('counters', '--nonzero')['counters']
        t(nz and all(v != 0 for v in nz.values()) and set(nz) < set(ca) and 'HANDOFF' in nz,
          f'counters --nonzero: {len(nz)} of {len(ca)}')
        d = a.ctl('counters', 'worker=1', '--describe')
        t(d['descriptions'].keys() == d['counters'].keys() and
          d['descriptions']['TX_REQ'] == 'request packets sent', 'counters --describe')
        text = a.rocectl('counters', '--nonzero', '--describe', json_out=False).stdout
        t('HANDOFF' in text and 'RoCE packets handed to the owning worker' in text and
          'DROP_ICRC ' not in text, f'counters --nonzero --describe: {text[:200]}')
    finally:
        p.__exit__(None, None, None)


def neigh(t, build):
    """neigh show lists the peer once it was resolved; neigh flush empties the tables; the QP
    keeps the MAC it connected with, so its traffic goes on; a new connection resolves again."""
    with Pair(build) as p:
        a, b = p.a, p.b
        ma, mb = a.ctl('mr', 'reg', 1 << 16, MR_ALL)['mr'], b.ctl('mr', 'reg', 1 << 16, MR_ALL)['mr']
        qa, _ = connect(a, b)

        def writes(n):
            a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=4096',
                  f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", f'count={n}')
            end = time.time() + 30
            while time.time() < end and a.ctl('job', 'show', qa['qpn'])['job']['running']:
                time.sleep(0.05)
            return a.ctl('job', 'show', qa['qpn'])['job']

        j = writes(200)
        t(j['completed'] == 200 and j['errors'] == 0, f'writes before: {j}')
        mac_b = b.ctl('port', 'show')['ports'][0]['mac'].lower()
        rows = a.ctl('neigh', 'show')['neighbours']
        peer = [r for r in rows if r['ip'] == '10.0.0.2']
        t(len(peer) == 1 and (peer[0]['mac'] or '').lower() == mac_b and
          peer[0]['state'] == 'REACHABLE' and peer[0]['port'] == 0 and peer[0]['age_ms'] >= 0,
          f'a lists b: {rows}')
        rows = b.ctl('neigh', 'show')['neighbours']
        t(any(r['ip'] == '10.0.0.1' and r['mac'] for r in rows), f'b lists a: {rows}')
        out = a.rocectl('neigh', 'show', json_out=False).stdout
        t('10.0.0.2' in out and 'REACHABLE' in out and 'age_ms' in out, f'human table: {out}')
        t(len(a.ctl('neigh', 'show', '10.0.0.2')['neighbours']) == 1, 'show one IP')

        t(a.ctl('neigh', 'flush', '10.0.0.2')['flushed'] == 1, 'flush one IP')
        r = a.rocectl('neigh', 'flush', '10.0.0.2', check=False)
        t(r.returncode == 1 and 'ENOENT' in r.stdout + r.stderr,
          f'flush of an IP not there: {r.returncode} {r.stdout}{r.stderr}')
        t(b.ctl('neigh', 'flush')['flushed'] >= 1, 'flush all')
        ra, rb = a.ctl('neigh', 'show')['neighbours'], b.ctl('neigh', 'show')['neighbours']
        t(ra == [] and rb == [], f'tables empty: {ra} {rb}')
        out = a.rocectl('neigh', 'show', json_out=False).stdout
        t('no neighbours' in out, f'human, empty: {out}')

        j = writes(200)
        t(j['completed'] == 200 and j['errors'] == 0, f'writes after the flush: {j}')
        connect(a, b)
        rows = a.ctl('neigh', 'show', '10.0.0.2')['neighbours']
        t(len(rows) == 1 and (rows[0]['mac'] or '').lower() == mac_b,
          f'a new connection resolved b again: {rows}')
        c = a.ctl('counters')['counters']
        t(c['NET_LEARN_OFFLINK'] == 0 and c['NET_LEARN_FULL'] == 0 and 'NET_EXPIRED' in c,
          'neighbour counters exported')


def main():
    build = sys.argv[1]
    t = Checks('daemon_cli')
    cli(t, build)
    short_options(t, build)
    two_workers(t, build)
    neigh(t, build)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
