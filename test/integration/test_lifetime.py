#!/usr/bin/python3
"""When roced frees QPs and MRs while traffic runs, between two roced over memif.

mr.dereg: workers use MRs without locks, so roced takes the key away, makes every worker let
go of what it holds in the MR, then frees it:
- the target of a running WRITE job: the writer's job fails with a remote access error, the
  target's QP goes to ERR after one access NAK;
- the source of a running READ job: the same, the READ response stream stopping mid-way;
- the lkey of a running job on its own daemon: the job stops with a local protection error;
- fifty other MRs registered and deregistered under a running job: it does not notice.
Protection domains: what a control connection creates without naming a PD goes in its own PD,
which another client cannot touch and a peer cannot reach through it into another PD's MR; it
goes, with all in it, when that connection closes, however it closes (a raw client that hangs
up under traffic, a rocectl perf client killed with SIGKILL mid-run); what it puts in PD 0
stays.
After all that both daemons serve new QPs and traffic.

usage: test_lifetime.py BUILD_DIR
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, connect, poll_wc, MR_ALL, QP_ALL  # noqa: E402

MSG = 1 << 20


def qp_state(d, qpn):
    return next((q['state'] for q in d.ctl('qp', 'show')['qps'] if q['qpn'] == qpn), None)


def wait_job(d, qpn, timeout=20):
    end, job = time.time() + timeout, None
    while time.time() < end:
        job = d.ctl('job', 'show', qpn)['job']
        if not job['running']:
            break
        time.sleep(0.1)
    return job


def start_job(a, qa, ma, mb, op, secs=8):
    a.ctl('job', 'start', qa['qpn'], f'op={op}', f"lkey={ma['lkey']}", f'length={MSG}',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", f'duration_ms={secs * 1000}',
          'depth=4')
    # Running and moving data before the MR goes.
    end = time.time() + 5
    while time.time() < end and a.ctl('job', 'show', qa['qpn'])['job']['completed'] < 3:
        time.sleep(0.05)


def setup(a, b):
    """An MR on each daemon and a connected QP pair."""
    ma, mb = a.ctl('mr', 'reg', 2 * MSG, MR_ALL)['mr'], b.ctl('mr', 'reg', 2 * MSG, MR_ALL)['mr']
    qa, qb = connect(a, b, mtu=1024)
    return ma, mb, qa, qb


def teardown(a, b, qa, qb, ma=None, mb=None):
    """Destroy the QPs, then deregister the MRs still there."""
    a.ctl('qp', 'destroy', qa['qpn'])
    b.ctl('qp', 'destroy', qb['qpn'])
    for d, m in ((a, ma), (b, mb)):
        if m is not None:
            d.ctl('mr', 'dereg', m['rkey'])


def remote_case(t, pair, op):
    """Deregister the peer's MR that a running WRITE/READ job uses."""
    a, b = pair.a, pair.b
    ma, mb, qa, qb = setup(a, b)
    nak0 = b.ctl('counters')['counters'].get('NAK_ACC_TX', 0)
    start_job(a, qa, ma, mb, op)
    t(a.ctl('job', 'show', qa['qpn'])['job']['running'], f'{op}: the job runs')
    b.ctl('mr', 'dereg', mb['rkey'])
    t(all(m['rkey'] != mb['rkey'] for m in b.ctl('mr', 'show')['mrs']), f'{op}: the MR is gone')
    job = wait_job(a, qa['qpn'])
    t(not job['running'] and job['errors'] > 0 and
      job['first_error'] == 'remote access error',
      f'{op}: the job ends with a remote access error: {job}')
    t(qp_state(b, qb['qpn']) == 'ERR', f"{op}: the target's QP is in ERR: {qp_state(b, qb['qpn'])}")
    nak = b.ctl('counters')['counters'].get('NAK_ACC_TX', 0) - nak0
    t(nak == 1, f'{op}: one remote access NAK from the target, got {nak}')
    teardown(a, b, qa, qb, ma=ma)


def local_case(t, pair):
    """Deregister the MR a running job sends from, on its own daemon."""
    a, b = pair.a, pair.b
    ma, mb, qa, qb = setup(a, b)
    start_job(a, qa, ma, mb, 'write')
    a.ctl('mr', 'dereg', ma['rkey'])
    job = wait_job(a, qa['qpn'], timeout=5)
    t(not job['running'] and job['first_error'] == 'local protection error',
      f'local: the job stopped with a local protection error: {job}')
    teardown(a, b, qa, qb, mb=mb)


def churn_case(t, pair):
    """Other MRs come and go on both daemons while a job runs: it sees nothing of it."""
    a, b = pair.a, pair.b
    ma, mb, qa, qb = setup(a, b)
    start_job(a, qa, ma, mb, 'write', secs=3)
    for i in range(25):
        for d in (a, b):
            m = d.ctl('mr', 'reg', 4096 * (i + 1), MR_ALL)['mr']
            d.ctl('mr', 'dereg', m['rkey'])
    job = wait_job(a, qa['qpn'])
    t(not job['running'] and job['errors'] == 0 and job['completed'] > 3,
      f'churn: the job finished cleanly: {job}')
    total = a.ctl('job', 'total')['total']
    t(total['jobs'] >= 1 and total['running'] == 0 and total['completed'] >= job['completed']
      and total['bytes'] >= job['bytes'], f'job.total adds it up: {total}')
    teardown(a, b, qa, qb, ma, mb)


def request(s, f, rid, cmd, **args):
    s.sendall((json.dumps({'v': 1, 'id': rid, 'cmd': cmd, **args}) + '\n').encode())
    return json.loads(f.readline())


def wait_gone(d, what, key, value, timeout=3):
    """Wait until no QP/MR of daemon d has key == value; True when gone."""
    end = time.time() + timeout
    while time.time() < end:
        if all(o.get(key) != value for o in d.ctl(what, 'show')[what + 's']):
            return True
        time.sleep(0.05)
    return False


def owned_case(t, pair):
    """A client's objects go in its own PD: another client cannot touch them, a peer's WRITE
    through its QP cannot reach an MR of another PD, and the PD with its QP and MR goes when
    the client hangs up under traffic; its MR in the shared PD 0 stays."""
    a, b = pair.a, pair.b
    s = socket.socket(socket.AF_UNIX)
    s.connect(a.sock)
    f = s.makefile('r')
    all_mr = ['local_write', 'remote_write', 'remote_read', 'remote_atomic']
    ma = request(s, f, 1, 'mr.reg', size=2 * MSG, access=all_mr)['mr']
    keep = request(s, f, 2, 'mr.reg', size=4096, pd=0, access=all_mr)['mr']
    qa = request(s, f, 3, 'qp.create', access=all_mr[1:])['qp']
    pd = [x for x in a.ctl('pd', 'show')['pds'] if x['pd'] == ma['pd']]
    t(ma['pd'] != 0 and qa['pd'] == ma['pd'] and keep['pd'] == 0 and pd and pd[0]['default']
      and pd[0].get('owner') and pd[0]['mrs'] == 1 and pd[0]['qps'] == 1,
      f"the client's own PD {ma['pd']} holds its MR and QP: {pd}; PD 0 the other MR")
    r = a.rocectl('mr', 'dump', ma['rkey'], check=False)
    t(r.returncode != 0 and 'another client' in r.stdout + r.stderr,
      f'another client cannot read the MR: {r.stdout}{r.stderr}')
    r = a.rocectl('qp', 'destroy', qa['qpn'], check=False)
    t(r.returncode != 0, 'nor destroy the QP')
    mb, qb = b.ctl('mr', 'reg', 2 * MSG, MR_ALL)['mr'], b.ctl('qp', 'create', QP_ALL)['qp']
    rep = request(s, f, 4, 'qp.connect', qpn=qa['qpn'], remote={
        'qpn': qb['qpn'], 'psn': qb['psn'], 'ip': qb['ip']})
    t(rep['ok'], f'connect from the owner: {rep}')
    b.ctl('qp', 'connect', qb['qpn'], qa['qpn'], qa['psn'], qa['ip'])
    # The peer writes into the MR of PD 0 through the client's QP: the PDs differ.
    b.ctl('post', 'write', qb['qpn'], f"lkey={mb['lkey']}", 'length=64',
          f"remote_addr={keep['iova']}", f"rkey={keep['rkey']}")
    wc = poll_wc(b, qb['qpn'], 1)
    t(len(wc) == 1 and wc[0]['status'] == 10, f'a WRITE to an MR of another PD: '
      f'remote access error: {wc}')
    b.ctl('qp', 'destroy', qb['qpn'])
    qb = b.ctl('qp', 'create', QP_ALL)['qp']
    rep = request(s, f, 5, 'qp.destroy', qpn=qa['qpn'])
    qa = request(s, f, 6, 'qp.create', access=all_mr[1:])['qp']
    request(s, f, 7, 'qp.connect', qpn=qa['qpn'], remote={
        'qpn': qb['qpn'], 'psn': qb['psn'], 'ip': qb['ip']})
    b.ctl('qp', 'connect', qb['qpn'], qa['qpn'], qa['psn'], qa['ip'])
    rep = request(s, f, 8, 'job.start', qpn=qa['qpn'], op='write', lkey=ma['lkey'], length=MSG,
                  remote_addr=mb['iova'], rkey=mb['rkey'], duration_ms=8000, depth=4)
    t(rep['ok'], f'job from the owner: {rep}')
    time.sleep(0.3)
    f.close()
    s.close()
    t(wait_gone(a, 'qp', 'qpn', qa['qpn']) and wait_gone(a, 'mr', 'rkey', ma['rkey']) and
      all(x['pd'] != ma['pd'] for x in a.ctl('pd', 'show')['pds']),
      'the PD, its QP and its MR went with their client')
    t(not wait_gone(a, 'mr', 'rkey', keep['rkey'], timeout=0.3),
      'the MR in PD 0 stays')
    a.ctl('mr', 'dereg', keep['rkey'])
    b.ctl('qp', 'destroy', qb['qpn'])
    b.ctl('mr', 'dereg', mb['rkey'])


def perf_kill_case(t, pair):
    """rocectl perf killed with SIGKILL mid-run leaves nothing behind in either daemon."""
    a, b = pair.a, pair.b
    rocectl = os.path.join(a.build, 'app/rocectl')
    srv = subprocess.Popen([rocectl, '-s', a.sock, 'perf', 'write', '-q', '4', '-D', '20',
                            '--server', '-p', '18611'], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    cli = subprocess.Popen([rocectl, '-s', b.sock, 'perf', 'write', '-q', '4', '-D', '20',
                            '--client', '127.0.0.1', '-p', '18611'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.time() + 15
    while time.time() < end and not any(
            q.get('connected') for q in b.ctl('qp', 'show')['qps']):
        time.sleep(0.1)
    running = any(q.get('connected') for q in b.ctl('qp', 'show')['qps'])
    t(running, 'perf: the client connected its QPs')
    time.sleep(1)
    cli.kill()
    cli.wait()
    try:
        srv.wait(30)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
    for d in (a, b):
        end = time.time() + 3
        while time.time() < end and (d.ctl('qp', 'show')['qps'] or d.ctl('mr', 'show')['mrs']):
            time.sleep(0.05)
        t(d.ctl('qp', 'show')['qps'] == [] and d.ctl('mr', 'show')['mrs'] == [],
          f'perf: nothing left in {d.name} after SIGKILL: {d.ctl("qp", "show")["qps"]} '
          f'{d.ctl("mr", "show")["mrs"]}')


def main():
    t = Checks('lifetime')
    with Pair(sys.argv[1]) as pair:
        remote_case(t, pair, 'write')
        remote_case(t, pair, 'read')
        local_case(t, pair)
        churn_case(t, pair)
        owned_case(t, pair)
        perf_kill_case(t, pair)
        # Both still serve: fresh MRs, QPs and a clean run.
        a, b = pair.a, pair.b
        ma, mb = a.ctl('mr', 'reg', MSG, MR_ALL)['mr'], b.ctl('mr', 'reg', MSG, MR_ALL)['mr']
        qa, qb = connect(a, b, mtu=4096)
        a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=65536',
              f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'count=200')
        job = wait_job(a, qa['qpn'])
        t(job['completed'] == 200 and job['errors'] == 0, f'afterwards: a clean job: {job}')
        t(a.proc.poll() is None and b.proc.poll() is None, 'both daemons alive')
        t(a.ctl('counters')['counters'].get('DROP_ICRC') == 0, 'no ICRC errors')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
