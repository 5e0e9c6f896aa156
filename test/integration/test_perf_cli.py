#!/usr/bin/python3
"""rocectl perf with perftest's habits, between two roced over memif (rocectl only): no host
is the server and a host the client; perftest's device and GID options are taken with a note;
perftest's header lines; two rocectl perf agree on -n/-q/-s (a mismatch refused within a
second on both sides, a value given on one side taken by the other); send --lat -a through
every size; ^C prints a partial result marked interrupted; -b (send -b too); --run_infinitely ended by a
signal; --out_json with perftest's field names; --cc dcqcn for the run, restored after; -A
CMP_AND_SWAP; -l post lists; -Q CQ moderation (counted, timed, with a post list, a send test,
a QP failing with unsignaled work outstanding); --rate_limit and an aggregate peak; -c UD refused; a stalled run
ended by --stall-timeout; live lines on stderr only.

usage: test_perf_cli.py BUILD_DIR
"""
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, MR_ALL, QP_ALL, connect  # noqa: E402

PORT = 20515 + os.getpid() % 1000
ROW = re.compile(r'^ \d+ +\d+ ')


class Run:
    """One rocectl perf process: its exit code, output and when it ended."""

    def __init__(self, pair, d, args, cwd=None):
        self.cmd = [os.path.join(pair.build, 'app/rocectl'), '-s', d.sock, 'perf'] + args + \
            ['-p', str(PORT)]
        self.t0 = time.time()
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, cwd=cwd)
        self.rc, self.out, self.err, self.t1 = None, '', '', None

    def wait(self, timeout=90):
        try:
            self.out, self.err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.out, self.err = self.p.communicate()
        self.rc, self.t1 = self.p.returncode, time.time()
        return self

    def json(self):
        try:
            return json.loads(self.out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {}

    def lines(self):
        return [x for x in self.err.splitlines() if x.startswith('rocectl perf:')]

    def __str__(self):
        return f"rc {self.rc}: {self.out[-600:]}{self.err[-600:]}"


def pair_run(pair, sargs, cargs, timeout=90, cwd=None):
    srv = Run(pair, pair.a, sargs, cwd)
    time.sleep(0.3)
    cl = Run(pair, pair.b, cargs + ['127.0.0.1'], cwd).wait(timeout)
    srv.wait(30)
    return srv, cl


def nothing_left(t, pair, what):
    for d in (pair.a, pair.b):
        t(d.ctl('qp', 'show').get('qps') == [] and d.ctl('mr', 'show').get('mrs') == [],
          f"{what}: {d.name} has no QP or MR left")


def habits(t, pair):
    """No host: server; a host: client; -d -i -x -F noted; perftest's header and table."""
    srv, cl = pair_run(pair, ['write', '-n', '300', '-s', '4096', '-c', 'RC'],
                       ['write', '-n', '300', '-s', '4096', '-d', 'mlx5_0', '-i', '1', '-x', '3',
                        '-F', '--ib-dev=mlx5_1'])
    t(srv.rc == 0 and cl.rc == 0, f"positional host: both exit 0 ({srv} / {cl})")
    notes = cl.lines()
    for opt in ('-d mlx5_0', '-i 1', '-x 3', '-F', '-d mlx5_1'):
        t(any(f"{opt} does not apply" in x for x in notes), f"{opt}: noted ({notes})")
    t(len(notes) == 5, f"one line each: {notes}")
    for line in ('                    RDMA_Write BW Test', ' Dual-port       : OFF',
                 'Device         : roced:net_memif0', ' Number of qps   : 1',
                 ' Connection type : RC', ' TX depth        : 128', ' CQ Moderation   : 100',
                 ' Mtu             : 4096[B]', ' Link type       : Ethernet',
                 ' GID index       : 0', ' Max inline data : 0[B]', ' Data ex. method : Ethernet',
                 ' local address: LID 0000 QPN ', ' remote address: LID 0000 QPN '):
        t(line in cl.out, f"client header has {line!r}")
    t('TX depth' not in srv.out and '* Waiting for client to connect... *' in srv.out,
      'the server, as perftest: waiting banner, no TX depth')
    for who in (srv, cl):
        lines = who.out.splitlines()
        head = [i for i, x in enumerate(lines) if x.startswith(' #bytes')]
        t(len(head) == 1 and head[0] + 1 < len(lines) and ROW.match(lines[head[0] + 1]) and
          lines[head[0] + 1].split()[:2] == ['4096', '300'],
          f"the result row right under the table's header: {lines[-4:]}")
    nothing_left(t, pair, 'positional host')

    # live lines: on stderr, never on stdout between the header and the table
    srv, cl = pair_run(pair, ['read', '-D', '2.5'], ['read', '--live'])
    live = [x for x in cl.err.splitlines() if x.startswith(' [')]
    t(srv.rc == 0 and cl.rc == 0 and len(live) >= 1 and 'MB/sec' in live[0] and
      'Mpps' in live[0], f"--live: lines on stderr ({live}; {cl})")
    t(not any(x.startswith(' [') for x in cl.out.splitlines()), 'no live line on stdout')
    t(' Outstand reads  : ' in cl.out and ' OUT 0x' in cl.out, 'read: outstanding reads shown')
    t(any('taking the peer\'s -D 2.5' in x for x in cl.lines()),
      f"-D given on the server only: the client takes it ({cl.lines()})")

    r = subprocess.run([os.path.join(pair.build, 'app/rocectl'), 'perf', 'write', '-c', 'UD'],
                       capture_output=True, text=True, timeout=10)
    t(r.returncode == 2 and 'UD' in r.stderr and len(r.stderr.splitlines()) == 1,
      f"-c UD: refused in one line ({r.stderr.strip()})")
    r = subprocess.run([os.path.join(pair.build, 'app/rocectl'), 'perf', 'write', '-A',
                        'CMP_AND_SWAP'], capture_output=True, text=True, timeout=10)
    t(r.returncode == 2 and 'atomic' in r.stderr, f"-A on write: refused ({r.stderr.strip()})")
    r = subprocess.run([os.path.join(pair.build, 'app/rocectl'), 'perf', '--help'],
                       capture_output=True, text=True, timeout=10)
    t(r.returncode == 0 and 'usage: rocectl perf' in r.stdout and r.stderr == '',
      'perf --help: exit 0 on stdout')


def agreement(t, pair):
    """-n given differently on both sides: refused within a second, both, one line each."""
    srv, cl = pair_run(pair, ['write', '-n', '1000'], ['write', '-n', '2000'])
    t(srv.rc == 1 and cl.rc == 1, f"-n 1000 against -n 2000: both exit 1 ({srv} / {cl})")
    t(cl.t1 - cl.t0 < 1 and srv.t1 - cl.t0 < 1, f"within a second ({cl.t1 - cl.t0:.2f} s, "
      f"{srv.t1 - cl.t0:.2f} s)")
    for who, peer, mine in ((cl, '1000', '2000'), (srv, '2000', '1000')):
        lines = who.lines()
        t(len(lines) == 1 and f"the peer runs -n {peer}, this side -n {mine}" in lines[0],
          f"one clear line: {lines}")
    nothing_left(t, pair, '-n mismatch')

    # given on one side only: the other takes it
    srv, cl = pair_run(pair, ['write', '--json'], ['write', '-n', '300', '-q', '2', '-s', '8192',
                                                  '--json'])
    r = srv.json().get('results', [{}])
    t(srv.rc == 0 and cl.rc == 0 and r[0].get('iterations') == 600 and
      r[0].get('bytes') == 8192, f"adopted -n 300 -q 2 -s 8192: {r} ({srv})")
    t(sum('taking the peer' in x for x in srv.lines()) == 3, f"the server says so: {srv.lines()}")


def send_lat_all(t, pair):
    srv, cl = pair_run(pair, ['send', '--lat', '-a', '-n', '10', '--json'],
                       ['send', '--lat', '-a', '-n', '10', '--json'], timeout=150)
    for who in (srv, cl):
        r = who.json().get('results', [])
        t(who.rc == 0 and [x.get('bytes') for x in r] == [2 ** k for k in range(1, 24)] and
          all(x.get('iterations') == 10 and x.get('unit') == 'usec' for x in r),
          f"send --lat -a: 2 B .. 8 MiB, 10 each ({who.rc}; {len(r)} sizes; {who.err[-400:]})")


def interrupt(t, pair):
    """^C: what ran so far, marked interrupted; nothing left behind."""
    srv = Run(pair, pair.a, ['write', '-D', '20', '-q', '2'])
    time.sleep(0.3)
    cl = Run(pair, pair.b, ['write', '127.0.0.1', '--json'])
    time.sleep(2)
    t_sig = time.time()
    cl.p.send_signal(signal.SIGINT)
    cl.wait(20)
    srv.wait(20)
    j = cl.json()
    r = j.get('results', [{}])[0]
    t(cl.rc == 1 and cl.t1 - t_sig < 3, f"^C: the client ends at once with 1 ({cl.rc}, "
      f"{cl.t1 - t_sig:.1f} s)")
    t(j.get('interrupted') is True and r.get('interrupted') is True and
      r.get('iterations', 0) > 0 and r.get('bw_avg', 0) > 0,
      f"^C: a partial result, marked interrupted: {r} ({cl.err[-300:]})")
    t(not any('work requests failed' in x for x in cl.lines()),
      f"^C: the outstanding work completed ({cl.lines()})")
    t(srv.rc == 1, f"^C: the server fails ({srv.rc})")
    nothing_left(t, pair, '^C')
    # the text form: the row carries the mark
    srv = Run(pair, pair.a, ['send', '--lat', '-n', '1000000'])
    time.sleep(0.3)
    cl = Run(pair, pair.b, ['send', '--lat', '127.0.0.1'])
    time.sleep(2)
    cl.p.send_signal(signal.SIGINT)
    cl.wait(20)
    srv.wait(20)
    rows = [x for x in cl.out.splitlines() if ROW.match(x)]
    t(cl.rc == 1 and len(rows) == 1 and rows[0].endswith('(interrupted)'),
      f"^C on send --lat: the row marked ({cl})")


def bidirectional(t, pair):
    srv, cl = pair_run(pair, ['read', '-b', '-n', '300', '-s', '16384', '--verify', '--json'],
                       ['read', '-b', '-n', '300', '-s', '16384', '--verify', '--json'])
    rs, rc = srv.json().get('results', [{}]), cl.json().get('results', [{}])
    t(srv.rc == 0 and cl.rc == 0 and len(rs) == 1 and len(rc) == 1,
      f"-b: both exit 0, one line each ({srv} / {cl})")
    t(rs[0].get('bidirectional') and rc[0].get('bidirectional') and
      rs[0].get('iterations') == 300 and rc[0].get('iterations') == 300 and
      abs(rs[0].get('bw_avg', 0) - rc[0].get('bw_avg', -1)) < 1e-6 * rc[0].get('bw_avg', 1),
      f"-b: both directions added up, the same on both sides: {rs} {rc}")
    t(srv.json().get('verify') == 'ok' and cl.json().get('verify') == 'ok',
      '-b --verify: both sides received the pattern')
    srv, cl = pair_run(pair, ['write', '-b', '-n', '200'], ['write', '-b', '-n', '200'])
    t(srv.rc == 0 and cl.rc == 0 and 'RDMA_Write Bidirectional BW Test' in cl.out and
      ' TX depth        : 128' in srv.out, f"-b text: title, TX depth on both ({cl.out[:300]})")
    # send -b: one job sends and receives the peer's SENDs on each QP
    srv, cl = pair_run(pair, ['send', '-b', '-n', '400', '-s', '8192', '-q', '2', '--verify',
                              '--json'],
                       ['send', '-b', '-n', '400', '-s', '8192', '-q', '2', '--verify', '--json'])
    rs, rc = srv.json().get('results', [{}]), cl.json().get('results', [{}])
    t(srv.rc == 0 and cl.rc == 0 and rs[0].get('bidirectional') and
      rc[0].get('iterations') == 800 and rs[0].get('bw_avg') == rc[0].get('bw_avg') and
      srv.json().get('verify') == 'ok' and cl.json().get('verify') == 'ok',
      f"send -b -q 2 --verify: both ways, verified ({rs} {rc}; {srv.err[-300:]}{cl.err[-300:]})")
    srv, cl = pair_run(pair, ['send', '-b', '-D', '1.5', '--json'], ['send', '-b', '--json'])
    rs, rc = srv.json().get('results', [{}]), cl.json().get('results', [{}])
    t(srv.rc == 0 and cl.rc == 0 and rc[0].get('iterations', 0) > 0 and
      not rc[0].get('bidirectional') and rs[0].get('iterations', 0) > 0,
      f"send -b -D: each side its own numbers, as perftest ({rs} {rc})")


def infinitely(t, pair):
    srv = Run(pair, pair.a, ['read', '--json'])
    time.sleep(0.3)
    cl = Run(pair, pair.b, ['read', '127.0.0.1', '--run_infinitely', '-D', '1', '--json'])
    time.sleep(3.6)
    t_sig = time.time()
    cl.p.send_signal(signal.SIGINT)
    cl.wait(20)
    srv.wait(20)
    rc_, rs = cl.json().get('results', []), srv.json().get('results', [])
    t(cl.rc == 0 and srv.rc == 0 and cl.t1 - t_sig < 3,
      f"--run_infinitely: ended by SIGINT, both exit 0 ({cl} / {srv})")
    t(len(rc_) >= 3 and all(x.get('interval_s', 0) > 0 and x.get('iterations', 0) > 0
                            for x in rc_),
      f"--run_infinitely: a line per interval ({rc_})")
    t(len(rs) == 1 and rs[0].get('iterations', 0) >= sum(x['iterations'] for x in rc_[:-1]),
      f"--run_infinitely: the server prints the client's total ({rs})")
    t(any('--run_infinitely' in x for x in srv.lines()), f"the server follows ({srv.lines()})")
    nothing_left(t, pair, '--run_infinitely')


def out_json(t, pair, tmp):
    path = os.path.join(tmp, 'report.json')
    srv, cl = pair_run(pair, ['write', '-n', '200', '--out_json'],
                       ['write', '-n', '200', '--out_json_file', path], cwd=tmp)
    try:
        doc = json.load(open(path))
        sdoc = json.load(open(os.path.join(tmp, 'perftest_out.json')))
    except (OSError, ValueError) as e:
        t(False, f"--out_json: the files parse ({e}; {cl})")
        return
    info, res = doc.get('test_info', {}), doc.get('results', {})
    for k in ('test', 'Dual_port', 'Device', 'Number_of_qps', 'Transport_type',
              'Connection_type', 'Using_SRQ', 'TX_depth', 'CQ_Moderation', 'Mtu', 'Link_type',
              'GID_index', 'Max_inline_data', 'rdma_cm_QPs', 'Data_ex_method'):
        t(k in info, f"--out_json: test_info has {k}")
    t(info.get('test') == 'RDMA_Write_BW_Test' and info.get('Number_of_qps') == 1 and
      info.get('Mtu') == 4096, f"--out_json: test_info {info}")
    row = [x for x in cl.out.splitlines() if ROW.match(x)][0].split()
    t(res.get('MsgSize') == 65536 and res.get('n_iterations') == 200 and
      f"{res.get('BW_average', -1):.2f}" == row[3] and f"{res.get('BW_peak', -1):.2f}" == row[2]
      and isinstance(res.get('MsgRate'), float), f"--out_json: results {res} vs {row}")
    t(sdoc.get('results', {}).get('n_iterations') == 200 and 'TX_depth' not in
      sdoc.get('test_info', {}), f"--out_json: the server's report ({sdoc.get('results')})")


def cc(t, pair):
    def show(d):
        j = d.ctl('cc', 'show')
        j.pop('id', None)
        return j
    before = {d.name: show(d) for d in (pair.a, pair.b)}
    srv = Run(pair, pair.a, ['write', '--cc', 'dcqcn'])
    time.sleep(0.3)
    cl = Run(pair, pair.b, ['write', '127.0.0.1', '-D', '3', '--cc', 'dcqcn', '--cc-profile',
                            'paper'])
    time.sleep(1.5)
    during = {d.name: show(d) for d in (pair.a, pair.b)}
    cl.wait(30)
    srv.wait(30)
    t(srv.rc == 0 and cl.rc == 0, f"--cc dcqcn: both exit 0 ({srv} / {cl})")
    t(during['a'].get('profile') == 'mlx5' and during['a'].get('on') is True and
      during['b'].get('profile') == 'paper' and during['b'].get('on') is True,
      f"--cc dcqcn: visible in cc show during the run ({during})")
    after = {d.name: show(d) for d in (pair.a, pair.b)}
    t(after == before, f"--cc: restored after the run ({before} -> {after})")
    t(' Congestion ctrl : DCQCN, profile paper' in cl.out, 'the header says it')


def atomics_lists_rates(t, pair):
    srv, cl = pair_run(pair, ['atomic', '-A', 'CMP_AND_SWAP', '-n', '200', '--verify', '--json'],
                       ['atomic', '-n', '200', '--verify', '--json'])
    t(srv.rc == 0 and cl.rc == 0 and srv.json().get('verify') == 'ok',
      f"-A CMP_AND_SWAP (the client takes it): verified ({srv} / {cl})")
    srv, cl = pair_run(pair, ['write', '-l', '4', '-n', '400'], ['write', '-l', '4', '-n', '400'])
    rows = [x.split() for x in cl.out.splitlines() if ROW.match(x)]
    t(cl.rc == 0 and 'RDMA_Write Post List BW Test' in cl.out and
      ' Post List       : 4' in cl.out and rows and rows[0][1] == '400',
      f"-l 4: post lists ({cl.out[-500:]})")
    srv, cl = pair_run(pair, ['write', '-D', '2'],
                       ['write', '--rate_limit', '1', '--rate_units', 'g', '--report_gbits',
                        '--json'])
    r = cl.json().get('results', [{}])[0]
    t(cl.rc == 0 and 0.5 < r.get('bw_avg', 0) <= 1.1, f"--rate_limit 1 g: {r}")
    # the aggregate's peak, not the sum of the QPs' (it was 14.6 Gb/s for a 2 Gb/s run)
    srv, cl = pair_run(pair, ['write', '-D', '2', '-q', '4'],
                       ['write', '--rate', '2', '--report-gbits', '--json'])
    r = cl.json().get('results', [{}])[0]
    t(cl.rc == 0 and 1.0 < r.get('bw_avg', 0) <= 2.2 and r.get('bw_peak', 99) < 3,
      f"-q 4 --rate 2: peak of the aggregate {r}")


def refused(d, *args):
    r = d.rocectl(*args, check=False)
    try:
        return json.loads(r.stdout).get('error', {}) if r.stdout.strip() else {}
    except ValueError:
        return {}


def rows_of(run):
    return [x.split() for x in run.out.splitlines() if ROW.match(x)]


def cq_moderation(t, pair):
    """perftest's -Q: a completion every N sends; its default 100, no more than the tx depth,
    which a counted run's iterations cap (the captures: -n 20 gives 20 and 20)."""
    srv, cl = pair_run(pair, ['write', '-n', '20'], ['write', '-n', '20'])
    t(cl.rc == 0 and ' TX depth        : 20' in cl.out and ' CQ Moderation   : 20' in cl.out,
      f"-n 20: TX depth and CQ moderation 20, as perftest ({cl.out[:700]})")
    for args, n in ((['write', '-n', '1003', '-Q', '7'], 1003),
                    (['write', '-n', '403', '-l', '4', '-Q', '10'], 403),
                    (['send', '-n', '301', '-Q', '50'], 301)):
        srv, cl = pair_run(pair, args, args)
        rows = rows_of(cl)
        t(srv.rc == 0 and cl.rc == 0 and rows and rows[0][1] == str(n) and
          f' CQ Moderation   : {args[-1]}' in cl.out,
          f"{' '.join(args)}: exactly {n} messages ({cl})")
    # a timed run ends with unsignaled sends outstanding: they count once the queue is empty
    srv, cl = pair_run(pair, ['write', '-D', '1', '-Q', '100', '--json'],
                       ['write', '--json', '-s', '64'])
    r = cl.json().get('results', [{}])[0]
    t(cl.rc == 0 and srv.rc == 0 and r.get('iterations', 0) > 0 and cl.t1 - cl.t0 < 15,
      f"-D 1 -Q 100: ends, counts its tail ({r}, {cl.t1 - cl.t0:.1f} s)")
    nothing_left(t, pair, '-Q')

    # The job's own checks, and a QP failing under unsignaled work (a wrong rkey).
    qa, qb = connect(pair.a, pair.b)
    ma = pair.a.ctl('mr', 'reg', '65536', MR_ALL)['mr']
    mb = pair.b.ctl('mr', 'reg', '65536', MR_ALL)['mr']
    job = ['job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=64',
           f"remote_addr={mb['iova']}"]
    bad = refused(pair.a, *job, f"rkey={mb['rkey']}", 'count=10', 'cq_mod=100000')
    t(bad.get('code') == 'EINVAL' and 'cq_mod' in bad.get('message', ''),
      f"cq_mod above the send queue: refused ({bad})")
    bad = refused(pair.a, 'job', 'start', qa['qpn'], 'op=recv', f"lkey={ma['lkey']}",
                  'length=64', 'cq_mod=10')
    t(bad.get('code') == 'EINVAL' and 'cq_mod' in bad.get('message', ''),
      f"cq_mod on a receive job: refused ({bad})")
    pair.a.ctl(*job, f"rkey={mb['rkey'] ^ 0x55aa00}", 'count=500', 'cq_mod=64')
    end = time.time() + 10
    while time.time() < end:
        j = pair.a.ctl('job', 'show', qa['qpn'])['job']
        if not j['running']:
            break
        time.sleep(0.05)
    t(not j['running'] and j['errors'] > 0 and j['completed'] + j['errors'] == j['posted'],
      f"a wrong rkey under -Q 64: the job ends, every post accounted for ({j})")
    for d, q, m in ((pair.a, qa, ma), (pair.b, qb, mb)):
        d.ctl('qp', 'destroy', q['qpn'])
        d.ctl('mr', 'dereg', m['rkey'])


class FakeWriteLat(threading.Thread):
    """A perftest 6.06 ib_write_lat server that plays the exchange up to the traffic, then
    sends nothing: the client's ping-pong never starts."""

    def __init__(self, pair):
        super().__init__(daemon=True)
        self.pair = pair
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(('127.0.0.1', PORT))
        self.lsock.listen(1)
        self.qp = pair.a.ctl('qp', 'create', QP_ALL)['qp']
        self.mr = pair.a.ctl('mr', 'reg', '65536', MR_ALL)['mr']

    def run(self):
        self.lsock.settimeout(30)
        try:
            c, _ = self.lsock.accept()
        except OSError:
            return
        c.settimeout(30)
        ip = socket.inet_aton(self.pair.a.ctl('port', 'show')['ports'][0]['ip'])
        gid = b'\0' * 10 + b'\xff\xff' + ip
        key = ('%04x:%04x:%06x:%06x:%08x:%016x:' % (0, 1, self.qp['qpn'], self.qp['psn'],
               self.mr['rkey'], self.mr['iova'])) + ''.join('%02x:' % b for b in gid) + \
            '%08x:' % 0
        try:
            for mine in (b'6.06'.ljust(16, b'\0'), struct.pack('>i', 4096),
                         struct.pack('>i', 64), b'3\0'):
                self.recv(c, len(mine))
                c.sendall(mine)
            for _ in range(4):      # initial, keys, keys again, the barrier
                self.recv(c, 108)
                c.sendall(key.encode() + b'\0')
            while c.recv(4096):
                pass
        except OSError:
            pass
        finally:
            c.close()
            self.lsock.close()

    @staticmethod
    def recv(c, n):
        b = b''
        while len(b) < n:
            d = c.recv(n - len(b))
            if not d:
                raise OSError('closed')
            b += d
        return b

    def cleanup(self):
        self.pair.a.ctl('qp', 'destroy', self.qp['qpn'])
        self.pair.a.ctl('mr', 'dereg', self.mr['rkey'])


def stall(t, pair):
    fake = FakeWriteLat(pair)
    fake.start()
    cl = Run(pair, pair.b, ['write', '--lat', '127.0.0.1', '--stall-timeout', '1']).wait(30)
    fake.join(10)
    fake.cleanup()
    t(cl.rc == 1 and cl.t1 - cl.t0 < 5 and any('no progress for 1 s' in x for x in cl.lines()),
      f"a stalled ping-pong: ended by --stall-timeout ({cl.t1 - cl.t0:.1f} s, {cl})")
    nothing_left(t, pair, 'stall')


def main():
    t = Checks('perf_cli')
    tmp = tempfile.mkdtemp(prefix='rocedp-perfcli-')
    with Pair(os.path.abspath(sys.argv[1])) as pair:
        for step in (habits, agreement, send_lat_all, interrupt, bidirectional, infinitely,
                     cc, atomics_lists_rates, cq_moderation, stall):
            step(t, pair)
        out_json(t, pair, tmp)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
