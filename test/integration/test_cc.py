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

QPs connected with CC off get it later from `cc set QPN profile=...` (and B's QP the
notification point alone with np_enable=1), with a codepoint of their own (ECT(1), marked;
Not-ECT, never marked), and lose it again with `--reset`. Bad CNPs from a real peer: a CNP
flood (B answers every CE mark, np_min_time_between_cnps=0, 100 % marked) is heard in full and
folded by the monitor period; CNPs to a QP congestion control does not track and to a QP
number that does not exist (B's QPs connected to them) are counted (CC_CNP_UNKNOWN_QP,
UNKNOWN_QP); the daemon serves throughout.

A job's rate (job start rate_mbps=, what rocectl perf --rate asks) goes through the per-QP
pacer, with CC off too: the QP is tracked with its reaction and notification points off,
limited to the job's payload rate on the wire, paced, and untracked again when the job ends;
the job's goodput is within 3 % of the rate, with the default burst and with pace_burst=8.

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
from rocedp_it import Checks, Pair, connect, MR_ALL, QP_ALL  # noqa: E402

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


def run_job(d, qpn, ma, mb, ms, length=65536, depth=8):
    """A WRITE job on @qpn for @ms ms; returns its job show once done."""
    d.ctl('job', 'start', qpn, 'op=write', f"lkey={ma['lkey']}", f'length={length}',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", f'duration_ms={ms}',
          f'depth={depth}')
    end = time.time() + 20 + ms / 1000
    while True:
        time.sleep(0.05)
        j = d.ctl('job', 'show', qpn)['job']
        if not j['running'] or time.time() > end:
            return j


def diff(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items() if isinstance(v, int)}


def marks(b):
    return b.ctl('impair', 'show', 0, 'dir=rx')['impair'][0]['counters']


def track_later(t, a, b, qa, qb, ma, mb):
    """QPs connected with congestion control off get it from cc set QPN, with a codepoint of
    their own; --reset takes it away again (it is off daemon-wide)."""
    r = a.ctl('cc', 'set', qa, 'profile=mlx5', 'ecn=ect1')
    t(r['tracked'] and r['own_knobs'] and r['ecn'] == 'ect1' and
      r['knobs']['rp_enable'] == 1 and r['knobs']['rp_time_reset'] == 300,
      f'A\'s QP tracked from now on, ECT(1): {r}')
    r = b.ctl('cc', 'set', qb, 'np_enable=1')
    t(r['tracked'] and r['ecn'] == 'ect0' and r['knobs']['np_enable'] == 1 and
      r['knobs']['rp_enable'] == 0, f"B's QP: its notification point alone, ECT(0): {r}")
    t(not a.ctl('cc', 'show')['on'] and not b.ctl('cc', 'show')['on'], 'still off daemon-wide')
    m0, ca0, cb0 = marks(b), a.ctl('counters')['counters'], b.ctl('counters')['counters']
    j = run_job(a, qa, ma, mb, 400)
    m, ca, cb = diff(marks(b), m0), diff(a.ctl('counters')['counters'], ca0), \
        diff(b.ctl('counters')['counters'], cb0)
    print(f"  tracked later: {m['ce_marked']} of {m['seen']} marked, B CNP_TX {cb['CNP_TX']}, "
          f"A CNP_RX {ca['CNP_RX']}, reductions {ca['CC_RATE_REDUCE']}", flush=True)
    t(not j['running'] and j['errors'] == 0 and j['completed'] > 0, f'job {j}')
    t(m['ce_marked'] > 50 and cb['CE_RX'] == m['ce_marked'] and cb['CNP_TX'] > 0 and
      cb['CC_CNP_TX'] == cb['CNP_TX'], f'ECT(1) marked, B answered: {m}, {cb["CNP_TX"]}')
    t(ca['CNP_RX'] == cb['CNP_TX'] and ca['CC_CNP_RX'] == ca['CNP_RX'] and
      ca['CC_RATE_REDUCE'] > 0, 'A heard every CNP and reduced')
    s = a.ctl('cc', 'show', qa)
    t(s['cnps'] == ca['CNP_RX'] and s['ecn'] == 'ect1' and s['own_knobs'], f'cc show {s}')
    c = a.ctl('qp', 'show', qa)['qps'][0].get('cc')
    t(c is not None and c['ecn'] == 'ect1', f'qp show has its cc: {c}')
    # Its own codepoint changed while tracked: Not-ECT is never marked.
    r = a.ctl('cc', 'set', qa, 'ecn=not_ect')
    t(r['tracked'] and r['ecn'] == 'not_ect' and r['knobs']['rp_enable'] == 1, f'not_ect {r}')
    m0 = marks(b)
    j = run_job(a, qa, ma, mb, 200)
    m = diff(marks(b), m0)
    t(j['errors'] == 0 and m['seen'] > 100 and m['ce_marked'] == 0,
      f'Not-ECT: {m["seen"]} seen, {m["ce_marked"]} marked')
    # The daemon's settings again: with congestion control off, none.
    r = a.ctl('cc', 'set', qa, '--reset')
    t(not r['tracked'] and 'knobs' not in r, f'reset: no longer tracked {r}')
    r = a.rocectl('cc', 'show', qa, check=False)
    t(r.returncode == 1 and 'ENOENT' in r.stderr, f'untracked again: {r.stderr}')
    t('cc' not in a.ctl('qp', 'show', qa)['qps'][0], 'qp show without cc')
    for args, what in ((['--reset'], 'ENOENT'), (['ecn=ect0'], 'profile=mlx5'),
                       (['--reset', 'rp_ai_rate=10'], 'reset: no profile')):
        r = a.rocectl('cc', 'set', qa, *args, check=False)
        t(r.returncode == 1 and what in r.stderr, f'cc set {args}: {r.stderr.strip()}')
    m0 = marks(b)
    j = run_job(a, qa, ma, mb, 200)
    m = diff(marks(b), m0)
    t(j['errors'] == 0 and m['seen'] > 100 and m['ce_marked'] == 0, f'Not-ECT after reset {m}')
    b.ctl('cc', 'set', qb, '--reset')
    t('cc' not in b.ctl('qp', 'show', qb)['qps'][0], "B's QP untracked too")
    # A QP not connected cannot start it.
    q = a.ctl('qp', 'create', 'access=remote_write')['qp']
    r = a.rocectl('cc', 'set', q['qpn'], 'profile=mlx5', check=False)
    t(r.returncode == 1 and 'INIT' in r.stderr, f'INIT QP refused: {r.stderr.strip()}')


def paced_jobs(t, a, qa, ma, mb, on):
    """A job's rate through the pacer; the pacer's burst."""
    what = 'cc on' if on else 'cc off'
    t(a.ctl('cc', 'show')['pace_burst'] == 32, 'default burst 32')
    for burst in (32, 8):
        r = a.ctl('cc', 'set', f'pace_burst={burst}')
        t(r['pace_burst'] == burst, f'pace_burst={burst}: {r}')
        c0 = a.ctl('counters', f'qpn={qa}')['counters']
        full0 = a.ctl('counters')['counters']['CC_PACE_FULL']
        a.ctl('job', 'start', qa, 'op=write', f"lkey={ma['lkey']}", 'length=65536',
              f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'duration_ms=1000',
              'depth=8', 'rate_mbps=1000')
        time.sleep(0.3)
        s = a.ctl('cc', 'show', qa)
        # The payload rate on the wire: 82 bytes more per packet of a 64 KiB message, in
        # packets of qp connect's default MTU, 1024.
        lim = 1000 * (65536 + 64 * 82) / 65536
        t(abs(s['limit_mbps'] - lim) < 0.01 and abs(s['pace_mbps'] - lim) < 0.01 and
          (s['knobs']['rp_enable'] == (1 if on else 0)) and
          (s['knobs']['np_enable'] == (1 if on else 0)),
          f"{what}: paced at {s['limit_mbps']} Mb/s on the wire (want {lim:.3f}): {s}")
        end = time.time() + 15
        while a.ctl('job', 'show', qa)['job']['running'] and time.time() < end:
            time.sleep(0.05)
        j = a.ctl('job', 'show', qa)['job']
        c = diff(a.ctl('counters', f'qpn={qa}')['counters'], c0)
        full = a.ctl('counters')['counters']['CC_PACE_FULL'] - full0
        print(f"  {what}: paced job, burst {burst}: {j['gbps'] * 1000:.1f} Mb/s of 1000 "
              f"({j['completed']} x 64 KiB), {c['PACED']} waits, {full} turns late",
              flush=True)
        # Never faster than the rate. Slower only when the worker runs late by more than
        # half a burst: two daemons' workers time-sharing a loaded machine's CPUs do
        # (the unit test test_pacer holds the rate to 2 % on a virtual clock).
        t(not j['running'] and j['errors'] == 0 and 0.1 <= j['gbps'] <= 1.02,
          f'{what}: goodput {j["gbps"]:.4f} Gb/s for a rate of 1 Gb/s')
        t(j['gbps'] >= 0.98 or full > 0, f'{what}: a shortfall the pacer saw ({full} turns '
          f'found the bucket full)')
        t(c['PACED'] > 100, f"{what}: the pacer held it back: {c['PACED']}")
        time.sleep(0.1)
        r = a.rocectl('cc', 'show', qa, check=False)
        if on:
            s = json.loads(r.stdout)
            t(s['limit_mbps'] == 0 and s['pace_mbps'] == 0 and s['knobs']['rp_enable'] == 1,
              f'cc on: the job gone, no cap, still tracked: {s}')
        else:
            t(r.returncode == 1 and 'ENOENT' in r.stderr, f'cc off: untracked again: {r}')
    a.ctl('cc', 'set', 'pace_burst=32')
    for v in ('0', '5000'):
        r = a.rocectl('cc', 'set', f'pace_burst={v}', check=False)
        t(r.returncode == 1 and '4096' in r.stderr, f'pace_burst={v}: {r.stderr.strip()}')


def bad_cnps(t, build):
    """CNPs no reaction point asked for, from a real peer: a flood to a tracked QP, CNPs to a
    QP without congestion control and to a QP number that does not exist."""
    with Pair(build) as p:
        a, b = p.a, p.b
        ma, mb = a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
        # Connected before congestion control is on: A never tracks it.
        qz, qw = connect(a, b, timeout=12)
        for d in (a, b):
            d.ctl('cc', 'set', 'profile=mlx5', 'np_min_time_between_cnps=0',
                  f'trace_len={TRACE_LEN}')
        qa, qb = connect(a, b, timeout=12)
        # B's QPs whose peer QP is Z (untracked) or a number A does not have: A's WRITEs
        # reach them (RC carries no source QP), their ACKs and CNPs go astray.
        ghost = 0x0ABCDE
        stray = []
        for rq in (qz['qpn'], ghost):
            x, y = a.ctl('qp', 'create', QP_ALL)['qp'], b.ctl('qp', 'create', QP_ALL)['qp']
            a.ctl('qp', 'connect', x['qpn'], y['qpn'], y['psn'], y['ip'], 'retry_cnt=1',
                  'timeout=10')
            b.ctl('qp', 'connect', y['qpn'], rq, x['psn'], x['ip'])
            stray.append(x)
        b.ctl('impair', 'set', 'spec=ecn=100%,seed=3', 'dir=rx')
        ca0, cb0 = a.ctl('counters')['counters'], b.ctl('counters')['counters']
        for x in stray:
            a.ctl('job', 'start', x['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=4096',
                  f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'count=4', 'depth=4')
        j = run_job(a, qa['qpn'], ma, mb, 400, length=4096, depth=4)
        time.sleep(0.3)
        ca, cb = diff(a.ctl('counters')['counters'], ca0), \
            diff(b.ctl('counters')['counters'], cb0)
        tr = json_lines(a.rocectl('cc', 'trace', qa['qpn'], 'limit=4096', timeout=30).stdout)
        low = min([e['rate_mbps'] for r in tr for e in r['entries']] or [0])
        zc = a.ctl('counters', f"qpn={qz['qpn']}")['counters']
        print(f"  bad CNPs: B CE_RX {cb['CE_RX']} CNP_TX {cb['CNP_TX']}; A CNP_RX "
              f"{ca['CNP_RX']} held {ca['CC_CNP_HELD']} reductions {ca['CC_RATE_REDUCE']} "
              f"lowest {low:.1f} Mb/s, CC_CNP_UNKNOWN_QP {ca['CC_CNP_UNKNOWN_QP']}, "
              f"NOT_OURS {ca['NOT_OURS']}, UNKNOWN_QP {ca['UNKNOWN_QP']}", flush=True)
        t(not j['running'] and j['errors'] == 0 and j['completed'] > 0, f'flooded job {j}')
        t(cb['CC_CNP_SUPPRESSED'] == 0 and cb['CNP_TX'] == cb['CE_RX'] and
          cb['CNP_TX'] > 1000, f"B answered every mark: {cb['CE_RX']} CE, {cb['CNP_TX']} CNPs")
        qc = a.ctl('counters', f"qpn={qa['qpn']}")['counters']
        # Those to the ghost QP number are dropped before any QP: no QP's CNP_RX.
        ghosts = ca['NOT_OURS'] + ca['UNKNOWN_QP']
        t(qc['CNP_RX'] == ca['CC_CNP_RX'] and ca['CNP_RX'] == qc['CNP_RX'] + zc['CNP_RX'] and
          0 < cb['CNP_TX'] - ca['CNP_RX'] <= ghosts,
          f"A heard them: its QP {qc['CNP_RX']} (lib/cc {ca['CC_CNP_RX']}), Z {zc['CNP_RX']}, "
          f"B sent {cb['CNP_TX']}, {ghosts} dropped for no QP")
        t(ca['CC_CNP_HELD'] > ca['CC_RATE_REDUCE'] > 0 and
          ca['CC_RATE_REDUCE'] < ca['CC_CNP_RX'], 'the flood folded by the monitor period')
        # The first cut alone halves it (alpha starts at 1023/1024).
        t(0 < low <= a.ctl('cc', 'show')['line_mbps'] * 0.51, f'the rate fell to {low} Mb/s')
        t(ca['CC_CNP_UNKNOWN_QP'] > 0 and zc['CNP_RX'] == ca['CC_CNP_UNKNOWN_QP'],
          f"CNPs to the untracked QP: CC_CNP_UNKNOWN_QP {ca['CC_CNP_UNKNOWN_QP']}, its CNP_RX "
          f"{zc['CNP_RX']}")
        t(ghosts > 0, f"to a QP number A lacks: NOT_OURS {ca['NOT_OURS']}, UNKNOWN_QP "
          f"{ca['UNKNOWN_QP']}")
        # Serving: status, and a fresh pair's job.
        t(a.ctl('status')['ok'] and b.ctl('status')['ok'], 'both daemons answer')
        b.ctl('impair', 'clear')
        qc, qd = connect(a, b, timeout=12)
        j = run_job(a, qc['qpn'], ma, mb, 200)
        t(j['errors'] == 0 and j['completed'] > 0, f'a new QP works: {j}')


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
    # The ring still holds the last TRACE_LEN of it (all of it, unless a loaded machine made
    # the run longer than the ring): a read from 0 (several requests) gives the same.
    held = entries[-TRACE_LEN:]
    again = json_lines(a.rocectl('cc', 'trace', qa, 'limit=4096', timeout=30).stdout)
    got = [e for r in again for e in r['entries']]
    t(len(again) >= len(held) // 4096 and got[:len(held)] == held,
      f'read again: {len(got)} entries in {len(again)} replies, {len(entries)} followed')
    # For humans: a table and the state after it; CSV: a header and a row an entry. A QP
    # still below the line rate adds a timer entry every rp_time_reset meanwhile.
    text = a.rocectl('cc', 'trace', qa, 'cursor=%d' % got[-5]['seq'], json_out=False).stdout
    rows = [x for x in text.splitlines() if x.split() and x.split()[0].isdigit()]
    t('time_us' in text and 'now (' in text and len(rows) >= 5 and
      rows[0].split()[0] == str(got[-5]['seq']), f'table:\n{text[:2000]}')
    csv = a.rocectl('cc', 'trace', qa, '--csv', json_out=False).stdout.splitlines()
    t(csv[0].startswith('qpn,seq,time_ns,unix_ns,event') and len(csv) >= len(got) + 1 and
      [r.split(',')[1] for r in csv[1:len(got) + 1]] == [str(e['seq']) for e in got] and
      csv[1].split(',')[4] == got[0]['event'], f'csv: {csv[:3]}')


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
            # Paced at its DCQCN rate (it waits only once the bucket runs dry: memif at
            # 100 Gb/s and cuts from there seldom make it).
            t(ca['CC_RATE_REDUCE'] > 0 and any(0 < x['pace_mbps'] < line for x in samples),
              'A reduced and was paced')
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
            paced_jobs(t, a, qa['qpn'], ma, mb, True)
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
            track_later(t, a, b, qa['qpn'], qb['qpn'], ma, mb)
            paced_jobs(t, a, qa['qpn'], ma, mb, False)
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
        if on:
            # The QP's own codepoint, then the daemon's again.
            r = a.ctl('cc', 'set', qa['qpn'], 'ecn=ect1')
            t(r['ecn'] == 'ect1' and a.ctl('cc', 'show', qa['qpn'])['ecn'] == 'ect1',
              f'own ECN: {r}')
            r = a.ctl('cc', 'set', qa['qpn'], '--reset')
            t(r['tracked'] and r['ecn'] == 'ect0' and not r['own_knobs'], f'reset: {r}')
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
    bad_cnps(t, build)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
