#!/usr/bin/python3
"""Plot congestion control trajectories: rate, target rate and alpha over time, for one QP or
many, and a bottleneck's queue depth when the input has one, to a PNG.

usage: plot-cc.py [-o OUT.png] [--title TEXT] [--mbps] [--no-legend] FILE...

Each FILE (- for stdin) holds what `rocectl --json cc trace QPN [--follow]` prints: one
cc.trace reply, or one a line. Replies of one QP (same file, same qpn) make one series; any
number of files and QPs go on one figure. Times are put on one axis through each reply's
now_ns / unix_ns pair (the daemon's clock and the wall clock at the same instant), so traces
of several daemons on one host line up; 0 is the earliest entry of all.

Queues: a cc.trace reply has the bottleneck queues of the QP's port in that daemon
(drivers/impair's bneck=, "queue": [{"port", "dir", "depth_bytes", "kmin_bytes", "kmax_bytes",
...}]), read with the trace: each reply is a sample of each queue at its now_ns. Following a
QP of the daemon that has the bottleneck (`rocectl --json cc trace QPN --follow`, every
--watch SECS) gives the queue over time, at that resolution (0.1 s at best), in a third panel
in KiB with the RED thresholds (kmin dotted, kmax dashed).

Rates are step functions (the trace has the state right after each event); each series ends
with the state of its last reply at that reply's now_ns, and the time axis a little after the
last event of all. Needs python3-matplotlib (Debian).
doc/congestion-control.md has the trace's fields.
"""
import argparse
import json
import os
import sys


def read_objects(path):
    """Every JSON object in @path: one document, or JSON lines."""
    text = sys.stdin.read() if path == '-' else open(path).read()
    try:
        doc = json.loads(text)
        return doc if isinstance(doc, list) else [doc]
    except json.JSONDecodeError:
        return [json.loads(x) for x in text.splitlines() if x.strip()]


def wall_offset(obj, outer=None):
    """ns to add to the daemon's clock for the wall clock, or None."""
    for o in (obj, outer or {}):
        if 'now_ns' in o and 'unix_ns' in o:
            return int(o['unix_ns']) - int(o['now_ns'])
    return None


class Series:
    """One QP's trajectory: times in wall-clock ns, rates in Mb/s."""

    def __init__(self, name, qpn):
        self.name, self.qpn = name, qpn
        self.t, self.rate, self.target, self.alpha = [], [], [], []
        self.seen, self.end, self.line_mbps = set(), None, None

    def add(self, reply):
        off = wall_offset(reply)
        if off is None:
            raise ValueError(f'{self.name}: a reply without now_ns/unix_ns')
        self.line_mbps = reply.get('line_mbps', self.line_mbps)
        for e in reply.get('entries', []):
            if e['seq'] in self.seen:
                continue
            self.seen.add(e['seq'])
            self.t.append(int(e['time_ns']) + off)
            self.rate.append(e['rate_mbps'])
            self.target.append(e['target_mbps'])
            self.alpha.append(e['alpha'])
        st = reply.get('state')
        if st is not None:
            self.end = (int(reply['now_ns']) + off, st['rate_mbps'], st['target_mbps'],
                        st['alpha'])

    def points(self):
        """(t, rate, target, alpha) lists, in time order, with the final state."""
        rows = sorted(zip(self.t, self.rate, self.target, self.alpha))
        if self.end is not None and (not rows or self.end[0] >= rows[-1][0]):
            rows.append(self.end)
        return [list(c) for c in zip(*rows)] if rows else [[], [], [], []]


class Queue:
    """One bottleneck's depth over time: a sample for each reply that had it."""

    def __init__(self, name, port, direction):
        self.name = f'{name} port {port} {direction}'
        self.t, self.bytes, self.seen = [], [], set()
        self.kmin = self.kmax = None

    def add(self, at, q):
        if at in self.seen:
            return
        self.seen.add(at)
        self.t.append(at)
        self.bytes.append(q['depth_bytes'])
        # 0: no RED on it.
        self.kmin = q.get('kmin_bytes') or self.kmin
        self.kmax = q.get('kmax_bytes') or self.kmax

    def points(self):
        rows = sorted(zip(self.t, self.bytes))
        return [r[0] for r in rows], [r[1] for r in rows]


def load(paths):
    """Series by (file, qpn) and queues, from the files."""
    series, queues = {}, {}
    for path in paths:
        name = 'stdin' if path == '-' else os.path.splitext(os.path.basename(path))[0]
        for obj in read_objects(path):
            if not isinstance(obj, dict) or 'entries' not in obj or 'qpn' not in obj:
                continue
            key = (name, obj['qpn'])
            series.setdefault(key, Series(name, obj['qpn'])).add(obj)
            for q in obj.get('queue') or []:
                k = (name, q['port'], q['dir'])
                queues.setdefault(k, Queue(*k)).add(int(obj['now_ns']) + wall_offset(obj), q)
    # A QP followed only for its daemon's queue (one that sends nothing) has no entries.
    return ([s for s in series.values() if s.t or not queues], list(queues.values()))


def label(s, several_files):
    return f'{s.name} QP 0x{s.qpn:06x}' if several_files else f'QP 0x{s.qpn:06x}'


def plot(series, queues, title=None, mbps=False, legend=True):
    """A matplotlib Figure: rate and target rate, alpha, and the queue when there is one."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    if not series and not queues:
        raise ValueError('nothing to plot: no trace entries, no queue samples')
    nrows = 2 + (1 if queues else 0)
    fig, axes = plt.subplots(nrows, 1, sharex=True, figsize=(11, 3.2 * nrows),
                             squeeze=False)
    axes = [a[0] for a in axes]
    ax_rate, ax_alpha = axes[0], axes[1]
    t0 = min([min(s.points()[0]) for s in series if s.points()[0]] +
             [min(q.t) for q in queues if q.t])
    scale, unit = (1.0, 'Mb/s') if mbps else (1e-3, 'Gb/s')
    several = len({s.name for s in series}) > 1
    colors = plt.rcParams['axes.prop_cycle'].by_key()['color']
    for i, s in enumerate(series):
        t, rate, target, alpha = s.points()
        x = [(v - t0) / 1e6 for v in t]
        c = colors[i % len(colors)]
        ax_rate.step(x, [r * scale for r in rate], where='post', color=c, linewidth=1.2,
                     label=f'{label(s, several)} rate')
        ax_rate.step(x, [r * scale for r in target], where='post', color=c, linewidth=0.8,
                     linestyle='--', label=f'{label(s, several)} target')
        ax_alpha.step(x, alpha, where='post', color=c, linewidth=1.0, label=label(s, several))
    lines = {s.line_mbps for s in series if s.line_mbps}
    for ln in lines:
        ax_rate.axhline(ln * scale, color='grey', linewidth=0.6, linestyle=':')
    ax_rate.set_ylabel(f'rate ({unit})')
    ax_rate.set_ylim(bottom=0)
    ax_alpha.set_ylabel('alpha')
    ax_alpha.set_ylim(0, 1.05)
    if queues:
        ax_q = axes[2]
        for i, q in enumerate(queues):
            t, b = q.points()
            ax_q.plot([(v - t0) / 1e6 for v in t], [v / 1024 for v in b], marker='.',
                      markersize=3, color=colors[(len(series) + i) % len(colors)],
                      label=q.name)
            for k, ls in ((q.kmin, ':'), (q.kmax, '--')):
                if k is not None:
                    ax_q.axhline(k / 1024, color='grey', linewidth=0.6, linestyle=ls)
        ax_q.set_ylabel('queue (KiB)')
        ax_q.set_ylim(bottom=0)
        if legend:
            ax_q.legend(loc='upper right', fontsize='small')
    # Each series' last step runs to its reply's time, which may be long after: the axis
    # ends a little after the last event of any series or queue sample.
    last = max([max(s.t) for s in series if s.t] + [max(q.t) for q in queues if q.t],
               default=None)
    if last is not None and last > t0:
        axes[-1].set_xlim(left=0, right=(last - t0) / 1e6 * 1.03)
    axes[-1].set_xlabel('time (ms)')
    # Many QPs: a legend would hide the plot; the title says how many.
    if legend and len(series) <= 8:
        ax_rate.legend(loc='lower right', fontsize='small', ncol=2)
        ax_alpha.legend(loc='upper right', fontsize='small')
    for a in axes:
        a.grid(True, linewidth=0.3)
    fig.suptitle(title or f'DCQCN: {len(series)} QP{"s" if len(series) != 1 else ""}')
    fig.tight_layout()
    return fig


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('files', nargs='+', metavar='FILE', help="rocectl --json cc trace output "
                    "(- for stdin)")
    ap.add_argument('-o', '--output', default='cc.png', help='PNG to write (default cc.png)')
    ap.add_argument('--title', help='figure title')
    ap.add_argument('--mbps', action='store_true', help='rates in Mb/s (default Gb/s)')
    ap.add_argument('--no-legend', action='store_true', help='no legends')
    a = ap.parse_args(argv)
    try:
        series, queues = load(a.files)
        fig = plot(series, queues, a.title, a.mbps, not a.no_legend)
    except (OSError, ValueError, KeyError) as e:
        print(f'plot-cc: {e}', file=sys.stderr)
        return 1
    fig.savefig(a.output, dpi=110)
    n = sum(len(s.t) for s in series)
    print(f'plot-cc: {len(series)} QPs, {n} entries, {len(queues)} queues -> {a.output}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
