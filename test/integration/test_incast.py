#!/usr/bin/python3
"""Incast through a bottleneck on B's rx (incast.py): N QPs of daemon A write to daemon B.

Asserted, for N = 8 (and 64 with congestion control on):
- DCQCN on (mlx5), lossy queue with RED/ECN: the bottleneck marks, B answers with CNPs, A hears
  every one and reduces; every message arrives exactly once (B's receive completions equal A's
  send completions, QP by QP), no work request fails.
- DCQCN on, lossless (PFC on priority 0, XOFF 128 KiB, XON 64 KiB, a 4 MiB buffer): nothing
  dropped or retransmitted, B pauses A and A honours the pauses, no QP fails.
- DCQCN off, lossy: RoCE packets are then Not-ECT, so RED drops instead of marking (and the
  buffer tail-drops): drops counted, go-back-N and selective repeat both deliver every message
  exactly once, their goodputs printed side by side.
Printed, not asserted (this machine's two CPUs are shared: the loop of marks, CNPs and rate
timers is only as fast as the scheduler lets both workers run, see doc/congestion-control.md):
utilisation of the bottleneck, Jain's fairness over 1 s windows, queue p50/p99/max, QPs that
ran out of retries. bench/incast.sh tabulates them for the whole matrix.

usage: test_incast.py BUILD_DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks  # noqa: E402
from incast import ApartPair, Incast, fmt, once  # noqa: E402

RATE = 1_000_000_000
BUF = 262144
RED = (20000, 100000, 0.1)


def common(t, r, what):
    print(f'  {what}: {fmt(r)}', flush=True)
    t(r['recv_errors'] == 0, f'{what}: no receive failed')
    # A QP may fail only by running out of retries in a lossy queue (go-back-N spends one
    # per sequence NAK, as rxe does), never by a protocol or data error.
    t(set(r['first_errors']) <= {'transport retry counter exceeded'}, f'{what}: failures {r["first_errors"]}')
    t(sum(r['completed']) > 0, f'{what}: messages completed: {sum(r["completed"])}')
    t(once(r), f'{what}: exactly once: sent {r["completed"]}, received {r["received"]}')
    t(r['goodput'] > 0 and r['util'] <= 1.02, f'{what}: utilisation {r["util"]:.3f} '
      'within the bottleneck rate')


def main():
    build = sys.argv[1]
    t = Checks('incast')
    with ApartPair(build) as p:
        for n in (8, 64):
            what = f'{n} QPs, DCQCN mlx5, lossy RED'
            r = Incast(p, n=n, rate=RATE, buffer=BUF, red=RED, cc='mlx5', secs=3).run()
            common(t, r, what)
            t(r['red_marked'] > 0 and r['cnp_tx'] > 0 and r['cnp_rx'] == r['cnp_tx'],
              f'{what}: marked {r["red_marked"]}, CNPs sent {r["cnp_tx"]}, heard '
              f'{r["cnp_rx"]}')
            t(r['red_dropped'] == 0, f'{what}: ECT packets are marked, never RED-dropped')
        what = '8 QPs, DCQCN mlx5, lossless (PFC) with RED'
        r = Incast(p, n=8, rate=RATE, buffer=4 << 20, red=RED, lossless=(131072, 65536, 1),
                   cc='mlx5', secs=3, timeout=18).run()
        common(t, r, what)
        t(not r['first_errors'], f'{what}: no QP failed')
        t(r['tail_dropped'] + r['headroom_dropped'] + r['red_dropped'] == 0 and
          r['retransmits'] == 0, f'{what}: nothing dropped, nothing retransmitted')
        t(r['pause_tx'] > 0 and r['pfc_rx_pause'] > 0 and r['pfc_paused_ns'] > 0,
          f'{what}: B paused A {r["pause_tx"]} times, A heard {r["pfc_rx_pause"]}, paused '
          f'{r["pfc_paused_ns"] / 1e6:.1f} ms')
        got = {}
        for sr in (False, True):
            what = f'8 QPs, DCQCN off, lossy RED, {"SR" if sr else "go-back-N"}'
            r = Incast(p, n=8, rate=RATE, buffer=BUF, red=RED, cc='off', sr=sr, secs=3).run()
            common(t, r, what)
            t(r['red_marked'] == 0 and r['cnp_tx'] == 0, f'{what}: nothing ECT, no CNP')
            t(r['red_dropped'] + r['tail_dropped'] > 0 and r['retransmits'] > 0,
              f'{what}: drops {r["red_dropped"]} + {r["tail_dropped"]}, recovered by '
              f'{r["retransmits"]} retransmissions')
            got[sr] = r['goodput']
        print(f'  DCQCN off: go-back-N {got[False] / 1e6:.1f} Mb/s, selective repeat '
              f'{got[True] / 1e6:.1f} Mb/s through {RATE / 1e6:.0f} Mb/s', flush=True)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
