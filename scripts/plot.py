#!/usr/bin/python3
"""Pictures of rocedp runs (python3-matplotlib, Debian's), from what rocectl prints with --json.

  plot.py lat FILE... -o OUT.png     latency: the CDF and histogram of a job's round trips
                                     (`rocectl --json job show QPN --hist`: every bucket), or
                                     the percentile ladder of `rocectl perf ... --lat --json`
                                     (it carries min, median, p99, p99.9, max, not samples);
                                     p50, p99 and p99.9 marked
  plot.py bw FILE -o OUT.png         bandwidth over time: per QP and their sum from
                                     `rocectl --json top --watch S` samples, or per port from
                                     `rocectl --json stats --watch S` samples
  plot.py sizes FILE... -o OUT.png   bandwidth against message size of `rocectl perf ... -a
                                     --json` (one curve per file)

Several FILEs draw one curve each, labelled by file name. Exit status 0, 2 for bad input.
"""
import argparse
import json
import os
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402


def load_lines(path):
    """JSON documents of a file: one, or one per line (--watch)."""
    text = open(path).read().strip()
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(x) for x in text.splitlines() if x.strip()]


def label(path):
    return os.path.splitext(os.path.basename(path))[0]


def hist_of(doc):
    """[(ns, count)] of a job show --hist reply, or None."""
    rtt = (doc.get('job') or {}).get('rtt_ns') or {}
    h = rtt.get('hist')
    return [(float(v), int(c)) for v, c in h] if h else None


def quantile(pairs, q):
    total = sum(c for _, c in pairs)
    run = 0
    for v, c in pairs:
        run += c
        if run >= q * total:
            return v
    return pairs[-1][0]


def plot_lat(files, out):
    fig, (cdf, hst) = plt.subplots(1, 2, figsize=(12, 4.5))
    for path in files:
        for doc in load_lines(path):
            pairs = hist_of(doc)
            if pairs:
                total = sum(c for _, c in pairs)
                xs, ys, run = [], [], 0
                for v, c in pairs:
                    run += c
                    xs.append(v / 1000)
                    ys.append(run / total)
                cdf.step(xs, ys, where='post', label=label(path))
                hst.bar([v / 1000 for v, _ in pairs], [c for _, c in pairs],
                        width=[max(v / 1000 / 128, 1e-3) for v, _ in pairs],
                        label=label(path))
                marks = [(q, quantile(pairs, q) / 1000) for q in (0.5, 0.99, 0.999)]
            else:
                r = (doc.get('results') or [None])[0]
                if not r or 'median' not in r:
                    raise ValueError(f'{path}: neither job show --hist nor perf --lat JSON')
                pts = [(0.0, r['min']), (0.5, r['median']), (0.99, r['p99']),
                       (0.999, r['p999']), (1.0, r['max'])]
                cdf.plot([v for _, v in pts], [q for q, _ in pts], marker='o',
                         label=f'{label(path)} ({r["bytes"]} B, percentiles)')
                marks = [(q, v) for q, v in pts[1:4]]
            for q, v in marks:
                name = {0.5: 'p50', 0.99: 'p99', 0.999: 'p99.9'}[q]
                cdf.axvline(v, linestyle=':', color='grey')
                cdf.annotate(f'{name} {v:.2f} us', (v, q), fontsize=8,
                             xytext=(4, -12), textcoords='offset points')
    cdf.set_xscale('log')
    cdf.set_xlabel('latency (us)')
    cdf.set_ylabel('fraction of samples')
    cdf.set_title('latency CDF')
    cdf.legend(fontsize=8)
    hst.set_xscale('log')
    hst.set_xlabel('latency (us)')
    hst.set_ylabel('samples')
    hst.set_title('latency histogram')
    fig.tight_layout()
    fig.savefig(out)
    return fig


def series(docs, key_list, key_id, fields):
    """{id: [(t_s, bit/s)]} from consecutive samples with clock_ns."""
    out, prev = {}, None
    t0 = docs[0]['clock_ns']
    for d in docs:
        cur = {e[key_id]: e for e in d[key_list]}
        if prev is not None:
            dt = (d['clock_ns'] - prev['clock_ns']) / 1e9
            before = {e[key_id]: e for e in prev[key_list]}
            for k, e in cur.items():
                if k in before and dt > 0:
                    bits = sum(e[f] - before[k][f] for f in fields) * 8
                    out.setdefault(k, []).append(((d['clock_ns'] - t0) / 1e9, bits / dt))
        prev = d
    return out


def plot_bw(path, out):
    docs = [d for d in load_lines(path) if d.get('ok', True)]
    if len(docs) < 2:
        raise ValueError(f'{path}: needs two samples or more (--watch)')
    fig, ax = plt.subplots(figsize=(10, 4.5))
    if 'qps' in docs[0]:
        per = series(docs, 'qps', 'qpn', ('tx_bytes',))
        what = 'QP 0x%06x'
    elif 'ports' in docs[0]:
        per = series(docs, 'ports', 'port', ('obytes',))
        what = 'port %d tx'
    else:
        raise ValueError(f'{path}: neither top nor stats samples')
    total = {}
    for k, pts in sorted(per.items()):
        ax.plot([t for t, _ in pts], [b / 1e9 for _, b in pts], label=what % k)
        for t, b in pts:
            total[t] = total.get(t, 0) + b
    ts = sorted(total)
    ax.plot(ts, [total[t] / 1e9 for t in ts], color='black', linewidth=2, label='aggregate')
    ax.set_xlabel('time (s)')
    ax.set_ylabel('Gbit/s')
    ax.set_title(f'bandwidth over time ({label(path)})')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    return fig


def plot_sizes(files, out):
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for path in files:
        d = load_lines(path)[0]
        rs = d.get('results') or []
        if not rs or 'bw_avg' not in rs[0]:
            raise ValueError(f'{path}: not rocectl perf bandwidth JSON')
        # perftest's MB/sec are 2^20 bytes; --report-gbits gives Gb/sec.
        scale = 1.0 if rs[0].get('unit') == 'Gb/sec' else 8 * 1048576 / 1e9
        ax.plot([r['bytes'] for r in rs], [r['bw_avg'] * scale for r in rs], marker='o',
                label=f'{label(path)} ({d.get("test", "?")})')
    ax.set_xscale('log', base=2)
    ax.set_xlabel('message size (bytes)')
    ax.set_ylabel('average bandwidth (Gbit/s)')
    ax.set_title('bandwidth against message size')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    return fig


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('kind', choices=('lat', 'bw', 'sizes'))
    ap.add_argument('files', nargs='+')
    ap.add_argument('-o', '--output', required=True, help='PNG to write')
    a = ap.parse_args(argv)
    try:
        if a.kind == 'lat':
            plot_lat(a.files, a.output)
        elif a.kind == 'bw':
            plot_bw(a.files[0], a.output)
        else:
            plot_sizes(a.files, a.output)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f'plot.py: {e}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
