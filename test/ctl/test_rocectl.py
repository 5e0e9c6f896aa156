#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocectl end to end against mock_roced (lib/ctl with mock handlers): exit codes (0 ok,
1 error reply, 2 usage, 3 no server / timeout / refused), --json, human tables, --watch, the
interactive prompt (piped and on a pty, with Tab completion), max clients, oversized lines,
shutdown. Every process started here is stopped here; sockets live in a temp dir.

Usage: test_rocectl.py ROCECTL MOCK_ROCED
"""
import json
import os
import pty
import select
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import zlib

ROCECTL, MOCK = sys.argv[1], sys.argv[2]
failures = 0
checks = 0
procs = []


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL {what}", file=sys.stderr)
    return cond


def start_mock(path, *extra):
    p = subprocess.Popen([MOCK, '-s', path, *extra], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    procs.append(p)
    ready, _, _ = select.select([p.stdout], [], [], 5)
    if not ready or p.stdout.readline().strip() != 'ready':
        raise RuntimeError('mock_roced did not start')
    return p


def run(sock, *args, stdin=None, env=None, timeout=10):
    cmd = [ROCECTL] + (['-s', sock] if sock else []) + list(args)
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout,
                          env=env)


def expect(sock, args, code, out=None, err=None, what=None):
    r = run(sock, *args)
    what = what or ' '.join(args)
    ok = check(r.returncode == code, f"{what}: exit {r.returncode}, want {code}\n"
               f"stdout: {r.stdout}\nstderr: {r.stderr}")
    if out is not None:
        ok &= check(out in r.stdout, f"{what}: stdout lacks {out!r}:\n{r.stdout}")
    if err is not None:
        ok &= check(err in r.stderr, f"{what}: stderr lacks {err!r}:\n{r.stderr}")
    return r


def jrun(sock, *args):
    """--json: one reply line, checked for the envelope; returns the object."""
    r = run(sock, '--json', *args)
    lines = r.stdout.splitlines()
    check(len(lines) == 1, f"{args}: --json printed {len(lines)} lines")
    try:
        j = json.loads(lines[0])
    except (ValueError, IndexError):
        check(False, f"{args}: --json output is not JSON: {r.stdout!r}")
        return {}, r.returncode
    check(j.get('v') == 1 and isinstance(j.get('id'), int) and isinstance(j.get('ok'), bool),
          f"{args}: envelope {j}")
    return j, r.returncode


def random_pattern(seed, n):
    """mr.fill random:SEED as doc/control-protocol.md defines it."""
    m = (1 << 64) - 1
    x = (seed * 0x9e3779b97f4a7c15 + 1) & m
    out = bytearray()
    for _ in range(n):
        x ^= (x << 13) & m
        x ^= x >> 7
        x ^= (x << 17) & m
        out.append(x & 0xff)
    return bytes(out)


def test_usage(sock, tmp):
    expect(os.path.join(tmp, 'none.sock'), ['status'], 3, err='cannot connect')
    for args in (['bogus'], ['mr'], ['mr', 'bogus'], ['mr', 'reg'], ['mr', 'reg', 'size=abc'],
                 ['mr', 'reg', '4K', 'bogus=1'], ['mr', 'reg', '4K', '5'],
                 ['mr', 'reg', '4K', 'size=8K'], ['mr', 'reg', '16E'],
                 ['--timeout', 'x', 'status'], ['-x', 'status'], ['stats', '--watch', '0'],
                 ['stats', '--watch'], ['mr', 'dereg', '1', '--watch', '1'],
                 ['help', 'nothing'], ['call'], ['call', 'status', '[1]'],
                 ['post', 'cas', '0x100', 'lkey=1', 'remote_addr=0', 'rkey=1', 'swap=1'],
                 ['post', 'send', '0x100', 'lkey=1', 'length=1', 'inline=maybe'],
                 ['mr', 'reg', '4K', 'socket=x']):
        expect(sock, args, 2, what='usage: ' + ' '.join(args))
    r = expect(sock, ['mr', 'reg'], 2, err='usage: rocectl mr reg <size>')
    expect(None, ['-h'], 0, out='usage: rocectl')
    expect(None, ['-V'], 0, out='control protocol 1')
    r = expect(None, ['help'], 0, out='qp connect')
    for words in ('status', 'port show', 'mr reg', 'mr dereg', 'mr show', 'mr fill', 'mr dump',
                  'mr digest', 'qp create', 'qp connect', 'qp show', 'qp destroy', 'post write',
                  'post read', 'post send', 'post cas', 'post faa', 'post recv', 'cq poll',
                  'stats', 'counters', 'shutdown', 'perf'):
        check(words in r.stdout, f"help lists {words}")
    # perf: help for it, and --help on stdout with exit 0, as perftest's tools do.
    expect(None, ['help', 'perf'], 0, out='usage: rocectl perf')
    expect(None, ['perf', '--help'], 0, out='usage: rocectl perf')
    expect(None, ['perf', '-h'], 0, out='usage: rocectl perf')
    expect(None, ['help', 'qp', 'connect'], 0, out='remote.psn')
    expect(None, ['help', 'post'], 0, out='post faa')


def test_commands(sock):
    r = expect(sock, ['status'], 0, out='classifier')
    check(r.stdout.splitlines()[0].startswith('version'), 'status is name/value lines')
    j, rc = jrun(sock, 'status')
    check(rc == 0 and j['ok'] and j['id'] == 1 and j['workers'] == 2, f'status {j}')
    r = expect(sock, ['port', 'show'], 0, out='net_mock0')
    check(r.stdout.split()[0] == 'port', 'port show is a table')

    j, rc = jrun(sock, 'mr', 'reg', '64K', 'access=local_write,remote_read')
    mr = j.get('mr', {})
    check(rc == 0 and mr.get('length') == 65536 and
          mr.get('access') == ['local_write', 'remote_read'], f'mr reg {j}')
    rkey = hex(mr.get('rkey', 0))
    r = expect(sock, ['mr', 'reg', '4096'], 0, out='rkey')
    r = expect(sock, ['mr', 'show'], 0)
    lines = r.stdout.splitlines()
    check(len(lines) == 3 and 'rkey' in lines[0] and rkey in lines[1], f'mr show:\n{r.stdout}')
    expect(sock, ['mr', 'show', '0x999'], 1, err='ENOENT')

    expect(sock, ['mr', 'fill', rkey, 'inc'], 0)
    r = expect(sock, ['mr', 'dump', rkey, 'offset=16', 'length=32'], 0)
    check(r.stdout.startswith('00000010  10 11 12 13 14 15 16 17  18 19'), f'dump:\n{r.stdout}')
    j, _ = jrun(sock, 'mr', 'digest', rkey)
    want = zlib.crc32(bytes(range(256)) * 256)
    check(j.get('crc32') == f'0x{want:08x}', f"digest {j.get('crc32')} want {want:08x}")
    expect(sock, ['mr', 'fill', rkey, 'random:42', 'offset=100', 'length=1000'], 0)
    j, _ = jrun(sock, 'mr', 'digest', rkey, 'offset=100', 'length=1000')
    want = zlib.crc32(random_pattern(42, 1000))
    check(j.get('crc32') == f'0x{want:08x}', 'random fill follows the documented generator')
    j, rc = jrun(sock, 'mr', 'dump', rkey, 'length=4097')
    check(rc == 1 and j['error']['code'] == 'EINVAL', f'dump too long {j}')
    expect(sock, ['mr', 'fill', rkey, 'stripes'], 1, err='EINVAL')

    j, _ = jrun(sock, 'qp', 'create', 'sq_depth=64')
    qpn = hex(j['qp']['qpn'])
    check(j['qp']['connected'] is False and 'psn' in j['qp'], 'qp create')
    mac = 'remote.mac=02:00:00:00:00:09'
    expect(sock, ['qp', 'connect', qpn, '0x222', '0x10', '192.0.2.2', mac, 'mtu=1000'], 1,
           err='mtu')
    j, rc = jrun(sock, 'qp', 'connect', qpn, '0x222', '0x10', '192.0.2.2', mac, 'mtu=4096',
                 'dscp=26', 'access=remote_write')
    check(rc == 0 and j['qp']['connected'] and j['qp']['remote']['qpn'] == 0x222 and
          j['qp']['remote']['mac'] == '02:00:00:00:00:09', f'qp connect {j}')
    expect(sock, ['qp', 'connect', qpn, '0x222', '0x10', '192.0.2.2', mac], 1,
           err='EBUSY')
    expect(sock, ['qp', 'connect', qpn, '0x222', '0x10', 'not-an-ip', mac], 1,
           err='remote.ip')
    j, _ = jrun(sock, 'qp', 'create')
    j, rc = jrun(sock, 'qp', 'connect', hex(j['qp']['qpn']), '0x223', '0', '192.0.2.3')
    check(rc == 0 and j['qp']['remote']['mac'] == '02:00:00:00:00:02', f'MAC by "ARP" {j}')
    expect(sock, ['qp', 'destroy', hex(j['qp']['qpn'])], 0)
    r = expect(sock, ['qp', 'show'], 0, out='RTS')
    check('remote.qpn' in r.stdout.splitlines()[0] and '0x222' in r.stdout, 'qp show table')

    j, rc = jrun(sock, 'post', 'write', qpn, f'lkey={rkey}', 'length=64', 'remote_addr=0x1000',
                 'rkey=0x99', 'count=3', 'imm=5')
    check(rc == 0 and j['posted'] == 3, f'post write {j}')
    j, _ = jrun(sock, 'cq', 'poll', qpn, 'max=2')
    check([w['wr_id'] for w in j['wc']] == [0, 1] and j['wc'][0]['imm'] == 5 and
          j['wc'][0]['opcode'] == 'write' and j['wc'][0]['status_str'] == 'success',
          f'cq poll {j}')
    r = expect(sock, ['cq', 'poll', qpn], 0, out='write')
    check(r.stdout.split()[0] == 'wr_id' and len(r.stdout.splitlines()) == 2, 'wc table')
    expect(sock, ['cq', 'poll', qpn], 0, out='no wc')
    j, rc = jrun(sock, 'post', 'cas', qpn, f'lkey={rkey}', 'remote_addr=0x1000', 'rkey=1',
                 'compare=0xffffffffffffffff', 'swap=1')
    check(rc == 0 and j['posted'] == 1, f'cas with a 64-bit operand {j}')
    expect(sock, ['post', 'recv', qpn, f'lkey={rkey}', 'count=1000'], 1, err='"count"')
    for want in (100, 28):
        j, rc = jrun(sock, 'post', 'recv', qpn, f'lkey={rkey}', 'count=100')
        check(rc == 0 and j['posted'] == want, f'post recv: posted {j} want {want}')
    expect(sock, ['post', 'recv', qpn, f'lkey={rkey}'], 1, err='ENOMEM')
    expect(sock, ['post', 'faa', qpn, f'lkey={rkey}', 'remote_addr=0', 'rkey=1', 'add=1',
                  'length=4'], 1, err='8 bytes')

    expect(sock, ['job', 'start', qpn, f'lkey={rkey}', 'remote_addr=0x1000', 'rkey=0x99',
                  'op=read'], 0)
    expect(sock, ['job', 'show', qpn], 0, out='msg_rate')
    expect(sock, ['job', 'stop', qpn], 0)
    expect(sock, ['job', 'stop', qpn], 1, err='ENOENT')
    expect(sock, ['post', 'send', '0x999', 'lkey=1', 'length=1'], 1, err='ENOENT')
    expect(sock, ['qp', 'destroy', qpn], 0)
    expect(sock, ['qp', 'destroy', qpn], 1, err='ENOENT')
    expect(sock, ['mr', 'dereg', rkey], 0)
    expect(sock, ['mr', 'dereg', rkey], 1, err=f'ENOENT')

    expect(sock, ['counters'], 0, out='TX_PKTS')
    expect(sock, ['counters', 'worker=1'], 0, out='worker')
    expect(sock, ['counters', 'qpn=0x100', 'port=0'], 1, err='EINVAL')
    j, rc = jrun(sock, 'counters', 'port=0')
    check(rc == 0 and j['scope'] == 'port', 'counters port')
    # Default output: aligned "NAME value" lines, zeros included, no descriptions.
    r = expect(sock, ['counters'], 0, out='NAK_SEQ_TX')
    lines = r.stdout.splitlines()
    check(len(lines) == 5 and all(len(l.split()) == 2 for l in lines) and
          lines[0].split() == ['TX_PKTS', '10'] and 'what' not in r.stdout,
          f'counters default lines:\n{r.stdout}')
    r = expect(sock, ['counters', '--nonzero'], 0, out='TX_PKTS')
    check('NAK_SEQ_TX' not in r.stdout and 'TIMEOUTS' not in r.stdout and 'RX_PKTS' in r.stdout,
          f'counters --nonzero leaves zeros out:\n{r.stdout}')
    r = expect(sock, ['counters', '--describe'], 0, out='what TX_PKTS counts')
    check(all(l.split()[2:4] == ['what', l.split()[0]] for l in r.stdout.splitlines()),
          f'counters --describe: NAME VALUE DESCRIPTION lines:\n{r.stdout}')
    r = expect(sock, ['counters', 'worker=1', '--describe', '--nonzero'], 0,
               out='what RX_PKTS counts')
    check(r.stdout.startswith('scope') and 'TIMEOUTS' not in r.stdout,
          f'counters worker=1 --describe --nonzero:\n{r.stdout}')
    j, rc = jrun(sock, 'counters', '--nonzero', '--describe')
    check(rc == 0 and 'NAK_SEQ_TX' not in j['counters'] and
          j['descriptions'].keys() == j['counters'].keys(), f'counters --json --describe {j}')
    j, rc = jrun(sock, 'counters', 'nonzero=false')
    check(rc == 0 and 'NAK_SEQ_TX' in j['counters'] and 'descriptions' not in j,
          'counters nonzero=false')
    expect(sock, ['counters', '--nonzero', '--nonzero'], 2, err='given twice')
    expect(sock, ['status', '--nonzero'], 2, err='unknown option')
    expect(None, ['help', 'counters'], 0, out='--describe')
    j, rc = jrun(sock, 'mr', 'dereg', '0x999')
    check(rc == 1 and j['ok'] is False and j['error']['code'] == 'ENOENT', '--json on error')
    j, rc = jrun(sock, 'call', 'mr.show', '{"rkey": 1}')
    check(rc == 1 and j['error']['code'] == 'ENOENT', 'call with JSON arguments')
    j, rc = jrun(sock, 'call', 'no.such')
    check(rc == 1 and j['error']['code'] == 'ENOTSUP', 'unknown command from the daemon')

    r = expect(sock, ['stats', '--watch', '0.1', '--count', '2'], 0)
    check(r.stdout.count('stats every 0.1s') == 2 and r.stdout.count('tx_bytes') == 2,
          f'stats --watch:\n{r.stdout}')
    r = run(sock, '--json', 'stats', '--watch=0.1', '--count=3')
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 3 and
          all(json.loads(x)['ok'] for x in lines), f'--json --watch:\n{r.stdout}')
    p = subprocess.Popen([ROCECTL, '-s', sock, 'stats', '--watch', '0.1'],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    procs.append(p)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    check(p.wait(timeout=5) == 0, 'stats --watch stops on ^C with 0')

    env = dict(os.environ, ROCECTL_SOCKET=sock)
    r = run(None, 'status', env=env)
    check(r.returncode == 0, 'ROCECTL_SOCKET')

    t = time.monotonic()
    expect(sock, ['--timeout', '100', 'call', 'mock.sleep', '{"ms":600}'], 3, err='no reply')
    check(time.monotonic() - t < 0.55, 'timeout is honoured')
    expect(sock, ['--timeout', '2000', 'status'], 0)


def test_shell(sock, tmp):
    r = run(sock, stdin='status\n# a comment\n\nmr show\nquit\nstatus\n')
    check(r.returncode == 0 and 'classifier' in r.stdout and r.stdout.count('version') == 1,
          f'piped shell:\n{r.stdout}{r.stderr}')
    r = run(sock, stdin='mr show 0x999\n')
    check(r.returncode == 1 and 'ENOENT' in r.stderr, 'piped shell: last status')
    r = run(sock, stdin='bogus\nstatus\n')
    check(r.returncode == 0 and 'unknown command' in r.stderr, 'piped shell goes on')
    r = run(sock, stdin='mr "unterminated\n')
    check(r.returncode == 2, 'unmatched quote')
    r = run(sock, stdin='call mr.show \'{"rkey": 1}\'\n')
    check(r.returncode == 1 and 'ENOENT' in r.stderr, 'quoted JSON in the shell')

    # On a terminal: libedit, Tab completion, history.
    pid, fd = pty.fork()
    if pid == 0:
        os.environ['HOME'] = tmp
        os.environ['TERM'] = 'dumb'
        os.execv(ROCECTL, [ROCECTL, '-s', sock])
    out = b''

    def read_until(token, secs=5):
        nonlocal out
        end = time.monotonic() + secs
        while token not in out and time.monotonic() < end:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break
        return token in out

    ok = read_until(b'rocectl> ')
    os.write(fd, b'stat\t')
    ok &= read_until(b'status  stats')
    os.write(fd, b'u\t\r')
    ok &= read_until(b'classifier')
    os.write(fd, b'mr re\t64K\r')
    ok &= read_until(b'rkey')
    os.write(fd, b'qp con\t\t')
    ok &= read_until(b'remote.qpn=')
    os.write(fd, b'\x15quit\r')
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    check(ok and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
          f'pty shell with completion: {out[-600:]!r}')
    hist = os.path.join(tmp, '.rocectl_history')
    check(os.path.exists(hist) and 'status' in open(hist, errors='replace').read(),
          'history saved')


def test_limits(tmp):
    sock = os.path.join(tmp, 'one.sock')
    mock = start_mock(sock, '--max-clients', '1', '--max-line', '4096')
    holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    holder.connect(sock)
    holder.sendall(b'{"v":1,"id":1,"cmd":"status"}\n')
    holder.settimeout(5)
    check(b'"ok":true' in holder.recv(65536), 'holder served')
    expect(sock, ['status'], 3, err='EBUSY')
    holder.close()
    time.sleep(0.2)
    expect(sock, ['status'], 0)
    expect(sock, ['call', 'status', json.dumps({'pad': 'x' * 5000})], 1, err='E2BIG')
    expect(sock, ['status'], 0, what='served after E2BIG')
    mock.terminate()
    check(mock.wait(timeout=5) == 0, 'mock stops on SIGTERM')


def main():
    global procs
    with tempfile.TemporaryDirectory(prefix='roce-rocectl-') as tmp:
        sock = os.path.join(tmp, 'roced.sock')
        try:
            mock = start_mock(sock)
            mode = stat.S_IMODE(os.stat(sock).st_mode)
            check(mode == 0o660, f'socket mode {mode:o}')
            t = time.monotonic()
            test_usage(sock, tmp)
            test_commands(sock)
            test_shell(sock, tmp)
            test_limits(tmp)
            expect(sock, ['shutdown'], 0)
            check(mock.wait(timeout=5) == 0, 'mock exits after shutdown')
            check(not os.path.exists(sock), 'socket removed on shutdown')
            expect(sock, ['status'], 3, what='status after shutdown')
            print(f'{checks} checks in {time.monotonic() - t:.2f} s')
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    print(f"rocectl: {checks - failures}/{checks} checks passed")
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
