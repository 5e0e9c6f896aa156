#!/usr/bin/python3
"""Stage stamps (rocectl stats stages, lib/dataplane/roce_dp_stages.h) between two roced over
memif, the daemons built with them (test/integration/roced-stages, or roced itself in a
-Dstage_stamps=true build).

- The stamps add up: after `stats stages clear=true` and `counters clear` on both sides, a
  `rocectl perf write --lat` run, a `perf send --lat` run and a `rocectl pingpong rc` run:
  rx.pmd and rx.classify count every frame the port delivered (PORT_RX_PKTS), rx.transport
  every frame given to the engine (PORT_RX_PKTS less lib/net's and dropped ones; with no drop,
  the transport's RX_PKTS); resp.build and resp.wait every response (TX_RESP + CNP_TX);
  req.wait every request packet (TX_REQ); tx.pmd every engine frame (TX_PKTS); req.build one
  per message the latency jobs posted (the runs' iterations), req.job and lat.turn one per
  post that answered a received message (all but each opener's first: ib_write_lat's server,
  ib_send_lat's and ibv_rc_pingpong's client), loop at least one per
  message; no stamp went backwards; each whole turn is at least its job and build stages.
- `worker=0` gives the same as all workers (one here); `clear=true` leaves zeros behind.
- rocectl prints the table; a roced built without the stamps refuses stats.stages with the
  documented message (doc/troubleshooting.md) and rocectl exits 1.

usage: test_stages.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Daemon, Pair  # noqa: E402
from test_perf import perf  # noqa: E402

PORT = 19300 + os.getpid() % 100     # pingpong's exchange
ITERS = 3000
PP_ITERS = 1000
REFUSAL = 'stage stamps are not built in: meson setup -Dstage_stamps=true'


def stamped_roced(build):
    """The program with the stamps: roced itself when this build has them."""
    if os.path.exists(os.path.join(build, 'test/integration/roced-stages')):
        return 'test/integration/roced-stages'
    return 'app/roced/roced'


def stages(d, *args):
    r = d.ctl('stats', 'stages', *args)
    return r, {s['name']: s for s in r['stages']}


def pingpong(p):
    ctl = os.path.join(p.build, 'app/rocectl')
    args = ['pingpong', 'rc', '-n', str(PP_ITERS), '-s', '64', '-p', str(PORT)]
    srv = subprocess.Popen([ctl, '-s', p.a.sock] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    end = time.time() + 15
    while time.time() < end and subprocess.run(
            ['ss', '-Hltn', f'sport = :{PORT}'], capture_output=True,
            text=True).stdout.strip() == '':
        time.sleep(0.05)
    cl = subprocess.run([ctl, '-s', p.b.sock] + args + ['127.0.0.1'], capture_output=True,
                        text=True, timeout=120)
    out, err = srv.communicate(timeout=60)
    return cl.returncode, cl.stdout + cl.stderr, srv.returncode, out + err


def add_up(t, name, d, opener):
    r, s = stages(d)
    c = d.ctl('counters')['counters']
    t(r['backwards'] == 0, f'{name}: no stamp went backwards ({r["backwards"]})')
    t(r['tsc_hz'] > 0, f'{name}: TSC frequency {r["tsc_hz"]}')
    n = {k: v['count'] for k, v in s.items()}
    print(f'  {name}: ' + ', '.join(f'{k} {v}' for k, v in n.items()), flush=True)
    drops = {k: v for k, v in c.items() if v and (k.startswith('DROP_') or k in (
        'HANDOFF', 'HANDOFF_DROP', 'NOT_OURS', 'ROCE_L2_DST', 'ROCE_VLAN', 'UNKNOWN_QP',
        'STATE_DROP', 'TRANSPORT_DROP', 'BAD_PKEY'))}
    t(not drops, f'{name}: nothing dropped ({drops})')
    rx = c['PORT_RX_PKTS']
    t(rx > 0 and n['rx.pmd'] == rx and n['rx.classify'] == rx,
      f'{name}: rx.pmd {n["rx.pmd"]} and rx.classify {n["rx.classify"]} = PORT_RX_PKTS {rx}')
    mine = rx - c['NET_PKTS'] - c['OTHER_DROP']
    t(n['rx.transport'] == mine and n['rx.transport'] == c['RX_PKTS'],
      f'{name}: rx.transport {n["rx.transport"]} = frames to the engine {mine} = RX_PKTS '
      f'{c["RX_PKTS"]}')
    resp = c['TX_RESP'] + c['CNP_TX']
    t(resp > 0 and n['resp.build'] == resp and n['resp.wait'] == resp,
      f'{name}: resp.build {n["resp.build"]}, resp.wait {n["resp.wait"]} = responses {resp}')
    t(n['req.wait'] == c['TX_REQ'] and n['tx.pmd'] == c['TX_PKTS'] and
      c['TX_PKTS'] == c['TX_REQ'] + resp,
      f'{name}: req.wait {n["req.wait"]} = TX_REQ {c["TX_REQ"]}, tx.pmd {n["tx.pmd"]} = '
      f'TX_PKTS {c["TX_PKTS"]}')
    posts = 2 * ITERS + PP_ITERS
    t(n['req.build'] == posts, f'{name}: req.build {n["req.build"]} = messages posted {posts}')
    # Every post answers a received message but each run's opener's first.
    want = posts - opener
    t(n['req.job'] == want and n['lat.turn'] == want,
      f'{name}: req.job {n["req.job"]}, lat.turn {n["lat.turn"]} = answering posts {want}')
    t(n['loop'] >= posts, f'{name}: loop {n["loop"]} turns for {posts} messages')
    # A turn is the sum of its stages, job and build among them (the one post without a turn
    # may have the largest build).
    turn = s['lat.turn']['mean'] * n['lat.turn']
    parts = s['req.job']['mean'] * n['req.job'] + s['req.build']['mean'] * n['req.build'] - \
        s['req.build']['max']
    t(turn >= parts, f'{name}: turns {turn:.0f} cycles >= job + build {parts:.0f}')
    for k, v in s.items():
        if v['count']:
            t(0 <= v['min'] <= v['median'] <= v['max'] and v['min'] <= v['mean'] <= v['max'],
              f'{name}: {k} min <= median, mean <= max ({v})')
    one, _ = stages(d, '0')
    t(one['scope'] == 'worker' and one['worker'] == 0 and
      [x['count'] for x in one['stages'] if x['name'] != 'loop'] ==
      [x['count'] for x in r['stages'] if x['name'] != 'loop'],
      f'{name}: worker 0 is every worker here')
    r2, s2 = stages(d, 'clear=true')
    t(all(s2[k]['count'] == s[k]['count'] for k in s if k != 'loop'), f'{name}: read, then cleared')
    _, s3 = stages(d)
    t(all(v['count'] == 0 for k, v in s3.items() if k != 'loop'),
      f'{name}: zero after clear: {[(k, v["count"]) for k, v in s3.items() if v["count"]]}')


def main():
    build = sys.argv[1]
    t = Checks('stages')
    roced = stamped_roced(build)
    with Pair(build, roced=roced) as p:
        for d in (p.a, p.b):
            d.ctl('stats', 'stages', 'clear=true')
            d.ctl('counters', 'clear')
        for verb in ('write', 'send'):
            (crc, _, cerr), (src, _, serr) = perf(p, [verb, '--lat', '-n', str(ITERS), '-s',
                                                      '2'])
            t(crc == 0 and src == 0, f'perf {verb} --lat: client {crc} {cerr[-300:]}, server '
              f'{src} {serr[-300:]}')
        crc, cout, src, sout = pingpong(p)
        t(crc == 0 and src == 0, f'pingpong: client {crc} {cout[-300:]}, server {src} '
          f'{sout[-300:]}')
        # Who opens: ib_write_lat's server, ib_send_lat's client, ibv_rc_pingpong's client.
        add_up(t, 'A (servers)', p.a, 1)
        add_up(t, 'B (clients)', p.b, 2)
        out = p.b.rocectl('stats', 'stages', json_out=False).stdout
        t('rx.classify' in out and 'mean ns' in out and 'TSC' in out, f'table:\n{out}')
    if roced != 'app/roced/roced':
        tmp = tempfile.mkdtemp(prefix='rocedp-it-')
        d = Daemon(build, tmp, 'plain', ['-l', '0,1', f'--vdev=net_memif0,role=server,'
                                         f'socket={tmp}/m.sock'], ['--port', 'net_memif0',
                                                                    '--ip', '10.0.0.1/24'])
        try:
            d.wait_ready()
            r = d.rocectl('stats', 'stages', check=False)
            t(r.returncode == 1 and REFUSAL in r.stdout + r.stderr,
              f'a roced without the stamps refuses: {r.returncode} {r.stdout}{r.stderr}')
        finally:
            d.stop()
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
