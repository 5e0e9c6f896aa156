#!/usr/bin/python3
"""rocectl pingpong (ibv_rc_pingpong / ibv_ud_pingpong) between two roced over memif.

Both transports, both roles (server on A and client on B, then the reverse), with -c: both exit
0, print their lines in rdma-core's format (UD's local line with its colon), each side's remote
address is the other's local one, the byte and iteration counts are theirs (size * iters * 2),
the client finds the data the server sent back intact; nothing is left in roced and nothing was
dropped. Then: other sizes, MTUs and depths; a server that does not send back what it got
(driven here through the control socket) makes the client's -c fail page by page; malformed,
short and silent TCP exchanges, a peer QP that does not exist (RC: retries exhausted; UD:
--stall-timeout), ^C while waiting, and the options refused as rdma-core's tools refuse them.

usage: test_pingpong.py BUILD_DIR
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, poll_wc  # noqa: E402

PORT = 18602                # TCP port of the exchange (not the default 18515)
LOCAL_RE = {
    'rc': re.compile(r'^  local address:  LID 0x0000, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), '
                     r'GID (\S+)$', re.M),
    'ud': re.compile(r'^  local address:  LID 0x0000, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}): '
                     r'GID (\S+)$', re.M),
}
REMOTE_RE = re.compile(r'^  remote address: LID 0x0000, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), '
                       r'GID (\S+)$', re.M)
BYTES_RE = re.compile(r'^(\d+) bytes in (\d+\.\d\d) seconds = (\d+\.\d\d) Mbit/sec$', re.M)
ITERS_RE = re.compile(r'^(\d+) iters in (\d+\.\d\d) seconds = (\d+\.\d\d) usec/iter$', re.M)


def rocectl(d, *args):
    return [os.path.join(d.build, 'app/rocectl'), '-s', d.sock, 'pingpong'] + \
        [str(a) for a in args]


def listening(port=PORT):
    r = subprocess.run(['ss', '-Hltn', f'sport = :{port}'], capture_output=True, text=True)
    return r.stdout.strip() != ''


def wait_listening(proc, timeout=15):
    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        if listening():
            return True
        time.sleep(0.05)
    return False


def run_pair(srv, cli, args, cli_extra=(), timeout=120):
    """Server on daemon srv, client on cli: (server rc, out, err), (client rc, out, err)."""
    sp = subprocess.Popen(rocectl(srv, *args, '-p', PORT), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        if not wait_listening(sp):
            sp.kill()
            so, se = sp.communicate()
            return (sp.returncode, so, se), (None, '', 'the server never listened')
        c = subprocess.run(rocectl(cli, *args, *cli_extra, '-p', PORT, '127.0.0.1'),
                           capture_output=True, text=True, timeout=timeout)
        so, se = sp.communicate(timeout=timeout)
        return (sp.returncode, so, se), (c.returncode, c.stdout, c.stderr)
    finally:
        if sp.poll() is None:
            os.killpg(sp.pid, signal.SIGKILL)
            sp.wait()


def parse(out, tr):
    loc, rem = LOCAL_RE[tr].search(out), REMOTE_RE.search(out)
    b, i = BYTES_RE.search(out), ITERS_RE.search(out)
    return {
        'local': (int(loc.group(1), 16), int(loc.group(2), 16), loc.group(3)) if loc else None,
        'remote': (int(rem.group(1), 16), int(rem.group(2), 16), rem.group(3)) if rem else None,
        'bytes': int(b.group(1)) if b else None,
        'iters': int(i.group(1)) if i else None,
        'usec': float(i.group(3)) if i else None,
    }


def leftovers(d):
    """What roced still holds: QPs, AHs, MRs outside PD 0 (the rocectl's own PDs)."""
    return (d.ctl('qp', 'show')['qps'], d.ctl('ah', 'show')['ahs'],
            [m for m in d.ctl('mr', 'show')['mrs'] if m.get('pd', 0) != 0])


def drops(d):
    c = d.ctl('counters')['counters']
    return {k: v for k, v in c.items() if v and (k.startswith('DROP_') or k in (
        'RX_DROP', 'UNKNOWN_QP', 'UD_QKEY_DROP', 'UD_RECV_LEN_ERR', 'NOT_OURS'))}


def case(t, p, tr, srv, cli, args, size, iters):
    name = f"{tr} server {srv.name} client {cli.name} {' '.join(map(str, args))}"
    (src, so, se), (crc, co, ce) = run_pair(srv, cli, [tr] + list(args))
    t(src == 0, f'{name}: server exit {src}: {so}{se}')
    t(crc == 0, f'{name}: client exit {crc}: {co}{ce}')
    s, c = parse(so, tr), parse(co, tr)
    t(s['local'] is not None and c['local'] is not None and s['remote'] is not None and
      c['remote'] is not None, f'{name}: their address lines:\n{so}\n{co}')
    if s['local'] and c['remote']:
        t(c['remote'] == s['local'] and s['remote'] == c['local'],
          f"{name}: each side's remote address is the other's local one: {s} {c}")
        t(s['local'][2] == f'::ffff:{srv.ip}' and c['local'][2] == f'::ffff:{cli.ip}',
          f'{name}: GIDs are the ports\' IPv4 addresses: {s} {c}')
    for side, r in (('server', s), ('client', c)):
        t(r['bytes'] == size * iters * 2 and r['iters'] == iters,
          f'{name}: {side} counts {size} * {iters} * 2 bytes, {iters} iters: {r}')
        t(r['usec'] is not None and r['usec'] > 0, f'{name}: {side} time > 0: {r}')
    t('invalid data' not in co, f'{name}: the client found the data intact: {co}')
    for d in (srv, cli):
        q, a, m = leftovers(d)
        t(not q and not a and not m, f'{name}: {d.name} holds nothing after: {q} {a} {m}')
    return c


class FakePeer(threading.Thread):
    """A TCP peer of the exchange that says what the test wants: as the server (listen) or
    the client (connect)."""

    def __init__(self, role, send, read=52, port=PORT):
        super().__init__(daemon=True)
        self.role, self.send, self.read, self.port = role, send, read, port
        self.got = b''
        self.err = None
        if role == 'server':
            self.ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.ls.bind(('127.0.0.1', port))
            self.ls.listen(1)
            self.ls.settimeout(30)

    def run(self):
        try:
            if self.role == 'server':
                s, _ = self.ls.accept()
                self.ls.close()
            else:
                s = socket.create_connection(('127.0.0.1', self.port), timeout=30)
            s.settimeout(30)
            if self.role == 'server':
                self.got = recv_n(s, self.read)
                s.sendall(self.send)
                try:
                    self.got += recv_n(s, 5)
                except OSError:
                    pass
            else:
                s.sendall(self.send)
                try:
                    self.got = recv_n(s, self.read)
                except OSError:
                    pass
            s.close()
        except OSError as e:
            self.err = e


def recv_n(s, n):
    b = b''
    while len(b) < n:
        x = s.recv(n - len(b))
        if not x:
            break
        b += x
    return b


def dest_msg(qpn, psn, ip):
    gid = bytes(10) + b'\xff\xff' + socket.inet_aton(ip)
    return (f'{0:04x}:{qpn:06x}:{psn:06x}:' + gid.hex()).encode() + b'\0'


def parse_msg(b):
    m = re.fullmatch(rb'([0-9a-f]{4}):([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{32})\0', b)
    if not m:
        return None
    return int(m.group(2), 16), int(m.group(3), 16), socket.inet_ntoa(bytes.fromhex(
        m.group(4).decode())[12:])


def no_echo(t, p):
    """An RC server that sends its own bytes instead of what it got, run by hand over the
    control socket: the client's -c must say which pages came back wrong, and fail."""
    a, b = p.a, p.b
    size, iters = 8192, 5
    fake = FakePeer('server', b'')            # its reply is set once the QP exists
    mr = a.ctl('mr', 'reg', 2 * size)['mr']
    a.ctl('mr', 'fill', mr['rkey'], 'random:7')
    qp = a.ctl('qp', 'create')['qp']
    holder = {}

    def serve():
        s, _ = fake.ls.accept()
        s.settimeout(30)
        peer = parse_msg(recv_n(s, 52))
        holder['peer'] = peer
        a.ctl('qp', 'connect', qp['qpn'], peer[0], peer[1], peer[2], 'mtu=1024')
        a.ctl('post', 'recv', qp['qpn'], f"lkey={mr['lkey']}", 'offset=0', f'length={size}',
              f'count={iters}')
        s.sendall(dest_msg(qp['qpn'], qp['psn'], p.a.ip))
        recv_n(s, 5)
        s.close()
        wcs = holder.setdefault('wc', [])
        for i in range(iters):
            # the client's message i, then ours in answer (a poll may return both kinds)
            end = time.time() + 20
            while sum(w['opcode'] == 'recv' for w in wcs) <= i and time.time() < end:
                wcs += poll_wc(a, qp['qpn'], 1, timeout=1)
            a.ctl('post', 'send', qp['qpn'], f"lkey={mr['lkey']}", f'offset={size}',
                  f'length={size}')
        end = time.time() + 20
        while len(wcs) < 2 * iters and time.time() < end:
            wcs += poll_wc(a, qp['qpn'], 1, timeout=1)

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    r = subprocess.run(rocectl(b, '-c', '-s', size, '-n', iters, '-p', PORT, '127.0.0.1'),
                       capture_output=True, text=True, timeout=120)
    th.join(60)
    t(holder.get('peer') is not None and holder['peer'][2] == p.b.ip,
      f"the fake server parsed the client's address: {holder.get('peer')}")
    t(all(w.get('status') == 0 for w in holder.get('wc', [])) and
      len(holder.get('wc', [])) == 2 * iters, f"the fake server's completions: {holder}")
    t(r.returncode == 1 and 'invalid data in page 0\n' in r.stdout and
      'invalid data in page 1\n' in r.stdout and BYTES_RE.search(r.stdout),
      f'-c against a server that does not send back what it got: exit {r.returncode}: '
      f'{r.stdout}{r.stderr}')
    a.ctl('qp', 'destroy', qp['qpn'])
    a.ctl('mr', 'dereg', mr['rkey'])


def hostile(t, p):
    a, b = p.a, p.b
    status_before = a.ctl('status')
    # A client that sends garbage: the server refuses it, says why, exits 1.
    for what, msg in (('garbage', b'x' * 51 + b'\0'),
                      ('no NUL', dest_msg(0x100, 1, '10.0.0.2')[:51] + b'z'),
                      ('bad hex', b'0000:00zz00:000001:' + b'0' * 32 + b'\0')):
        sp = subprocess.Popen(rocectl(a, '-p', PORT), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        wait_listening(sp)
        fake = FakePeer('client', msg)
        fake.start()
        so, se = sp.communicate(timeout=30)
        fake.join(10)
        t(sp.returncode == 1 and 'is not LLLL:QQQQQQ:PPPPPP:GID' in se,
          f'server given {what}: exit {sp.returncode}: {se}')
        t(not fake.got, f'server given {what}: answered nothing: {fake.got}')
    # A client that sends 10 bytes and goes.
    sp = subprocess.Popen(rocectl(a, '-p', PORT), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    wait_listening(sp)
    fake = FakePeer('client', b'0000:00000', read=0)
    fake.start()
    so, se = sp.communicate(timeout=30)
    t(sp.returncode == 1 and 'closed the connection' in se,
      f'server given a short message: exit {sp.returncode}: {se}')
    # A server that answers garbage: the client refuses it.
    fake = FakePeer('server', b'\xff' * 52)
    fake.start()
    r = subprocess.run(rocectl(b, '-p', PORT, '127.0.0.1'), capture_output=True, text=True,
                       timeout=30)
    fake.join(10)
    t(r.returncode == 1 and 'is not LLLL:QQQQQQ:PPPPPP:GID' in r.stderr and
      parse_msg(fake.got[:52]) is not None and not fake.got[52:],
      f'client given garbage: exit {r.returncode}: {r.stderr}; it sent {fake.got}')
    # A server with a GID of zeros (rdma-core's tools without -g).
    fake = FakePeer('server', b'0000:000100:000001:' + b'0' * 32 + b'\0')
    fake.start()
    r = subprocess.run(rocectl(b, '-p', PORT, '127.0.0.1'), capture_output=True, text=True,
                       timeout=30)
    fake.join(10)
    t(r.returncode == 1 and 'sent no GID' in r.stderr,
      f'client given a zero GID: exit {r.returncode}: {r.stderr}')
    # Peers whose QP does not exist: RC runs out of retries, UD waits for --stall-timeout.
    fake = FakePeer('server', dest_msg(0xabcdef, 5, p.a.ip))
    fake.start()
    t0 = time.time()
    r = subprocess.run(rocectl(b, '-p', PORT, '-n', 10, '127.0.0.1'), capture_output=True,
                       text=True, timeout=60)
    fake.join(10)
    t(r.returncode == 1 and 'Failed status' in r.stderr,
      f'RC client to no QP: exit {r.returncode} in {time.time() - t0:.1f} s: {r.stderr}')
    fake = FakePeer('server', dest_msg(0xabcdef, 5, p.a.ip))
    fake.start()
    t0 = time.time()
    r = subprocess.run(rocectl(b, 'ud', '-p', PORT, '--stall-timeout', 1, '127.0.0.1'),
                       capture_output=True, text=True, timeout=60)
    fake.join(10)
    took = time.time() - t0
    t(r.returncode == 1 and 'nothing moved' in r.stderr and took < 15,
      f'UD client to no QP: exit {r.returncode} in {took:.1f} s: {r.stderr}')
    # ^C while the server waits for its client.
    sp = subprocess.Popen(rocectl(a, '-p', PORT), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    wait_listening(sp)
    sp.send_signal(signal.SIGINT)
    so, se = sp.communicate(timeout=10)
    t(sp.returncode == 1 and 'interrupted' in se, f'^C: exit {sp.returncode}: {se}')
    for d in (a, b):
        q, ah, m = leftovers(d)
        t(not q and not ah and not m, f'{d.name} holds nothing after the refusals: {q} {ah} {m}')
    t(a.ctl('status')['version'] == status_before['version'], 'A still serves')


def refusals(t, p):
    a = p.a
    for args, code, text in (
            (['-o'], 1, "The device isn't ODP capable"),
            (['-t'], 1, "The device isn't completion timestamp capable"),
            (['-j'], 1, "Device doesn't support dm allocation"),
            (['ud', '-m', '1024'], 2, 'invalid option'),
            (['-n', '0'], 2, 'bad iterations'),
            (['-m', '1000'], 2, 'bad MTU'),
            (['ud', '-s', '8192', '127.0.0.1'], 1, 'Requested size larger than port MTU (4096)'),
            (['a', 'b'], 2, "unexpected argument 'b'")):
        r = subprocess.run(rocectl(a, *args, '-p', PORT), capture_output=True, text=True,
                           timeout=30)
        t(r.returncode == code and text in r.stderr,
          f'{args}: exit {r.returncode} (want {code}), "{text}": {r.stderr}')
    r = subprocess.run(rocectl(a, '--help'), capture_output=True, text=True, timeout=10)
    t(r.returncode == 0 and 'usage: rocectl pingpong' in r.stdout, f'--help: {r.stdout}')
    r = subprocess.run([os.path.join(a.build, 'app/rocectl'), 'help', 'pingpong'],
                       capture_output=True, text=True, timeout=10)
    t(r.returncode == 0 and 'usage: rocectl pingpong' in r.stdout, f'help pingpong: {r.stdout}')


def main():
    t = Checks('pingpong')
    with Pair(sys.argv[1]) as p:
        p.a.ip, p.b.ip = '10.0.0.1', '10.0.0.2'
        for tr, size in (('rc', 4096), ('ud', 1024)):
            for srv, cli in ((p.a, p.b), (p.b, p.a)):
                case(t, p, tr, srv, cli, ['-c'], size, 1000)
        # Other sizes, MTUs and depths, JSON.
        case(t, p, 'rc', p.a, p.b, ['-c', '-s', 65536, '-m', 4096, '-r', 16, '-n', 200],
             65536, 200)
        case(t, p, 'rc', p.b, p.a, ['-c', '-s', 5000, '-m', 256, '-r', 1, '-n', 100], 5000, 100)
        case(t, p, 'ud', p.a, p.b, ['-c', '-s', 4096, '-r', 2, '-n', 300], 4096, 300)
        case(t, p, 'ud', p.b, p.a, ['-s', 1, '-n', 50], 1, 50)
        (src, so, se), (crc, co, ce) = run_pair(p.a, p.b, ['ud', '--json', '-c', '-n', 100])
        try:
            sj, cj = json.loads(so), json.loads(co)
        except ValueError:
            sj, cj = {}, {}
        t(src == 0 and crc == 0 and sj.get('ok') is True and cj.get('ok') is True and
          cj.get('check') == 'ok' and cj.get('iters') == 100 and
          cj.get('bytes') == 1024 * 200 and cj.get('remote') == sj.get('local') and
          sj.get('role') == 'server' and cj.get('transport') == 'ud',
          f'--json: {so}{se}{co}{ce}')
        for d in (p.a, p.b):
            dr = drops(d)
            t(not dr, f'{d.name}: no drops: {dr}')
        # From here on, datagrams to QPs that do not exist are dropped on purpose.
        no_echo(t, p)
        hostile(t, p)
        refusals(t, p)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
