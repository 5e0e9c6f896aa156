#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocectl end to end against a real roced: exit codes (0 ok, 1 error reply, 2 usage, 3 no
daemon / timeout / refused), --json, human tables, --watch, the interactive prompt (piped and
on a pty, with Tab completion), `call`, the control server's limits (64 clients, 64 KiB lines),
timeouts (a slow request, a stopped daemon), shutdown and SIGTERM; and that rocectl's command
table and roced's (its `help` reply) name the same commands with the same arguments.

Two roced over memif (rocedp_it.Pair): A is the daemon under test, B its peer, so that posts,
completions and jobs move real packets. Every process started here is stopped here.

usage: test_rocectl.py BUILD_DIR
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
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'integration'))
from rocedp_it import Failure, Pair, MR_ALL, QP_ALL  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else 'build'
ROCECTL = os.path.join(BUILD, 'app/rocectl')
# roced commands rocectl has no subcommand for, on purpose: they are reached with `call`.
CALL_ONLY = {'help'}
# rocectl subcommands that send no request of roced's table.
CLIENT_ONLY = {'help', 'perf', 'rping', 'call'}

failures = 0
checks = 0
procs = []


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL {what}", file=sys.stderr, flush=True)
    return cond


def run(sock, *args, stdin=None, env=None, timeout=15):
    cmd = [ROCECTL] + (['-s', sock] if sock else []) + [str(a) for a in args]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout,
                          env=env)


def expect(sock, args, code, out=None, err=None, what=None):
    r = run(sock, *args)
    what = what or ' '.join(map(str, args))[:200]
    ok = check(r.returncode == code, f"{what}: exit {r.returncode}, want {code}\n"
               f"stdout: {r.stdout}\nstderr: {r.stderr}")
    if out is not None:
        ok &= check(out in r.stdout, f"{what}: stdout lacks {out!r}:\n{r.stdout}")
    if err is not None:
        ok &= check(err in r.stderr, f"{what}: stderr lacks {err!r}:\n{r.stderr}")
    return r


def jrun(sock, *args):
    """--json: one reply line, checked for the envelope; returns the object and exit code."""
    r = run(sock, '--json', *args)
    lines = r.stdout.splitlines()
    check(len(lines) == 1, f"{args}: --json printed {len(lines)} lines: {r.stdout}{r.stderr}")
    try:
        j = json.loads(lines[0])
    except (ValueError, IndexError):
        check(False, f"{args}: --json output is not JSON: {r.stdout!r}")
        return {}, r.returncode
    check(j.get('v') == 1 and isinstance(j.get('id'), int) and isinstance(j.get('ok'), bool),
          f"{args}: envelope {j}")
    return j, r.returncode


def poll_wc(sock, qpn, n, timeout=5, max_=None):
    """Completions of a QP until n arrived (at most max_ per poll)."""
    got, end = [], time.monotonic() + timeout
    while len(got) < n and time.monotonic() < end:
        j, _ = jrun(sock, 'cq', 'poll', qpn, *([f'max={max_}'] if max_ else []))
        got += j.get('wc', [])
        if len(got) < n:
            time.sleep(0.02)
    return got


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
    expect(sock, ['mr', 'reg'], 2, err='usage: rocectl mr reg <size>')
    expect(None, ['-h'], 0, out='usage: rocectl')
    expect(None, ['-V'], 0, out='control protocol 1')
    r = expect(None, ['help'], 0, out='qp connect')
    for words in ('status', 'port show', 'mr reg', 'mr dereg', 'mr show', 'mr fill', 'mr dump',
                  'mr write', 'rping',
                  'mr digest', 'qp create', 'qp connect', 'qp show', 'qp destroy', 'post write',
                  'post read', 'post send', 'post cas', 'post faa', 'post recv', 'cq poll',
                  'stats', 'counters', 'shutdown', 'perf'):
        check(words in r.stdout, f"help lists {words}")
    # perf: help for it, and --help on stdout with exit 0, as perftest's tools do.
    expect(None, ['help', 'perf'], 0, out='usage: rocectl perf')
    expect(None, ['perf', '--help'], 0, out='usage: rocectl perf')
    expect(None, ['perf', '-h'], 0, out='usage: rocectl perf')
    expect(None, ['help', 'rping'], 0, out='rocectl rping -s')
    expect(None, ['rping', '--help'], 0, out='rocectl rping -c')
    expect(None, ['help', 'qp', 'connect'], 0, out='remote.psn')
    expect(None, ['help', 'post'], 0, out='post faa')
    # every command has its help, as "help COMMAND" and as "COMMAND --help", on stdout
    words = sorted({line.split()[0] for line in r.stdout.splitlines()[1:] if line.strip()})
    check(len(words) >= 15, f"help lists the commands: {words}")
    for w in words:
        expect(None, ['help', w], 0, what=f'help {w}')
        if w not in ('help', 'perf'):
            expect(None, [w, '--help'], 0, out=w, what=f'{w} --help')
    expect(None, ['qp', 'connect', '--help'], 0, out='remote.psn')
    expect(None, ['help', 'help'], 0, out='help COMMAND')
    expect(None, ['impair', 'set', '--help'], 0, out='KEY=VALUE')


def rocectl_table():
    """rocectl's subcommands from its help (generated from its table): {request: (words,
    {argument names, dotted ones by their first part})}."""
    r = run(None, 'help')
    table = {}
    for line in r.stdout.splitlines()[1:]:
        parts = line.split()
        # "  mr reg       allocate and ..." : the words are the first one or two.
        for n in (2, 1):
            words = parts[:n]
            if not words or (n == 1 and words[0] in CLIENT_ONLY):
                continue
            d = run(None, 'help', *words)
            req = [x.split()[1] for x in d.stdout.splitlines() if x.startswith('request: ')]
            if d.returncode == 0 and d.stdout.startswith(' '.join(words) + ':') and req:
                args = set()
                for x in d.stdout.splitlines():
                    # rocectl's own options (--watch, --count, "rocectl: ..." ones) are
                    # not sent.
                    if x.startswith('  ') and not x.startswith('  --watch') and \
                            not x.startswith('  --count') and x.split()[1:2] != ['rocectl:']:
                        args.add(x.split()[0].lstrip('-').split('.')[0])
                table[req[0]] = (' '.join(words), args)
                break
    return table


def test_tables(sock):
    """roced's command table (its help reply) and rocectl's name the same commands and the
    same arguments, so that the two cannot drift apart."""
    j, rc = jrun(sock, 'call', 'help')
    check(rc == 0 and j.get('ok'), f'call help: {j}')
    daemon = {c['name']: {a.split('.')[0] for a in c['args']} for c in j.get('commands', [])}
    check(len(daemon) > 30, f'help lists the real table: {sorted(daemon)}')
    client = rocectl_table()
    check(len(client) > 30, f'rocectl help lists its table: {sorted(client)}')
    missing = sorted(set(daemon) - set(client) - CALL_ONLY)
    extra = sorted(set(client) - set(daemon))
    check(not missing, f"roced commands without a rocectl subcommand (add one to "
          f"app/rocectl/cmds.c, or to CALL_ONLY here if `call` is meant): {missing}")
    check(not extra, f"rocectl subcommands roced does not know: "
          f"{[client[c][0] + ' (' + c + ')' for c in extra]}")
    for name in sorted(set(daemon) & set(client)):
        words, args = client[name]
        check(args == daemon[name], f"{name}: rocectl {words} has arguments "
              f"{sorted(args - daemon[name])} roced lacks, roced has "
              f"{sorted(daemon[name] - args)} rocectl lacks")
    for name in sorted(CALL_ONLY & set(daemon)):
        j, rc = jrun(sock, 'call', name)
        check(rc == 0 and j['ok'], f'call {name}: {j}')


def test_commands(pair, sock):
    a, b = pair.a, pair.b
    r = expect(sock, ['status'], 0, out='classifier')
    check(r.stdout.splitlines()[0].startswith('version'), 'status is name/value lines')
    j, rc = jrun(sock, 'status')
    check(rc == 0 and j['ok'] and j['id'] == 1 and j['workers'] == 1 and j['ports'] == 1 and
          j['qps'] == 0 and j['mrs'] == 0, f'status {j}')
    r = expect(sock, ['port', 'show'], 0, out='net_memif0')
    check(r.stdout.split()[0] == 'port', 'port show is a table')
    bport = b.ctl('port', 'show')['ports'][0]
    bmac = bport['mac']

    # MRs: exactly the rights asked for, local_write alone by default, in PD 0 (rocectl's).
    j, rc = jrun(sock, 'mr', 'reg', '64K', 'access=local_write,remote_read')
    mr = j.get('mr', {})
    check(rc == 0 and mr.get('length') == 65536 and mr.get('pd') == 0 and
          mr.get('access') == ['local_write', 'remote_read'], f'mr reg {j}')
    rkey = hex(mr.get('rkey', 0))
    expect(sock, ['mr', 'reg', '4096'], 0, out='rkey')
    j, rc = jrun(sock, 'mr', 'show')
    small = [m for m in j.get('mrs', []) if m['length'] == 4096]
    check(rc == 0 and len(small) == 1 and small[0]['access'] == ['local_write'] and
          small[0]['pd'] == 0, f'mr reg default access and PD {j}')
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
    expect(sock, ['mr', 'fill', rkey, 'inc'], 0)
    j, rc = jrun(sock, 'mr', 'dump', rkey, 'length=4097')
    check(rc == 1 and j['error']['code'] == 'EINVAL' and 'length' in j['error']['message'],
          f'dump too long {j}')
    expect(sock, ['mr', 'fill', rkey, 'stripes'], 1, err='EINVAL')
    # mr write: bytes land where asked, the rest untouched; refusals
    expect(sock, ['mr', 'write', rkey, '00ffA5', 'offset=65533'], 0)
    j, _ = jrun(sock, 'mr', 'dump', rkey, 'offset=65530', 'length=6')
    check(j.get('hex') == 'fafbfc00ffa5', f'mr write: 3 bytes at the end of the MR {j}')
    j, _ = jrun(sock, 'mr', 'write', rkey, '11' * 4096)
    check(j.get('length') == 4096, f'mr write of 4096 bytes {j.get("length")}')
    j, _ = jrun(sock, 'mr', 'digest', rkey, 'length=4096')
    check(j.get('crc32') == f'0x{zlib.crc32(bytes([0x11]) * 4096):08x}', 'mr write: 4096 bytes')
    for bad in (['abc'], ['zz'], ['0011', 'offset=65535'], ['11' * 4097]):
        expect(sock, ['mr', 'write', rkey, *bad], 1, err='EINVAL', what=f'mr write {bad}')
    expect(sock, ['mr', 'write', rkey, '00', 'length=1'], 2, what='mr write takes no length')
    expect(sock, ['call', 'mr.write', f'{{"rkey":{int(rkey, 16)},"hex":"00","length":1}}'], 1,
           err='EINVAL', what='the daemon refuses a length')
    expect(sock, ['mr', 'write', '0x999', '00'], 1, err='ENOENT')
    expect(sock, ['mr', 'fill', rkey, 'inc'], 0)

    # The peer's side: an MR and a QP granting everything.
    mb = b.ctl('mr', 'reg', '64K', MR_ALL)['mr']
    qb = b.ctl('qp', 'create', QP_ALL)['qp']

    # QPs: no remote rights unless asked, PD 0.
    j, _ = jrun(sock, 'qp', 'create', 'sq_depth=64')
    qp = j.get('qp', {})
    qpn = hex(qp.get('qpn', 0))
    check(qp.get('connected') is False and 'psn' in qp and qp.get('access') == [] and
          qp.get('pd') == 0, f'qp create {j}')
    peer = [hex(qb['qpn']), hex(qb['psn']), bport['ip']]
    expect(sock, ['qp', 'connect', qpn, *peer, 'mtu=1000'], 1, err='mtu')
    j, rc = jrun(sock, 'qp', 'connect', qpn, *peer, f'remote.mac={bmac.lower()}', 'mtu=4096',
                 'dscp=26', 'access=remote_write')
    q = j.get('qp', {})
    check(rc == 0 and q.get('connected') and q['remote']['qpn'] == qb['qpn'] and
          q['remote']['mac'].lower() == bmac.lower() and q['access'] == ['remote_write'],
          f'qp connect {j}')
    b.ctl('qp', 'connect', qb['qpn'], qp['qpn'], qp['psn'], qp['ip'], 'mtu=4096')
    expect(sock, ['qp', 'connect', qpn, *peer], 1, err='EBUSY')
    expect(sock, ['qp', 'connect', qpn, peer[0], peer[1], 'not-an-ip'], 1, err='remote.ip')
    # Another QP: its peer's MAC by ARP; an address nobody answers for fails after the
    # resolution's retries (a genuinely slow request: rocectl's --timeout cuts it short).
    j, _ = jrun(sock, 'qp', 'create')
    qpn2 = hex(j['qp']['qpn'])
    nobody = bport['ip'].rsplit('.', 1)[0] + '.77'
    t = time.monotonic()
    expect(sock, ['--timeout', '300', 'qp', 'connect', qpn2, '0x222', '0', nobody], 3,
           err='no reply')
    check(time.monotonic() - t < 1.5, f'timeout is honoured ({time.monotonic() - t:.2f} s)')
    expect(sock, ['--timeout', '10000', 'status'], 0, what='answers after the slow request')
    expect(sock, ['qp', 'connect', qpn2, '0x222', '0', nobody], 1, err='EHOSTUNREACH')
    j, rc = jrun(sock, 'qp', 'connect', qpn2, '0x222', '0', bport['ip'])
    check(rc == 0 and j['qp']['remote']['mac'].lower() == bmac.lower(), f'MAC by ARP {j}')
    expect(sock, ['qp', 'destroy', qpn2], 0)
    r = expect(sock, ['qp', 'show'], 0, out='RTS')
    check('remote.qpn' in r.stdout.splitlines()[0] and hex(qb['qpn']) in r.stdout,
          f'qp show table:\n{r.stdout}')

    # Traffic: WRITE with immediate into B's MR, completions on both sides.
    b.ctl('post', 'recv', qb['qpn'], f"lkey={mb['rkey']}", 'count=3')
    remote = [f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}"]
    j, rc = jrun(sock, 'post', 'write', qpn, f'lkey={rkey}', 'length=64', *remote, 'count=3',
                 'imm=5')
    check(rc == 0 and j['posted'] == 3, f'post write {j}')
    time.sleep(0.3)
    j, _ = jrun(sock, 'cq', 'poll', qpn, 'max=2')
    wc = j.get('wc', [])
    check([w['wr_id'] for w in wc] == [0, 1] and all(
        w['opcode'] == 'write' and w['status_str'] == 'success' and w['byte_len'] == 64
        for w in wc), f'cq poll {j}')
    r = expect(sock, ['cq', 'poll', qpn], 0, out='write')
    check(r.stdout.split()[0] == 'wr_id' and len(r.stdout.splitlines()) == 2,
          f'wc table:\n{r.stdout}')
    expect(sock, ['cq', 'poll', qpn], 0, out='no wc')
    got = b.ctl('cq', 'poll', qb['qpn'])['wc']
    check(len(got) == 3 and all(w.get('imm') == 5 and w['status_str'] == 'success'
                                for w in got), f'the peer got the immediates: {got}')
    want = zlib.crc32(bytes(range(64)))
    check(b.ctl('mr', 'digest', mb['rkey'], 'length=64')['crc32'] == f'0x{want:08x}',
          'the bytes were written')
    j, rc = jrun(sock, 'post', 'cas', qpn, f'lkey={rkey}', *remote,
                 'compare=0xffffffffffffffff', 'swap=1')
    check(rc == 0 and j['posted'] == 1, f'cas with a 64-bit operand {j}')
    wc = poll_wc(sock, qpn, 1)
    check(len(wc) == 1 and wc[0]['opcode'] == 'cas' and wc[0]['status_str'] == 'success',
          f'cas completion {wc}')
    expect(sock, ['post', 'recv', qpn, f'lkey={rkey}', 'count=1000'], 1, err='"count"')
    for want in (100, 28):
        j, rc = jrun(sock, 'post', 'recv', qpn, f'lkey={rkey}', 'count=100')
        check(rc == 0 and j['posted'] == want, f'post recv: posted {j} want {want}')
    expect(sock, ['post', 'recv', qpn, f'lkey={rkey}'], 1, err='ENOMEM')
    expect(sock, ['post', 'faa', qpn, f'lkey={rkey}', 'remote_addr=0', 'rkey=1', 'add=1',
                  'length=4'], 1, err='EINVAL')

    expect(sock, ['job', 'stop', qpn], 1, err='ENOENT', what='job stop without a job')
    expect(sock, ['job', 'start', qpn, f'lkey={rkey}', *remote, 'op=read'], 0)
    time.sleep(0.2)
    expect(sock, ['job', 'show', qpn], 0, out='msg_rate')
    expect(sock, ['job', 'stop', qpn], 0)
    end = time.monotonic() + 3
    while True:
        # The job ends once what it has in flight completes.
        j, rc = jrun(sock, 'job', 'show', qpn)
        job = j.get('job', {})
        if job.get('running') is not True or time.monotonic() > end:
            break
        time.sleep(0.05)
    check(rc == 0 and job.get('running') is False and job.get('completed', 0) > 0 and
          job.get('first_error') == 'none', f'the READ job ran: {j}')
    expect(sock, ['post', 'send', '0x999', 'lkey=1', 'length=1'], 1, err='ENOENT')
    expect(sock, ['qp', 'destroy', qpn], 0)
    expect(sock, ['qp', 'destroy', qpn], 1, err='ENOENT')
    expect(sock, ['mr', 'dereg', rkey], 0)
    expect(sock, ['mr', 'dereg', rkey], 1, err='ENOENT')

    test_counters(sock)

    # impair set: the spec's keys as arguments of their own, with a percent
    expect(sock, ['impair', 'set', 'loss=1%', 'dup=0.5%', 'dir=tx'], 0, out='loss')
    j, rc = jrun(sock, 'impair', 'show', 'dir=tx')
    spec = ' '.join(e.get('spec', '') for e in j.get('impair', []) if e.get('active'))
    check(rc == 0 and 'loss' in spec and 'dup' in spec, f'impair set loss=1% dup=0.5%: {j}')
    expect(sock, ['impair', 'set', 'loss=2%', 'spec=dup=1%'], 0)
    expect(sock, ['impair', 'set', 'lost=1%'], 1, err='lost')
    expect(sock, ['impair', 'clear'], 0)

    j, rc = jrun(sock, 'mr', 'dereg', '0x999')
    check(rc == 1 and j['ok'] is False and j['error']['code'] == 'ENOENT', '--json on error')
    j, rc = jrun(sock, 'call', 'mr.show', '{"rkey": 1}')
    check(rc == 1 and j['error']['code'] == 'ENOENT', 'call with JSON arguments')
    j, rc = jrun(sock, 'call', 'no.such')
    check(rc == 1 and j['error']['code'] == 'ENOTSUP', 'unknown command from the daemon')
    j, rc = jrun(sock, 'call', 'status', '{"bogus": 1}')
    check(rc == 1 and j['error']['code'] == 'EINVAL', 'call: an unknown argument')

    r = expect(sock, ['stats', '--watch', '0.1', '--count', '2'], 0)
    check(r.stdout.count('stats every 0.1s') == 2 and r.stdout.count('TX-bytes') == 2,
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

    # No answer at all: the daemon stopped (SIGSTOP) for the length of the check.
    os.killpg(a.proc.pid, signal.SIGSTOP)
    try:
        t = time.monotonic()
        expect(sock, ['--timeout', '100', 'status'], 3, err='no reply')
        check(time.monotonic() - t < 1.0, 'timeout is honoured by a stopped daemon')
    finally:
        os.killpg(a.proc.pid, signal.SIGCONT)
    expect(sock, ['--timeout', '2000', 'status'], 0, what='status after SIGCONT')


def test_counters(sock):
    expect(sock, ['counters'], 0, out='TX_PKTS')
    expect(sock, ['counters', 'worker=0'], 0, out='worker')
    expect(sock, ['counters', 'worker=7'], 1, err='ENOENT')
    expect(sock, ['counters', 'qpn=0x100', 'port=0'], 1, err='EINVAL')
    j, rc = jrun(sock, 'counters', 'port=0')
    check(rc == 0 and j.get('scope') == 'port', f'counters port {j}')
    # Default output: aligned "NAME value" lines, zeros included, no descriptions.
    r = expect(sock, ['counters'], 0, out='NAK_SEQ_TX')
    lines = r.stdout.splitlines()
    check(len(lines) > 50 and all(len(x.split()) == 2 and x.split()[1].isdigit()
                                  for x in lines) and ' 0' in r.stdout,
          f'counters default lines:\n{r.stdout}')
    r = expect(sock, ['counters', '--nonzero'], 0, out='TX_PKTS')
    nz = r.stdout.splitlines()
    check(0 < len(nz) < len(lines) and all(x.split()[1] != '0' for x in nz) and
          'NAK_SEQ_TX' not in r.stdout, f'counters --nonzero leaves zeros out:\n{r.stdout}')
    j, _ = jrun(sock, 'counters', '--describe')
    desc = j.get('descriptions', {})
    r = expect(sock, ['counters', '--describe'], 0, out=desc.get('TX_PKTS', 'TX_PKTS'))
    check(len(desc) == len(j.get('counters', {})) > 50 and
          all(len(x.split()) >= 3 and ' '.join(x.split()[2:]) == desc.get(x.split()[0])
              for x in r.stdout.splitlines()),
          f'counters --describe: NAME VALUE DESCRIPTION lines:\n{r.stdout}')
    r = expect(sock, ['counters', 'worker=0', '--describe', '--nonzero'], 0,
               out=desc.get('RX_PKTS', 'RX_PKTS'))
    check(r.stdout.startswith('scope') and 'NAK_SEQ_TX' not in r.stdout,
          f'counters worker=0 --describe --nonzero:\n{r.stdout}')
    j, rc = jrun(sock, 'counters', '--nonzero', '--describe')
    check(rc == 0 and 'NAK_SEQ_TX' not in j['counters'] and
          all(v != 0 for v in j['counters'].values()) and
          j['descriptions'].keys() == j['counters'].keys(), f'counters --json --describe {j}')
    j, rc = jrun(sock, 'counters', 'nonzero=false')
    check(rc == 0 and 'NAK_SEQ_TX' in j['counters'] and 'descriptions' not in j,
          'counters nonzero=false')
    expect(sock, ['counters', '--nonzero', '--nonzero'], 2, err='given twice')
    expect(sock, ['status', '--nonzero'], 2, err='unknown option')
    expect(None, ['help', 'counters'], 0, out='--describe')


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
    # One connection for the whole shell: an owned PD lives as long as it.
    r = run(sock, stdin='pd create owned=true\npd show\n')
    check(r.returncode == 0 and r.stdout.count('owner') >= 1, f'shell keeps its connection:\n'
          f'{r.stdout}{r.stderr}')
    j, _ = jrun(sock, 'pd', 'show')
    check(all('owner' not in p for p in j.get('pds', [])), f'owned PD gone with the shell {j}')

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

    try:
        ok = read_until(b'rocectl> ')
        # as bash: an ambiguous first Tab beeps, the second lists the choices
        os.write(fd, b'stat\t')
        ok &= read_until(b'\a')
        ok &= check(b'status  stats' not in out, 'one Tab does not list')
        os.write(fd, b'\t')
        ok &= read_until(b'status  stats')
        os.write(fd, b'u\t\r')
        ok &= read_until(b'classifier')
        os.write(fd, b'mr re\t64K\r')
        ok &= read_until(b'rkey')
        os.write(fd, b'qp con\t\t\t')
        ok &= read_until(b'remote.qpn=')
        # the values of an argument, as its help gives them; perf's tests and options
        os.write(fd, b'\x15impair show dir=\t\t')
        ok &= read_until(b'dir=rx  dir=tx  dir=both')
        os.write(fd, b'\x15job start op=wr\t\t')
        ok &= read_until(b'op=write  op=write_imm')
        os.write(fd, b'\x15perf wri\t--la\t')
        ok &= read_until(b'perf write --lat ')
        os.write(fd, b'\x15quit\r')
        end = time.monotonic() + 5
        while time.monotonic() < end:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    check(ok and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
          f'pty shell with completion: {out[-600:]!r}')
    hist = os.path.join(tmp, '.rocectl_history')
    check(os.path.exists(hist) and 'status' in open(hist, errors='replace').read(),
          'history saved')


def test_limits(sock):
    """roced's control server defaults: 64 clients (one more gets EBUSY), 64 KiB lines."""
    holders = []
    try:
        for i in range(64):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(sock)
            holders.append(s)
            s.sendall(b'{"v":1,"id":%d,"cmd":"status"}\n' % i)
            reply = b''
            while not reply.endswith(b'\n'):
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
            if not check(b'"ok":true' in reply, f'holder {i} served: {reply[:200]!r}'):
                break
        expect(sock, ['status'], 3, err='EBUSY', what='client 65')
        holders.pop().close()
        time.sleep(0.2)
        j, rc = jrun(sock, 'status')
        check(rc == 0 and j['ctl']['clients'] == 64 and j['ctl']['rejected'] >= 1,
              f'served with 63 others, the refusal counted: {j.get("ctl")}')
    finally:
        for s in holders:
            s.close()
    time.sleep(0.2)
    j, _ = jrun(sock, 'status')
    check(j.get('ctl', {}).get('clients') == 1, f'holders gone: {j.get("ctl")}')
    expect(sock, ['call', 'status', json.dumps({'pad': 'x' * 65536})], 1, err='E2BIG')
    j, rc = jrun(sock, 'status')
    check(rc == 0 and j['ctl']['oversized'] >= 1, f'served after E2BIG: {j.get("ctl")}')
    # Just under the limit is a request like any other (EINVAL: pad is no argument).
    line = len(json.dumps({'v': 1, 'id': 1, 'cmd': 'status', 'pad': ''},
                          separators=(',', ':')))
    expect(sock, ['call', 'status', json.dumps({'pad': 'x' * (65536 - line - 100)})], 1,
           err='EINVAL', what='a 64 KiB request')


def main():
    if os.geteuid() != 0:
        print('rocectl: skipped [machine]: needs root (roced, DPDK EAL)')
        return 77
    t = time.monotonic()
    try:
        with Pair(BUILD) as pair:
            sock = pair.a.sock
            mode = stat.S_IMODE(os.stat(sock).st_mode)
            check(mode == 0o660, f'socket mode {mode:o}')
            try:
                test_usage(sock, pair.tmp)
                test_tables(sock)
                test_commands(pair, sock)
                test_shell(sock, pair.tmp)
                test_limits(sock)
                expect(sock, ['shutdown'], 0)
                try:
                    rc = pair.a.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    rc = None
                check(rc == 0, f'roced exits 0 after shutdown ({rc})')
                check(not os.path.exists(sock), 'socket removed on shutdown')
                expect(sock, ['status'], 3, what='status after shutdown')
                check(pair.b.stop() == 0, 'roced exits 0 on SIGTERM')
            finally:
                for p in procs:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
                if failures:
                    for d in pair.daemons:
                        print(f"--- {d.name} log ---\n{d.tail()}", file=sys.stderr)
    except Failure as e:
        check(False, f'daemons: {e}')
    print(f"rocectl: {checks - failures}/{checks} checks passed in "
          f"{time.monotonic() - t:.1f} s")
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
