#!/usr/bin/python3
"""rocectl perf between two appliances over memif: every mode (write/read/send/atomic x bw/lat,
-a, -q 8, -D, --verify, --report-gbits, --rate) reports consistent numbers on both sides; a
hostile out-of-band peer (garbage, wrong sizes, early close) ends the run with a clear error
and leaves the daemon serving with nothing left behind; a scripted perftest server (Python)
drives rocectl perf --client into the corners: a peer dripping its messages, a peer silent
after the traffic, a peer address above 2^63, a peer key pointing at a third host, Ctrl-C.

usage: test_perf.py BUILD_DIR
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, MR_ALL, QP_ALL  # noqa: E402

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


def two_workers(t, build, queues=1):
    """-q 8 between daemons with two workers each: the QPs spread over both lcores. With one
    memif queue the worker without it hands its frames over; with a queue pair each (--queues
    2) what the peer's worker i sends arrives at our worker i, and the QPs of a pair, created
    in turn on both sides, sit on the same worker: nothing is handed over."""
    q = ['--queues', str(queues)]
    with Pair(build, start=False) as pair:
        m = os.path.join(pair.tmp, 'memif.sock')
        pair.a = pair.start('a', ['--lcores', '0@0,1@1,2@1',
                                  f'--vdev=net_memif0,role=server,socket={m},bsize=8192'],
                            ['--port', 'net_memif0', '--ip', '10.0.0.1/24', '--workers', '2'] + q)
        pair.a.wait_ready()
        pair.b = pair.start('b', ['--lcores', '0@0,1@1,2@0',
                                  f'--vdev=net_memif0,role=client,socket={m},bsize=8192'],
                            ['--port', 'net_memif0', '--ip', '10.0.0.2/24', '--workers', '2'] + q)
        pair.b.wait_ready()
        pair.wait_link()
        for d in (pair.a, pair.b):
            got = d.ctl('port', 'show')['ports'][0]['queues']
            t(got == queues, f"{d.name}: {got} memif queue(s), {queues} asked for")
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
        handed = {d.name: sum(d.ctl('counters')['counters'].get(k, 0)
                              for k in ('HANDOFF', 'TX_HANDOFF')) for d in (pair.a, pair.b)}
        if queues == 1:
            t(all(n > 0 for n in handed.values()), f"one queue: frames handed over {handed}")
        else:
            t(all(n == 0 for n in handed.values()), f"queue pairs: nothing handed {handed}")


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

    # Different -q given on the two sides: two rocectl perf agree on it in the side channel
    # (perftest's exchange does not carry the count), and refuse the mismatch, both.
    srv = subprocess.Popen([ctl, '-s', pair.a.sock, 'perf', 'write', '-q', '1', '--server',
                            '-p', str(PORT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    r = subprocess.run([ctl, '-s', pair.b.sock, 'perf', 'write', '-q', '2', '--client',
                        '127.0.0.1', '-p', str(PORT)], capture_output=True, text=True,
                       timeout=60)
    try:
        _, serr = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        _, serr = srv.communicate()
    t(r.returncode == 1 and 'the peer runs -q 1, this side -q 2' in r.stderr and
      srv.returncode == 1 and 'the peer runs -q 2, this side -q 1' in serr,
      f"-q 2 against -q 1: both fail, each says why ({r.stderr.strip()} / {serr.strip()})")

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


def key_msg(qpn, psn, rkey, vaddr, gid, out_reads=1):
    """perftest's 108-byte key message (struct pingpong_dest, GID form)."""
    s = '%04x:%04x:%06x:%06x:%08x:%016x:' % (0, out_reads, qpn, psn, rkey, vaddr)
    s += ''.join('%02x:' % b for b in gid) + '%08x:' % 0
    return s.encode() + b'\0'


def parse_key(m):
    f = m.rstrip(b'\0').decode().split(':')
    return {'qpn': int(f[2], 16), 'psn': int(f[3], 16),
            'ip': socket.inet_ntoa(bytes(int(x, 16) for x in f[6 + 12:6 + 16]))}


def gid4(ip):
    return b'\0' * 10 + b'\xff\xff' + socket.inet_aton(ip)


def recv_n(c, n):
    b = b''
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise EOFError
        b += d
    return b


class FakeServer(threading.Thread):
    """A perftest 6.06 ib_write_bw server, one QP, scripted: its key names a QP on daemon A
    (connected to the client's), with the given vaddr and GID; `drip` sends its version a byte
    every that many seconds; `silent_at` stops answering at that key message (0-based: 3 is
    the sync after the traffic). Records when it received each message."""

    def __init__(self, pair, vaddr=None, gid_ip=None, drip=0, silent_at=None):
        super().__init__(daemon=True)
        self.pair, self.vaddr, self.gid_ip = pair, vaddr, gid_ip
        self.drip, self.silent_at = drip, silent_at
        self.events, self.error = {}, None
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
        except OSError as e:
            self.error = e
            return
        c.settimeout(60)
        try:
            self.script(c)
        except (OSError, EOFError) as e:
            self.error = e
        finally:
            self.events['end'] = time.time()
            c.close()
            self.lsock.close()

    def xchg(self, c, n, msg):
        got = recv_n(c, n)
        c.sendall(msg)
        return got

    def script(self, c):
        recv_n(c, 16)
        self.events['version'] = time.time()
        version = b'6.06'.ljust(16, b'\0')
        if self.drip:
            for i in range(16):
                c.sendall(version[i:i + 1])
                time.sleep(self.drip)
        else:
            c.sendall(version)
        self.xchg(c, 4, struct.pack('>i', 4096))
        self.xchg(c, 4, struct.pack('>i', 64))
        self.xchg(c, 2, b'3\0')
        mine = key_msg(self.qp['qpn'], self.qp['psn'], self.mr['rkey'],
                       self.vaddr if self.vaddr is not None else self.mr['iova'],
                       gid4(self.gid_ip or self.pair.a.ctl('port', 'show')['ports'][0]['ip']))
        for k in range(5):
            got = recv_n(c, 108)
            self.events[f'key{k}'] = time.time()
            if k == self.silent_at:
                while c.recv(4096):     # say nothing until the client gives up
                    pass
                return
            if k == 1:
                # the client's QP exists and is connected: connect ours before its traffic
                peer = parse_key(got)
                self.pair.a.ctl('qp', 'connect', self.qp['qpn'], peer['qpn'], peer['psn'],
                                peer['ip'])
            c.sendall(mine)
            if k == 3:
                for _ in range(5):
                    self.xchg(c, 8, b'\0' * 8)
        c.sendall(b'done\0')

    def cleanup(self):
        self.pair.a.ctl('qp', 'destroy', self.qp['qpn'])
        self.pair.a.ctl('mr', 'dereg', self.mr['rkey'])


def fake_client(pair, srv, args, timeout=40, sigint_after=None):
    """rocectl perf write --client against a FakeServer; returns (rc, json, stderr, end time)."""
    ctl = os.path.join(pair.build, 'app/rocectl')
    srv.start()
    cl = subprocess.Popen([ctl, '-s', pair.b.sock, 'perf', 'write', '--client', '127.0.0.1',
                           '-p', str(PORT), '--json'] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if sigint_after is not None:
        time.sleep(sigint_after)
        cl.send_signal(signal.SIGINT)
    try:
        out, err = cl.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        cl.kill()
        out, err = cl.communicate()
    end = time.time()
    srv.join(10)
    srv.cleanup()
    try:
        j = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        j = {}
    return cl.returncode, j, err, end


def err_lines(err):
    return [x for x in err.splitlines() if x.startswith('rocectl perf:')]


def fake_peers(t, pair):
    """rocectl perf --client against scripted perftest servers."""
    # a) A peer dripping its version a byte every 0.25 s: the message's deadline (1 s) ends it,
    # not 16 x 0.25 s later.
    srv = FakeServer(pair, drip=0.25)
    rc, j, err, end = fake_client(pair, srv, ['--oob-timeout', '1'])
    took = end - srv.events.get('version', end)
    t(rc == 1 and 'did not send a whole message within 1 s' in err and took < 2.5,
      f"dripping peer: fails at the message's deadline ({rc}, {took:.1f} s: {err.strip()})")

    # b) A peer silent after the traffic: the client gives up --oob-timeout after its traffic.
    srv = FakeServer(pair, silent_at=3)
    rc, j, err, end = fake_client(pair, srv, ['-n', '100', '-s', '4096', '--oob-timeout', '2'])
    took = end - srv.events.get('key3', end)
    t(rc == 1 and 1.5 < took < 5 and len(err_lines(err)) == 1 and
      'did not end the test within 2 s of the end of our traffic' in err,
      f"silent after the traffic: one line after ~2 s ({rc}, {took:.1f} s: {err.strip()})")
    t(j.get('results', [{}])[0].get('iterations') == 100,
      f"silent after the traffic: the traffic itself ran ({j.get('results')})")

    # c) A peer address above 2^63: the job takes it (a "0x" string in the JSON to roced), so
    # the writes reach daemon A, which NAKs them: the address is outside its MR.
    nak0 = pair.a.ctl('counters')['counters'].get('NAK_ACC_TX', 0)
    srv = FakeServer(pair, vaddr=0xffff800000001000)
    rc, j, err, end = fake_client(pair, srv, ['-n', '10', '-s', '64', '--oob-timeout', '5'])
    t('remote_addr' not in err and 'work requests failed' in err,
      f"vaddr 0xffff800000001000: the job is accepted and its writes fail remotely ({err.strip()})")
    t(pair.a.ctl('counters')['counters'].get('NAK_ACC_TX', 0) > nak0,
      'vaddr 0xffff800000001000: daemon A received the writes and refused the address')
    t(j.get('qps', [{}])[0].get('remote', {}).get('vaddr') == '0xffff800000001000',
      f"vaddr 0xffff800000001000 printed unsigned: {j.get('qps')}")

    # d) A peer key pointing the RoCE traffic at a third host is refused, in one line naming
    # both addresses, unless --allow-gid-peer.
    srv = FakeServer(pair, gid_ip='192.0.2.99')
    rc, j, err, end = fake_client(pair, srv, ['--oob-timeout', '5'])
    lines = err_lines(err)
    t(rc == 1 and len(lines) == 1 and '192.0.2.99' in lines[0] and '127.0.0.1' in lines[0] and
      '--allow-gid-peer' in lines[0], f"GID of a third host: refused in one line ({err.strip()})")
    srv = FakeServer(pair, gid_ip='192.0.2.99')
    rc, j, err, end = fake_client(pair, srv, ['--oob-timeout', '5', '--allow-gid-peer'])
    t(rc == 1 and 'qp.connect: cannot resolve the MAC of 192.0.2.99' in err,
      f"--allow-gid-peer: rocectl connects its QP to 192.0.2.99 ({err.strip()})")

    # Ctrl-C while the client waits for the peer's message (60 s by default): out at once.
    srv = FakeServer(pair, silent_at=0)
    t0 = time.time()
    rc, j, err, end = fake_client(pair, srv, [], timeout=20, sigint_after=1.5)
    t(rc == 1 and end - t0 < 5, f"SIGINT in the side channel: exit 1 at once ({rc}, "
      f"{end - t0:.1f} s: {err.strip()})")
    t(pair.b.ctl('qp', 'show').get('qps') == [] and pair.b.ctl('mr', 'show').get('mrs') == [],
      'the client removed its QPs and MR after every failure')


def main():
    t = Checks('perf')
    with Pair(sys.argv[1]) as pair:
        modes(t, pair)
        hostile(t, pair)
        fake_peers(t, pair)
        for d in (pair.a, pair.b):
            c = d.ctl('counters')['counters']
            t(c.get('DROP_ICRC') == 0, f"{d.name}: no ICRC errors ({c.get('DROP_ICRC')})")
    two_workers(t, sys.argv[1])
    two_workers(t, sys.argv[1], queues=2)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
