#!/usr/bin/python3
"""rocectl rping (rdma-core's rping through roced's connection manager) between two roced over
memif, as rping runs between two hosts:

- `rocectl rping -s -v` on A, `rocectl rping -c -a 10.0.0.1 -C 100 -V -v` on B: both exit 0,
  B printed the 100 `ping data: rdma-ping-N: ...` lines and A the 100 `server ping data: ...`
  lines rping prints (the text computed here as rping.c makes it), validated by B; B ends with
  `client DISCONNECT EVENT...`, A with `server DISCONNECT EVENT...` and `wait for
  RDMA_READ_ADV state 10`, as rping's server does when its client goes (B sent the DREQ: A's
  capture holds a DREQ from B and A's DREP); the connection parameters in the REQ are rping's
  (responder resources and initiator depth 1, retry counts 7), the RDMA READ and WRITE carried
  SIZE bytes; no drop counter moved; after time wait neither daemon holds a connection,
  listener, QP or MR of rping's.
- -S 4000 (bigger than one mr.write or mr.dump) with -V: data validated.
- a server that stops mid-run (SIGTERM while a client pings for ever): the server disconnects
  (DREQ), the client prints `client DISCONNECT EVENT...` and ends with status 0, as rping's
  client does when its server goes; the server dies of its signal.
- a client to a port nobody listens on: `cma event RDMA_CM_EVENT_REJECTED, error 8` (invalid
  service ID), status 255 as rping's; usage errors 22 as rping's (-S 10: its message).

usage: test_rping.py BUILD_DIR
"""
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair  # noqa: E402

PORT = 7174


def rping_data(ping, size):
    """The string rping's client puts in its start buffer for round @ping (rping.c's
    rping_test_client()): "rdma-ping-%d: ", then the letters from 'A' + ping % 58 on, wrapping
    after 'z', the last byte of @size a NUL."""
    head = f'rdma-ping-{ping}: '
    c, out = 65 + ping % 58, []
    for _ in range(len(head), size - 1):
        out.append(chr(c))
        c = 65 if c >= 122 else c + 1
    return (head + ''.join(out))[:size - 1]


def rocectl_cmd(p, d, *args):
    return [os.path.join(p.build, 'app/rocectl'), '-s', d.sock, *map(str, args)]


def start_server(p, d, *args):
    proc = subprocess.Popen(rocectl_cmd(p, d, 'rping', '-s', *args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    end = time.time() + 10
    while time.time() < end and proc.poll() is None:
        if any(x['port'] == PORT for x in d.ctl('cm', 'show')['listeners']):
            break
        time.sleep(0.05)
    return proc


def leftovers(d):
    """What rping may have left in a daemon: connections, listeners, QPs, MRs."""
    s = d.ctl('cm', 'show')
    return {'conns': s['conns'], 'orphans': s['orphans'], 'listeners': s['listeners'],
            'qps': d.ctl('qp', 'show')['qps'], 'mrs': d.ctl('mr', 'show')['mrs']}


def wait_clean(d, timeout=30):
    end = time.time() + timeout
    while True:
        x = leftovers(d)
        if not any(x.values()) or time.time() > end:
            return x
        time.sleep(0.2)


def drops(d):
    c = d.ctl('counters')['counters']
    return {k: v for k, v in c.items() if (k.startswith('DROP_') or k == 'RX_DROP' or
                                          k == 'UNKNOWN_QP' or k == 'GSI_NO_CM') and v}


def check_capture(t, pcap, size):
    if shutil.which('tshark') is None:
        t(False, 'tshark missing (scripts/install-deps.sh installs it)')
        return
    r = subprocess.run(['tshark', '-r', pcap, '-d', 'udp.port==4791,infiniband', '-T', 'fields',
                        '-e', 'ip.src', '-e', 'infiniband.mad.attributeid', '-e',
                        'infiniband.bth.opcode', '-e', 'infiniband.reth.dmalen', '-e',
                        'infiniband.cm.req.responderres', '-e', 'infiniband.cm.req.initdepth',
                        '-e', 'infiniband.cm.req.retrcount', '-e', 'infiniband.cm.req.rnrretrcount'],
                       capture_output=True, text=True)
    rows = [x.split('\t') for x in r.stdout.splitlines()]
    t(r.returncode == 0 and rows, f'tshark read the capture: {r.returncode} {r.stderr[:300]}')
    mads = [(x[0], int(x[1], 16) if x[1].startswith('0x') else int(x[1])) for x in rows if x[1]]
    t((('10.0.0.2', 0x15) in mads) and (('10.0.0.1', 0x16) in mads) and
      not any(a == 0x15 and ip == '10.0.0.1' for ip, a in mads),
      f'the client sent the DREQ and the server the DREP, as with rping: {mads}')
    req = [x for x in rows if x[1] in ('0x0010', '16')]
    t(len(req) == 1 and [int(v, 0) for v in req[0][4:8]] == [1, 1, 7, 7],
      f"the REQ has rping's responder resources, initiator depth 1, retry counts 7: "
      f"{[x[4:8] for x in req]}")
    # RDMA READ requests (opcode 12) from the server, RDMA WRITE only (10) to the client
    reads = [x for x in rows if x[2] == '12']
    writes = [x for x in rows if x[2] == '10']
    t(len(reads) == 100 and all(x[0] == '10.0.0.1' and x[3] == str(size) for x in reads),
      f'100 RDMA READs of {size} bytes from the server: {len(reads)} {reads[:2]}')
    t(len(writes) == 100 and all(x[0] == '10.0.0.1' and x[3] == str(size) for x in writes),
      f'100 RDMA WRITEs of {size} bytes (strlen + 1) from the server: {len(writes)} {writes[:2]}')


def main():
    t = Checks('rping')
    with Pair(sys.argv[1]) as p:
        a, b = p.a, p.b
        rc = lambda d, *args, **kw: subprocess.run(rocectl_cmd(p, d, 'rping', *args),  # noqa
                                                    capture_output=True, text=True,
                                                    timeout=kw.get('timeout', 120))

        # -- usage, as rping's --
        r = rc(b, '-c', '-a', '10.0.0.1', '-S', '10')
        t(r.returncode == 22 and 'Invalid size 10 (valid range is 23 to 65536)' in r.stderr,
          f'-S 10: rping\'s message, status 22: {r.returncode} {r.stderr}')
        r = rc(b, '-c')
        t(r.returncode == 22 and 'rping -c' in r.stdout, f'-c without -a: usage, 22: '
          f'{r.returncode}')
        r = rc(b, '-x')
        t(r.returncode == 22, f'unknown option: 22: {r.returncode}')

        # -- 100 rounds, validated, both sides verbose --
        pcap = os.path.join(p.tmp, 'a.pcapng')
        a.ctl('capture', 'start', pcap)
        da0, db0 = drops(a), drops(b)
        srv = start_server(p, a, '-v', '-a', '10.0.0.1')
        t0 = time.time()
        cli = rc(b, '-c', '-a', '10.0.0.1', '-C', 100, '-V', '-v')
        secs = time.time() - t0
        try:
            sout, serr = srv.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            srv.kill()
            sout, serr = srv.communicate()
        print(f'rping: 100 rounds of 64 bytes in {secs:.2f} s', flush=True)
        want = [f'ping data: {rping_data(i, 64)}' for i in range(100)]
        t(cli.returncode == 0, f'client exit 0: {cli.returncode} {cli.stderr}')
        t(cli.stdout.splitlines() == want, f'client printed rping\'s 100 lines: '
          f'{cli.stdout.splitlines()[:2]} ... want {want[:2]}')
        t('data mismatch' not in cli.stderr and 'client DISCONNECT EVENT...' in cli.stderr,
          f'client: no mismatch, its disconnect seen: {cli.stderr!r}')
        t(srv.returncode == 0, f'server exit 0: {srv.returncode} {serr}')
        t(sout.splitlines() == ['server ' + x for x in want],
          f"server printed rping's 100 lines: {sout.splitlines()[:2]}")
        t(serr.splitlines() == ['server DISCONNECT EVENT...', 'wait for RDMA_READ_ADV state 10'],
          f"server's stderr as rping's: {serr!r}")
        a.ctl('capture', 'stop')
        check_capture(t, pcap, 64)
        t(drops(a) == da0 and drops(b) == db0, f'no drop counters moved: A {drops(a)}, '
          f'B {drops(b)}')
        la, lb = wait_clean(a), wait_clean(b)
        t(not any(la.values()) and not any(lb.values()),
          f'nothing of rping left after time wait: A {la}, B {lb}')

        # -- a size beyond one request's 4096 bytes --
        srv = start_server(p, a, '-S', 4000)
        cli = rc(b, '-c', '-a', '10.0.0.1', '-C', 5, '-V', '-v', '-S', 4000)
        srv.wait(20)
        t(cli.returncode == 0 and srv.returncode == 0 and
          cli.stdout.splitlines() == [f'ping data: {rping_data(i, 4000)}' for i in range(5)],
          f'-S 4000: validated, both exit 0: {cli.returncode} {srv.returncode} {cli.stderr}')

        # -- the server stops mid-run --
        srv = start_server(p, a)
        cli = subprocess.Popen(rocectl_cmd(p, b, 'rping', '-c', '-a', '10.0.0.1', '-V', '-v'),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        end = time.time() + 20
        while time.time() < end and not any(c['state'] == 'ESTABLISHED'
                                             for c in b.ctl('cm', 'show')['conns']):
            time.sleep(0.05)
        time.sleep(1)
        srv.send_signal(signal.SIGTERM)
        try:
            cout, cerr = cli.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            cli.kill()
            cout, cerr = cli.communicate()
        srv.wait(10)
        n = len(cout.splitlines())
        t(srv.returncode == -signal.SIGTERM, f'the server died of its SIGTERM: {srv.returncode}')
        t(cli.returncode == 0 and n > 0 and 'client DISCONNECT EVENT...' in cerr and
          'data mismatch' not in cerr,
          f"the client saw the server go after {n} rounds and ended as rping's: status "
          f"{cli.returncode}, {cerr!r}")
        la, lb = wait_clean(a), wait_clean(b)
        t(not any(la.values()) and not any(lb.values()),
          f'nothing left after the server stopped: A {la}, B {lb}')

        # -- nobody listens --
        r = rc(b, '-c', '-a', '10.0.0.1', '-p', 9999, '-C', 1)
        t(r.returncode == 255 and r.stderr.splitlines() == [
            'cma event RDMA_CM_EVENT_REJECTED, error 8', 'wait for CONNECTED state 4',
            'connect error -1'],
          f'rejected (invalid service ID): rping\'s line and status 255: {r.returncode} '
          f'{r.stderr!r}')
        r = rc(a, '-s', '-a', '10.0.0.9')
        t(r.returncode == 255 and 'rdma_bind_addr' in r.stderr,
          f'a server on an address not ours: 255: {r.returncode} {r.stderr!r}')
        lb = wait_clean(b)
        t(not any(lb.values()), f'nothing left of the rejected client: {lb}')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
