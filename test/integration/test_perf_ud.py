#!/usr/bin/python3
"""rocectl perf -c UD (perftest's ib_send_bw -c UD and ib_send_lat -c UD) between two appliances
over memif, each daemon in both roles: UD QPs with perftest's Q_Key, SENDs through an address
handle, receives with the GRH area; bandwidth (-n, -a up to the MTU, -q 4, -m, -D) and latency
reports consistent on both sides, no datagram dropped (the daemons' UD counters), the default
size brought down to the MTU and -s above it refused as perftest does, -c UD refused for other
verbs and against an RC peer; nothing left behind. Also the job.start side of UD: a job
sending through an AH stops in error when the AH goes, UD jobs refuse other operations.

usage: test_perf_ud.py BUILD_DIR
"""
import json
import os
import subprocess
import time
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair  # noqa: E402

PORT = 20515 + os.getpid() % 1000
QKEY = 0x11111111
UD_DROPS = ('UD_QKEY_DROP', 'UD_NO_RECV', 'UD_RX_TOO_LONG', 'UD_RECV_LEN_ERR',
            'UD_TX_TOO_LONG', 'STATE_DROP', 'UNKNOWN_QP', 'DROP_ICRC')


def load(text):
    try:
        return json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}


def perf(pair, srv_d, cl_d, args, timeout=120, json_out=True):
    """Server on srv_d, client on cl_d; ((rc, json, stdout, stderr) client, ... server)."""
    ctl = os.path.join(pair.build, 'app/rocectl')
    extra = ['--json'] if json_out else []
    srv = subprocess.Popen([ctl, '-s', srv_d.sock, 'perf'] + args +
                           ['--server', '-p', str(PORT)] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cl = subprocess.run([ctl, '-s', cl_d.sock, 'perf'] + args +
                        ['--client', '127.0.0.1', '-p', str(PORT)] + extra,
                        capture_output=True, text=True, timeout=timeout)
    try:
        out, err = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        out, err = srv.communicate()
    return ((cl.returncode, load(cl.stdout), cl.stdout, cl.stderr),
            (srv.returncode, load(out), out, err))


def counters(d):
    return d.ctl('counters')['counters']


def drops(before, after):
    return {k: after.get(k, 0) - before.get(k, 0) for k in UD_DROPS
            if after.get(k, 0) != before.get(k, 0)}


def nothing_left(t, name, *daemons):
    for d in daemons:
        t(d.ctl('qp', 'show').get('qps') == [] and d.ctl('mr', 'show').get('mrs') == [] and
          d.ctl('ah', 'show').get('ahs') == [],
          f"{name}: {d.name} has no QP, MR or AH left")


def bw(t, pair, srv_d, cl_d, name, args, iters, size, qps=1, sizes=1):
    c0, s0 = counters(cl_d), counters(srv_d)
    (crc, cj, _, cerr), (src, sj, _, serr) = perf(pair, srv_d, cl_d, ['send', '-c', 'UD'] + args)
    ok = t(crc == 0 and src == 0, f"{name}: both exit 0 (client {crc}: {cerr[-300:]}; "
           f"server {src}: {serr[-300:]})")
    t(cj.get('connection') == 'UD' and sj.get('connection') == 'UD' and
      cj.get('sr') is False, f"{name}: connection UD, no selective repeat")
    cr, sr = cj.get('results', []), sj.get('results', [])
    if not (ok and t(len(cr) >= 1 and len(sr) >= 1, f"{name}: result lines {len(cr)}/{len(sr)}")):
        return cj, sj
    t(cr[-1]['bytes'] == size and cr[-1]['iterations'] == iters * qps and cr[-1]['bw_avg'] > 0,
      f"{name}: client {cr[-1]}")
    # The passive server reports what it received: all of it, as datagrams (-a: every
    # size's, with the size 0, as for RC).
    t(sr[0]['iterations'] == iters * qps * sizes and
      sr[0]['bytes'] == (size if sizes == 1 else 0),
      f"{name}: the server received every datagram: {sr[0]}")
    t(len(cj.get('qps', [])) == qps and
      [q['remote']['qpn'] for q in cj['qps']] == [q['local']['qpn'] for q in sj['qps']],
      f"{name}: {qps} QPs, the keys agree")
    for d, before in ((cl_d, c0), (srv_d, s0)):
        t(drops(before, counters(d)) == {}, f"{name}: {d.name} dropped nothing "
          f"({drops(before, counters(d))})")
    recv = counters(srv_d).get('RECV_COMPLETED', 0) - s0.get('RECV_COMPLETED', 0)
    t(recv == iters * qps * sizes,
      f"{name}: {srv_d.name} completed {recv} receives")
    return cj, sj


def lat(t, pair, srv_d, cl_d, name, args, iters):
    (crc, cj, _, cerr), (src, sj, _, serr) = perf(pair, srv_d, cl_d,
                                                  ['send', '-c', 'UD', '--lat'] + args)
    t(crc == 0 and src == 0, f"{name}: both exit 0 ({cerr[-300:]} {serr[-300:]})")
    for side, j in (('client', cj), ('server', sj)):
        r = j.get('results', [])
        if not t(len(r) >= 1, f"{name}: {side} has results"):
            continue
        r = r[0]
        t(r['iterations'] == iters and r['samples'] == iters - 1 and
          0 < r['min'] <= r['median'] <= r['p99'] <= r['max'],
          f"{name}: {side} {r}")
    return cj, sj


def both_roles(t, pair):
    a, b = pair.a, pair.b
    for srv_d, cl_d in ((a, b), (b, a)):
        tag = f"{cl_d.name}->{srv_d.name}"
        # ib_send_bw -c UD's default 65536 comes down to the MTU, with perftest's words.
        cj, sj = bw(t, pair, srv_d, cl_d, f"UD bw {tag}", ['-n', '2000'], 2000, 4096)
        lat(t, pair, srv_d, cl_d, f"UD lat {tag}", ['-n', '300'], 300)
        nothing_left(t, f"UD {tag}", a, b)


def variants(t, pair):
    a, b = pair.a, pair.b
    cj, sj = bw(t, pair, a, b, 'UD bw -a', ['-a', '-n', '100'], 100, 4096, sizes=12)
    sizes = [r['bytes'] for r in cj.get('results', [])]
    t(sizes == [2 ** k for k in range(1, 13)], f"UD bw -a: 2 B .. the MTU 4096 ({sizes})")
    t(sj.get('results', [{}])[0].get('iterations') == 100 * 12,
      f"UD bw -a: the server received every size's ({sj.get('results')})")
    bw(t, pair, a, b, 'UD bw -q 4 -s 256', ['-q', '4', '-s', '256', '-n', '500'], 500, 256,
       qps=4)
    bw(t, pair, a, b, 'UD bw -m 1024', ['-m', '1024', '-n', '500'], 500, 1024)
    (crc, cj, _, cerr), (src, sj, _, serr) = perf(pair, a, b, ['send', '-c', 'UD', '-D', '1',
                                                              '-s', '512'])
    r, s = cj.get('results', [{}])[0], sj.get('results', [{}])[0]
    t(crc == 0 and src == 0 and r.get('iterations', 0) > 0 and
      s.get('iterations', 0) == r.get('iterations'),
      f"UD bw -D 1: the server received all {r.get('iterations')} ({s.get('iterations')})")
    cj, sj = lat(t, pair, a, b, 'UD lat -a', ['-a', '-n', '50'], 50)
    t([r['bytes'] for r in cj.get('results', [])] == [2 ** k for k in range(1, 13)],
      'UD lat -a: 2 B .. 4096')

    # perftest's text: the header names the connection type, the MTU note on stderr.
    (crc, _, cout, cerr), (src, _, sout, _) = perf(pair, a, b, ['send', '-c', 'UD', '-n',
                                                                '200'], json_out=False)
    t(crc == 0 and src == 0 and 'Connection type : UD' in cout and
      'Connection type : UD' in sout and 'Send BW Test' in cout,
      f"UD text: the header says UD ({cout[:600]})")
    t('Max msg size in UD is MTU 4096' in cerr, f"UD: the size note ({cerr.strip()})")
    nothing_left(t, 'UD variants', a, b)


def refusals(t, pair):
    a, b = pair.a, pair.b
    ctl = os.path.join(pair.build, 'app/rocectl')
    # -s above the MTU: perftest's check_mtu() refuses it; so do both rocectl perf.
    (crc, _, _, cerr), (src, _, _, serr) = perf(pair, a, b, ['send', '-c', 'UD', '-s', '8192'])
    t(crc == 1 and src == 1 and
      'Max message size in UD cannot be greater than MTU' in cerr and
      'Max message size in UD cannot be greater than MTU' in serr,
      f"UD -s 8192: both refuse ({cerr.strip()} / {serr.strip()})")
    for verb in ('write', 'read', 'atomic'):
        r = subprocess.run([ctl, '-s', a.sock, 'perf', verb, '-c', 'UD'], capture_output=True,
                           text=True, timeout=10)
        t(r.returncode == 2 and 'UD connection only possible in SEND verb' in r.stderr,
          f"{verb} -c UD refused as perftest ({r.returncode}: {r.stderr.strip()})")
    r = subprocess.run([ctl, '-s', a.sock, 'perf', 'send', '-c', 'UD', '--verify'],
                       capture_output=True, text=True, timeout=10)
    t(r.returncode == 2 and '--verify: RC only' in r.stderr, f"UD --verify: {r.stderr.strip()}")
    r = subprocess.run([ctl, '-s', a.sock, 'perf', 'send', '-c', 'UD', '-b'],
                       capture_output=True, text=True, timeout=10)
    t(r.returncode == 2 and '-b with -c UD' in r.stderr, f"UD -b: {r.stderr.strip()}")
    r = subprocess.run([ctl, '-s', a.sock, 'perf', 'send', '-c', 'UC'], capture_output=True,
                       text=True, timeout=10)
    t(r.returncode == 2 and 'RC and UD QPs only' in r.stderr, f"-c UC: {r.stderr.strip()}")
    # UD against RC: both refuse, each says why.
    srv = subprocess.Popen([ctl, '-s', a.sock, 'perf', 'send', '--server', '-p', str(PORT)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r = subprocess.run([ctl, '-s', b.sock, 'perf', 'send', '-c', 'UD', '127.0.0.1', '-p',
                        str(PORT)], capture_output=True, text=True, timeout=60)
    try:
        _, serr = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        _, serr = srv.communicate()
    t(r.returncode == 1 and 'the peer runs -c RC, this side -c UD' in r.stderr and
      srv.returncode == 1 and 'the peer runs -c UD, this side -c RC' in serr,
      f"UD against RC: both refuse ({r.stderr.strip()} / {serr.strip()})")
    nothing_left(t, 'UD refusals', a, b)


def jobs(t, pair):
    """job.start on UD QPs: through an AH, which may not go while the job uses it."""
    a, b = pair.a, pair.b
    ma, mb = a.ctl('mr', 'reg', 65536)['mr'], b.ctl('mr', 'reg', 65536)['mr']
    qa = a.ctl('qp', 'create', 'type=ud', f'qkey={QKEY}', 'rq_depth=512')['qp']
    qb = b.ctl('qp', 'create', 'type=ud', f'qkey={QKEY}', 'rq_depth=512')['qp']
    ah = a.ctl('ah', 'create', '10.0.0.2')['ah']
    r = a.rocectl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=64',
                  'remote_addr=0', 'rkey=1', check=False)
    t(r.returncode != 0 and 'is UD: its jobs send' in r.stdout + r.stderr,
      f"UD job op write refused: {(r.stdout + r.stderr).strip()}")
    r = a.rocectl('job', 'start', qa['qpn'], 'op=send', f"lkey={ma['lkey']}", 'length=64',
                  f"remote.qpn={qb['qpn']}", check=False)
    t(r.returncode != 0 and 'ah' in r.stdout + r.stderr,
      f"UD send job without an AH refused: {(r.stdout + r.stderr).strip()}")
    r = b.rocectl('job', 'start', qb['qpn'], 'op=recv', f"lkey={mb['lkey']}",
                  'length=65500', check=False)
    t(r.returncode != 0 and 'GRH area' in r.stdout + r.stderr,
      f"UD receive past the MR's end with the GRH area refused: {(r.stdout + r.stderr).strip()}")
    b.ctl('job', 'start', qb['qpn'], 'op=recv', f"lkey={mb['lkey']}", 'length=1024')
    a.ctl('job', 'start', qa['qpn'], 'op=send', f"lkey={ma['lkey']}", 'length=1024',
          'duration_ms=60000', f"ah={ah['ah']}", f"remote.qpn={qb['qpn']}",
          f'remote.qkey={QKEY}', 'rate_mbps=100')
    time.sleep(0.5)
    recv = b.ctl('job', 'show', qb['qpn'])['job']
    t(recv['completed'] > 0 and recv['bytes'] == recv['completed'] * 1024,
      f"UD job: the receive job counts the payload, not the GRH area ({recv})")
    a.ctl('ah', 'destroy', ah['ah'])
    time.sleep(0.2)
    job = a.ctl('job', 'show', qa['qpn'])['job']
    t(job['running'] is False and job['errors'] == 1 and
      job['first_error'] == 'local QP operation error',
      f"AH destroyed under its job: the job stops in error ({job})")
    t(a.ctl('status').get('ok'), 'the daemon still serves')
    b.ctl('job', 'stop', qb['qpn'])
    for d, q, m in ((a, qa, ma), (b, qb, mb)):
        d.ctl('qp', 'destroy', q['qpn'])
        d.ctl('mr', 'dereg', m['rkey'])


def main():
    t = Checks('perf_ud')
    with Pair(sys.argv[1]) as pair:
        both_roles(t, pair)
        variants(t, pair)
        refusals(t, pair)
        jobs(t, pair)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
