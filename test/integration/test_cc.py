#!/usr/bin/python3
"""Congestion control between two roced over memif, driven only through rocectl.

With CC on (cc set profile=mlx5 on both daemons before the QPs connect), B's rx impairment
marks 20 % of the ECN-capable packets CE while a WRITE job runs A -> B: B's notification point
answers with CNPs (CE received, CNPs sent and suppressed counted), A's reaction point hears
them and its QP's rate (cc show QPN, qp show) drops below the line rate. With CC off (the
default) the same run changes nothing: our packets are Not-ECT, so the impairment marks none,
no CNP is sent, the QP has no rate. Knobs out of range, unknown profiles and per-QP knobs of a
QP without congestion control are refused, with the valid range.

usage: test_cc.py BUILD_DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, connect, MR_ALL  # noqa: E402

SIZE = 4 << 20


def run(t, build, on):
    what = 'cc on' if on else 'cc off'
    with Pair(build) as p:
        a, b = p.a, p.b
        for d in (a, b):
            s = d.ctl('cc', 'show')
            t(s['profile'] == 'off' and not s['on'] and s['ecn'] == 'ect0' and
              s['knobs']['np_cnp_dscp'] == 48, f'{what}: default cc show: {s}')
            if on:
                r = d.ctl('cc', 'set', 'profile=mlx5')
                t(r['on'] and r['profile'] == 'mlx5' and r['knobs']['rp_time_reset'] == 300,
                  f'cc set profile=mlx5: {r}')
        line = a.ctl('cc', 'show')['line_mbps']
        ma, mb = a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
        qa, qb = connect(a, b, timeout=12)
        b.ctl('impair', 'set', 'spec=ecn=20%,seed=5', 'dir=rx')
        a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=65536',
              f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'duration_ms=1500', 'depth=8')
        rates, end = [], time.time() + 15
        while True:
            time.sleep(0.05)
            if on:
                rates.append(a.ctl('cc', 'show', qa['qpn'])['rate_mbps'])
            j = a.ctl('job', 'show', qa['qpn'])['job']
            if not j['running'] or time.time() > end:
                break
        t(not j['running'] and j['completed'] > 0 and j['errors'] == 0, f'{what}: job {j}')
        ca, cb = a.ctl('counters')['counters'], b.ctl('counters')['counters']
        imp = b.ctl('impair', 'show', 0, 'dir=rx')['impair'][0]['counters']
        qpa = a.ctl('qp', 'show', qa['qpn'])['qps'][0]
        print(f"  {what}: {j['completed']} x 64 KiB at {j['gbps']:.2f} Gb/s; B: "
              f"{imp['ce_marked']} marked, CE_RX {cb['CE_RX']}, CNP_TX {cb['CNP_TX']}, "
              f"suppressed {cb['CC_CNP_SUPPRESSED']}; A: CNP_RX {ca['CNP_RX']}, "
              f"reductions {ca['CC_RATE_REDUCE']}, lowest rate "
              f"{min(rates) if rates else '-'} of {line} Mb/s", flush=True)
        if on:
            t(imp['ce_marked'] > 100, f'ECT packets marked: {imp}')
            t(cb['CE_RX'] == imp['ce_marked'] and cb['CC_CE_RX'] == cb['CE_RX'],
              f"B saw every mark: CE_RX {cb['CE_RX']}, CC_CE_RX {cb['CC_CE_RX']}")
            t(cb['CNP_TX'] > 10 and cb['CC_CNP_TX'] == cb['CNP_TX'] and
              cb['CC_CNP_SUPPRESSED'] == cb['CC_CE_RX'] - cb['CC_CNP_TX'],
              f"B's CNPs: {cb['CNP_TX']} sent, {cb['CC_CNP_SUPPRESSED']} suppressed")
            t(ca['CNP_RX'] == cb['CNP_TX'] and ca['CC_CNP_RX'] == ca['CNP_RX'],
              f"A heard them: CNP_RX {ca['CNP_RX']}, CC_CNP_RX {ca['CC_CNP_RX']}")
            t(ca['CC_RATE_REDUCE'] > 0 and ca['PACED'] > 0, 'A reduced and paced')
            t(len(rates) > 0 and min(rates) < line, f'rate dropped: {rates[:20]}')
            c = qpa.get('cc')
            t(c is not None and c['cnps'] == ca['CNP_RX'] and 0 <= c['alpha'] <= 1 and
              c['target_mbps'] > 0, f'qp show has cc: {c}')
            nb = b.ctl('cc', 'show', qb['qpn'])
            t(nb['np_cnps'] == cb['CNP_TX'], f"B's QP: {nb}")
            # Per-QP knobs: B's QP gets its own interval, then the daemon's again.
            r = b.ctl('cc', 'set', qb['qpn'], 'np_min_time_between_cnps=50')
            t(r['own_knobs'] and r['knobs']['np_min_time_between_cnps'] == 50, f'qp knobs {r}')
            s = b.ctl('cc', 'show', qb['qpn'])
            t(s['own_knobs'] and s['knobs']['np_min_time_between_cnps'] == 50, f'shown: {s}')
            t(b.ctl('cc', 'show')['knobs']['np_min_time_between_cnps'] == 4, 'global kept')
            r = b.ctl('cc', 'set', qb['qpn'], '--reset')
            t(not r['own_knobs'], f'reset: {r}')
        else:
            t(imp['ce_marked'] == 0 and imp['seen'] > 1000, f'Not-ECT: nothing marked {imp}')
            t(cb['CE_RX'] == 0 and cb['CNP_TX'] == 0 and ca['CNP_RX'] == 0 and
              cb['CC_CE_RX'] == 0 and ca['PACED'] == 0, 'no CE, no CNP, no pacing')
            t('cc' not in qpa, f'qp show without cc: {qpa}')
            r = a.rocectl('cc', 'show', qa['qpn'], check=False)
            t(r.returncode != 0 and 'ENOENT' in r.stdout + r.stderr, f'no cc state: {r}')
            r = a.rocectl('cc', 'set', qa['qpn'], 'rp_ai_rate=10', check=False)
            t(r.returncode != 0 and 'ENOENT' in r.stdout + r.stderr, f'no per-QP knobs: {r}')
        # Refused, with the range; the daemon keeps serving.
        r = a.rocectl('cc', 'set', 'rp_time_reset=0', check=False)
        t(r.returncode != 0 and 'rp_time_reset' in r.stderr and '1000000' in r.stderr,
          f'out of range refused: {r.stderr.strip()}')
        r = a.rocectl('cc', 'set', 'np_cnp_dscp=64', check=False)
        t(r.returncode != 0 and '63' in r.stderr, f'dscp 64 refused: {r.stderr.strip()}')
        r = a.rocectl('cc', 'set', 'profile=fast', check=False)
        t(r.returncode != 0 and 'mlx5' in r.stderr, f'profile refused: {r.stderr.strip()}')
        r = a.rocectl('cc', 'set', 'ecn=ce', check=False)
        t(r.returncode != 0, f'ecn=ce refused: {r.stderr.strip()}')
        t(a.ctl('cc', 'show')['profile'] == ('mlx5' if on else 'off'), 'nothing changed')
        text = a.rocectl('cc', 'show', json_out=False).stdout
        t('knobs.rp_time_reset' in text and 'profile' in text, f'human output:\n{text}')


def main():
    build = sys.argv[1]
    t = Checks('cc')
    run(t, build, False)
    run(t, build, True)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
