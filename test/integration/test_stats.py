#!/usr/bin/python3
"""testpmd-grade statistics between two roced over memif, through rocectl only.

- `stats`: every port's ethdev statistics (rte_eth_stats names), the workers' loop and busy
  time, a wall-clock and a monotonic timestamp; the second request carries the first as
  "previous", so that one-shot `rocectl stats` prints throughput "since last show" as testpmd.
- Under a WRITE job paced to RATE Mb/s, the rates `rocectl stats --watch` prints (Tx-bps of A,
  Rx-bps of B) and `rocectl top` prints for the job's QP are within 10 % of the job's own
  figures; the job's QP comes first in top, an idle QP after it at 0; the sender's worker is
  busy part of the time.
- `counters clear` starts counters, stats and port show from zero; `counters match=GLOB`
  filters; the xstats of the port come with `stats --xstats`.

usage: test_stats.py BUILD_DIR
"""
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, connect, MR_ALL  # noqa: E402

RATE = 800          # Mb/s: well below what memif carries on a loaded machine
SIZE = 1 << 20


def text(d, *args, timeout=30):
    return d.rocectl(*args, json_out=False, timeout=timeout).stdout


def samples_of(out, key):
    """The values of one throughput line of `rocectl stats` text, e.g. Tx-bps, per block."""
    return [float(v) for v in re.findall(rf'{key}:\s+(\d+)', out)]


def idle_checks(t, a):
    s1 = a.ctl('stats')
    t('previous' not in s1 or isinstance(s1['previous'], dict), 'previous is a sample')
    p = s1['ports'][0]
    t(all(k in p for k in ('ipackets', 'opackets', 'ibytes', 'obytes', 'imissed', 'ierrors',
                           'oerrors', 'rx_nombuf')), f'port stats: {p}')
    w = s1['workers']
    t(len(w) >= 1 and all(0 <= x['busy_ns'] <= x['loop_ns'] for x in w), f'workers: {w}')
    t(abs(s1['time'] - time.time()) < 5 and s1['clock_ns'] > 0, 'timestamps')
    s2 = a.ctl('stats')
    t(s2['previous']['clock_ns'] == s1['clock_ns'] and s2['clock_ns'] > s1['clock_ns'],
      'the second sample carries the first')
    out = text(a, 'stats')
    t('NIC statistics for port 0' in out and 'Throughput (since last show' in out and
      'Rx-pps:' in out and 'busy' in out, f'one-shot text has rates:\n{out}')
    x = a.ctl('stats', '--xstats')['ports'][0]
    t(isinstance(x.get('xstats'), dict), f'xstats: {x.get("xstats")}')


def job_checks(t, a, b):
    ma, mb = a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
    qa, qb = connect(a, b, timeout=14)
    idle_a, _ = connect(a, b, timeout=14)
    a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=65536',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'duration_ms=6000', 'depth=8',
          f'rate_mbps={RATE}')
    time.sleep(1)
    st_a = text(a, 'stats', '--watch', '1', '--count', '3')
    st_b = text(b, 'stats', '--watch', '1', '--count', '3')
    top = text(a, 'top', '--watch', '1', '--count', '2')
    end = time.time() + 20
    while a.ctl('job', 'show', qa['qpn'])['job']['running'] and time.time() < end:
        time.sleep(0.2)
    j = a.ctl('job', 'show', qa['qpn'])['job']
    t(not j['running'] and j['errors'] == 0 and j['completed'] > 0, f'job: {j}')
    goodput = j['gbps'] * 1e9
    # Frames carry the payload plus Ethernet/IP/UDP/BTH/RETH/ICRC: 4 % at most at MTU 4096.
    tx = samples_of(st_a, 'Tx-bps')[-1]
    rx = samples_of(st_b, 'Rx-bps')[-1]
    print(f'  job {goodput / 1e6:.0f} Mb/s goodput; A Tx-bps {tx / 1e6:.0f}, '
          f'B Rx-bps {rx / 1e6:.0f} Mb/s', flush=True)
    for what, v in (('A Tx-bps', tx), ('B Rx-bps', rx)):
        t(0.9 * goodput <= v <= 1.1 * goodput * 1.04, f'{what} {v:.0f} against the job '
          f'{goodput:.0f} bit/s')
    busy = [float(v) for v in re.findall(r'busy\s+([\d.]+) %', st_a)]
    t(busy and busy[-1] > 0, f"A's worker busy under the job: {busy}")
    rows = [r for r in top.splitlines() if r.startswith('0x')]
    last = rows[-2:] if len(rows) >= 4 else rows
    print('  top:\n    ' + '\n    '.join(top.splitlines()[-4:]), flush=True)
    t(len(rows) >= 4, f'top printed both QPs twice:\n{top}')
    first = last[0].split()
    t(int(first[0], 16) == qa['qpn'], f"the job's QP first: {last}")
    t(0.9 * goodput <= float(first[5]) * 1e9 <= 1.1 * goodput, f"its TX Gb/s {first[5]} "
      f"against the job's {goodput / 1e9:.3f}")
    second = last[1].split()
    t(int(second[0], 16) == idle_a['qpn'] and float(second[5]) == 0, f'the idle QP: {last}')
    c = a.ctl('counters', 'nonzero=true')['counters']
    t(c.get('RETRANSMITS', 0) == 0 and c.get('TIMEOUTS', 0) == 0,
      f"no retransmission on a lossless link: RETRANSMITS {c.get('RETRANSMITS', 0)}, "
      f"TIMEOUTS {c.get('TIMEOUTS', 0)}")


def clear_checks(t, a):
    before = a.ctl('counters')['counters']['PORT_TX_PKTS']
    t(before > 1000, f'traffic counted: {before}')
    a.ctl('counters', 'clear')
    after = a.ctl('counters')['counters']
    t(after['PORT_TX_PKTS'] < 100 and after['LOOP_NS'] < 5e9, f'cleared: PORT_TX_PKTS '
      f"{after['PORT_TX_PKTS']}, LOOP_NS {after['LOOP_NS']}")
    p = a.ctl('port', 'show')['ports'][0]['stats']
    t(p['opackets'] < 100, f'port show cleared: {p}')
    s = a.ctl('stats')
    t('previous' not in s and s['ports'][0]['opackets'] < 100, 'stats cleared')
    m = a.ctl('counters', 'match=*port_tx*')['counters']
    t(set(m) == {'PORT_TX_PKTS', 'PORT_TX_BYTES', 'PORT_TX_DROP'}, f'match: {sorted(m)}')
    r = a.rocectl('counters', 'match=' + 'x' * 200, check=False)
    t(r.returncode == 1, f'a too long glob is refused: {r.stdout}{r.stderr}')


def main():
    build = sys.argv[1]
    t = Checks('stats')
    with Pair(build) as p:
        idle_checks(t, p.a)
        job_checks(t, p.a, p.b)
        clear_checks(t, p.a)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
