#!/usr/bin/python3
"""Congestion control between two roced over memif, driven only through rocectl.

With CC on (cc set profile=mlx5 on both daemons before the QPs connect), B's rx impairment
marks 20 % of the ECN-capable packets CE while a WRITE job runs A -> B: B's notification point
answers with CNPs (CE received, CNPs sent and suppressed counted), A's reaction point hears
them and its QP's rate (cc show QPN, qp show) drops below the line rate. With CC off (the
default) the same run changes nothing: our packets are Not-ECT, so the impairment marks none,
no CNP is sent, the QP has no rate. Knobs out of range, unknown profiles and per-QP knobs of a
QP without congestion control are refused, with the valid range.

The trace (cc trace): `rocectl --json cc trace QPN --follow` runs during the job and gets every
entry (contiguous sequence numbers, nothing lost, times in order, rates within the line rate,
the CNP count ending at what A received); each `cc show QPN` sample taken meanwhile has the
rate and target rate of the trace entry before its trace_next; a later read of the ring gives
the same entries; the table and CSV forms print them; a bottleneck on the QP's port shows in
the trace's queue.

usage: test_cc.py BUILD_DIR
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, connect, MR_ALL  # noqa: E402

SIZE = 4 << 20
# Every entry of the 1.5 s job fits (about 45000 in a run): the later read sees them all.
TRACE_LEN = 65536
EVENTS = {'cnp', 'timer', 'bytes', 'full'}
STAGES = {'full', 'fast_recovery', 'additive', 'hyper'}


def json_lines(text):
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def follow(d, qpn, out):
    """rocectl --json cc trace QPN --follow in the background, its output into @out."""
    cmd = [os.path.join(d.build, 'app/rocectl'), '-s', d.sock, '--json', 'cc', 'trace',
           str(qpn), '--follow', '--watch', '0.1']
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, text=True)


def check_trace(t, a, qa, line, cnp_rx, followed, samples):
    """The followed replies against each other, the samples of cc show, a later read."""
    entries = [e for r in followed for e in r['entries']]
    t(len(followed) > 3 and all(r['qpn'] == qa and r['line_mbps'] == line and
                                r['trace_len'] == TRACE_LEN for r in followed),
      f'{len(followed)} followed replies')
    t(all(r['lost'] == 0 and not r['restarted'] for r in followed), 'nothing lost, no restart')
    t(len(entries) > 100 and [e['seq'] for e in entries] == list(range(len(entries))),
      f'{len(entries)} entries, sequence numbers 0..n-1')
    if not entries:
        return
    bad = [(x, y) for x, y in zip(entries, entries[1:]) if y['time_ns'] < x['time_ns']]
    t(not bad, f'times in order: {bad[:2]}')
    t(all(e['event'] in EVENTS and e['stage'] in STAGES and 0 < e['rate_mbps'] <= line and
          e['rate_mbps'] <= e['target_mbps'] + 1e-6 and e['target_mbps'] <= line and
          0 <= e['alpha'] <= 1 for e in entries), 'events, stages, rates and alpha in range')
    t(all(y['cnps'] >= x['cnps'] for x, y in zip(entries, entries[1:])) and
      entries[-1]['cnps'] <= cnp_rx and followed[-1]['state']['cnps'] == cnp_rx,
      f"CNP counts: last entry {entries[-1]['cnps']}, state "
      f"{followed[-1]['state']['cnps']}, CNP_RX {cnp_rx}")
    kinds = {e['event'] for e in entries}
    t({'cnp', 'bytes'} <= kinds, f'reductions and byte-counter increases traced: {kinds}')
    t(entries[0]['event'] == 'cnp' and entries[0]['rate_mbps'] < line,
      f'the first entry is a reduction: {entries[0]}')
    # Each cc show sample is the state after the entry before its trace_next.
    by_seq = {e['seq']: e for e in entries}
    wrong, used = [], 0
    for s in samples:
        n = s['trace_next']
        if n == 0:
            ok = s['rate_mbps'] == line
        elif n - 1 in by_seq:
            e, used = by_seq[n - 1], used + 1
            ok = e['rate_mbps'] == s['rate_mbps'] and e['target_mbps'] == s['target_mbps'] \
                and e['time_ns'] <= s['now_ns']
        else:
            ok = False
        if not ok:
            wrong.append((s, by_seq.get(n - 1)))
    t(used > 3 and not wrong, f'{used} of {len(samples)} cc show samples match the trace: '
      f'{wrong[:2]}')
    # The ring still holds all of it: a read from 0 (several requests) gives the same.
    again = json_lines(a.rocectl('cc', 'trace', qa, 'limit=4096', timeout=30).stdout)
    got = [e for r in again for e in r['entries']]
    t(len(again) >= len(entries) // 4096 and got[:len(entries)] == entries,
      f'read again: {len(got)} entries in {len(again)} replies')
    # For humans: a table and the state after it; CSV: a header and a row an entry.
    text = a.rocectl('cc', 'trace', qa, 'cursor=%d' % (len(got) - 5), json_out=False).stdout
    rows = [x for x in text.splitlines() if x.split() and x.split()[0].isdigit()]
    t('time_us' in text and 'now (' in text and len(rows) == 5, f'table:\n{text}')
    csv = a.rocectl('cc', 'trace', qa, '--csv', json_out=False).stdout.splitlines()
    t(csv[0].startswith('qpn,seq,time_ns,unix_ns,event') and len(csv) == len(got) + 1 and
      csv[1].split(',')[1] == '0' and csv[1].split(',')[4] == got[0]['event'],
      f'csv: {csv[:3]}')


def run(t, build, on):
    what = 'cc on' if on else 'cc off'
    with Pair(build) as p:
        a, b = p.a, p.b
        for d in (a, b):
            s = d.ctl('cc', 'show')
            t(s['profile'] == 'off' and not s['on'] and s['ecn'] == 'ect0' and
              s['knobs']['np_cnp_dscp'] == 48, f'{what}: default cc show: {s}')
            if on:
                r = d.ctl('cc', 'set', 'profile=mlx5', f'trace_len={TRACE_LEN}')
                t(r['on'] and r['profile'] == 'mlx5' and r['knobs']['rp_time_reset'] == 300
                  and r['trace_len'] == TRACE_LEN, f'cc set profile=mlx5: {r}')
        line = a.ctl('cc', 'show')['line_mbps']
        ma, mb = a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
        qa, qb = connect(a, b, timeout=12)
        b.ctl('impair', 'set', 'spec=ecn=20%,seed=5', 'dir=rx')
        tf = tempfile.TemporaryFile(mode='w+')
        fol = follow(a, qa['qpn'], tf) if on else None
        a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=65536',
              f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'duration_ms=1500', 'depth=8')
        rates, samples, end = [], [], time.time() + 15
        while True:
            time.sleep(0.05)
            if on:
                samples.append(a.ctl('cc', 'show', qa['qpn']))
                rates.append(samples[-1]['rate_mbps'])
            j = a.ctl('job', 'show', qa['qpn'])['job']
            if not j['running'] or time.time() > end:
                break
        if fol is not None:
            # The QP is back at full rate a few ms after the marks stop: its last entries.
            b.ctl('impair', 'clear')
            time.sleep(0.5)
            fol.send_signal(signal.SIGINT)
            err = fol.communicate(timeout=20)[1]
            t(fol.returncode == 0 and not err, f'cc trace --follow: exit {fol.returncode} {err}')
            tf.seek(0)
            followed = json_lines(tf.read())
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
            check_trace(t, a, qa['qpn'], line, ca['CNP_RX'], followed, samples)
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
            # The queues of a bottleneck on the QP's port come with its trace.
            r = b.ctl('cc', 'trace', qb['qpn'])
            t(r['queue'] == [] and r['entries'] == [], f"no bottleneck, no queue: {r['queue']}")
            b.ctl('impair', 'set', 'spec=bneck=1g:64k,red=8k:32k:0.5', 'dir=rx')
            q = b.ctl('cc', 'trace', qb['qpn'])['queue']
            t(len(q) == 1 and q[0]['port'] == 0 and q[0]['dir'] == 'rx' and
              q[0]['kmin_bytes'] == 8192 and q[0]['kmax_bytes'] == 32768 and
              q[0]['depth_bytes'] == 0, f'bottleneck queue in the trace: {q}')
            text = b.rocectl('cc', 'trace', qb['qpn'], json_out=False).stdout
            t('queue of port 0 rx: 0 bytes now' in text, f'queue for humans: {text}')
            b.ctl('impair', 'clear')
        else:
            t(imp['ce_marked'] == 0 and imp['seen'] > 1000, f'Not-ECT: nothing marked {imp}')
            t(cb['CE_RX'] == 0 and cb['CNP_TX'] == 0 and ca['CNP_RX'] == 0 and
              cb['CC_CE_RX'] == 0 and ca['PACED'] == 0, 'no CE, no CNP, no pacing')
            t('cc' not in qpa, f'qp show without cc: {qpa}')
            r = a.rocectl('cc', 'show', qa['qpn'], check=False)
            t(r.returncode != 0 and 'ENOENT' in r.stdout + r.stderr, f'no cc state: {r}')
            r = a.rocectl('cc', 'set', qa['qpn'], 'rp_ai_rate=10', check=False)
            t(r.returncode != 0 and 'ENOENT' in r.stdout + r.stderr, f'no per-QP knobs: {r}')
            r = a.rocectl('cc', 'trace', qa['qpn'], check=False)
            t(r.returncode == 1 and 'ENOENT' in r.stdout + r.stderr, f'no trace: {r}')
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
        r = a.rocectl('cc', 'set', 'trace_len=1000', check=False)
        t(r.returncode != 0 and 'power of 2' in r.stderr, f'trace_len 1000: {r.stderr.strip()}')
        r = a.rocectl('cc', 'set', qa['qpn'], 'trace_len=64', check=False)
        t(r.returncode != 0 and 'daemon-wide' in r.stderr, f'per-QP trace_len: {r.stderr}')
        r = a.rocectl('cc', 'trace', qa['qpn'], 'limit=5000', check=False)
        t(r.returncode != 0 and '4096' in r.stderr, f'limit 5000: {r.stderr.strip()}')
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
