#!/usr/bin/python3
"""scripts/plot-cc.py on recorded traces (test/unit/data/cc-trace/bneck-2qps: two QPs of one
daemon followed through a bottleneck, and the other daemon's queue): the series and queue it
reads, the figure it draws (checked through matplotlib's objects: panels, labels, legends,
the data of each line), the PNG it writes, two QPs in one file, and refused input.

usage: test_plot_cc.py SOURCE_ROOT
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault('MPLBACKEND', 'Agg')

failed = checks = 0


def check(cond, what):
    global failed, checks
    checks += 1
    if not cond:
        failed += 1
        print(f'FAIL plot_cc: {what}', flush=True)


def load_module(root):
    spec = importlib.util.spec_from_file_location('plot_cc', os.path.join(root, 'scripts',
                                                                          'plot-cc.py'))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def replies(path):
    return [json.loads(x) for x in open(path) if x.strip()]


def off(r):
    return r['unix_ns'] - r['now_ns']


def wall_entries(rs):
    """(wall time, entry) of every entry of a followed QP's replies."""
    return [(e['time_ns'] + off(r), e) for r in rs for e in r['entries']]


def test_series(m, files):
    series, queues = m.load(files['a'])
    check(len(series) == 2 and not queues, f'two series, no queue: {len(series)}, {queues}')
    for path, s in zip(files['a'], sorted(series, key=lambda x: x.name)):
        rs = replies(path)
        we = wall_entries(rs)
        check(s.name == os.path.basename(path)[:-6] and s.qpn == rs[0]['qpn'] and
              len(s.t) == len(we) > 500, f'{path}: {len(s.t)} of {len(we)} entries read')
        t, rate, target, alpha = s.points()
        check(t[:-1] == [w for w, _ in we] and rate[:-1] == [e['rate_mbps'] for _, e in we] and
              alpha[:-1] == [e['alpha'] for _, e in we],
              f'{s.name}: points are the entries on the wall clock')
        last = rs[-1]
        check(t[-1] == last['now_ns'] + off(last) and rate[-1] == last['state']['rate_mbps'] and
              target[-1] == last['state']['target_mbps'], f'{s.name}: ends with the state')
    return series


def line_data(ax):
    return {ln.get_label(): ln for ln in ax.get_lines()}


def test_figure(m, files, series):
    import matplotlib.pyplot as plt

    fig = m.plot(series, [], title='two QPs')
    axes = fig.get_axes()
    check(len(axes) == 2, f'two panels without a queue: {len(axes)}')
    ax_rate, ax_alpha = axes[0], axes[1]
    check(ax_rate.get_ylabel() == 'rate (Gb/s)' and ax_alpha.get_ylabel() == 'alpha' and
          ax_alpha.get_xlabel() == 'time (ms)', f'labels: {ax_rate.get_ylabel()!r} '
          f'{ax_alpha.get_ylabel()!r} {ax_alpha.get_xlabel()!r}')
    check(fig._suptitle is not None and fig._suptitle.get_text() == 'two QPs', 'title')
    lines = line_data(ax_rate)
    rss = {p: replies(p) for p in files['a']}
    names = {p: f"{os.path.basename(p)[:-6]} QP 0x{rs[0]['qpn']:06x}" for p, rs in rss.items()}
    want = {f'{n} {k}' for n in names.values() for k in ('rate', 'target')}
    check(want <= set(lines), f'rate and target lines: {sorted(lines)}')
    legend = ax_rate.get_legend()
    check(legend is not None and want == {t.get_text() for t in legend.get_texts()},
          'rate legend names every line, by file and QP')
    check(any(list(ln.get_ydata()) == [100.0, 100.0] for ln in ax_rate.get_lines()),
          'line rate drawn at 100 Gb/s')
    t0 = min(w for rs in rss.values() for w, _ in wall_entries(rs))
    for p, rs in rss.items():
        name, we = names[p], wall_entries(rs)
        ln = lines.get(f'{name} rate')
        if ln is None:
            continue
        y, x = list(ln.get_ydata()), list(ln.get_xdata())
        check(len(y) == len(we) + 1 and
              all(abs(a - e['rate_mbps'] / 1e3) < 1e-9 for a, (_, e) in zip(y, we)),
              f'{name}: rate line in Gb/s is the entries')
        check(all(abs(a - (w - t0) / 1e6) < 1e-9 for a, (w, _) in zip(x, we)) and
              x == sorted(x), f'{name}: x in ms from the first entry of all')
        yt = list(lines[f'{name} target'].get_ydata())
        check(all(abs(a - e['target_mbps'] / 1e3) < 1e-9 for a, (_, e) in zip(yt, we)),
              f'{name}: target line')
        ya = list(line_data(ax_alpha)[name].get_ydata())
        check(ya[:-1] == [e['alpha'] for _, e in we], f'{name}: alpha line')
    check(ax_alpha.get_ylim() == (0, 1.05), f'alpha from 0 to 1.05: {ax_alpha.get_ylim()}')
    last = max(w for rs in rss.values() for w, _ in wall_entries(rs))
    right = ax_alpha.get_xlim()[1]
    check(abs(right - (last - t0) / 1e6 * 1.03) < 1e-6, f'axis ends after the last event: '
          f'{right}')
    plt.close(fig)
    fig = m.plot(series, [], mbps=True)
    check(fig.get_axes()[0].get_ylabel() == 'rate (Mb/s)', 'Mb/s label')
    plt.close(fig)


def test_queue(m, files):
    """B's queue, from the replies of the QP followed on B, on the same wall clock."""
    import matplotlib.pyplot as plt

    series, queues = m.load(files['a'] + [files['b']])
    check(len(series) == 2 and len(queues) == 1 and queues[0].name == 'b-queue port 0 rx',
          f'two QPs (B\'s, without entries, left out) and B\'s queue: {len(series)}, '
          f'{[q.name for q in queues]}')
    rb = [r for r in replies(files['b']) if r['queue']]
    fig = m.plot(series, queues)
    axes = fig.get_axes()
    check(len(axes) == 3 and axes[2].get_ylabel() == 'queue (KiB)' and
          axes[2].get_xlabel() == 'time (ms)' and axes[1].get_xlabel() == '',
          f'queue panel at the bottom: {[a.get_ylabel() for a in axes]}')
    ql = line_data(axes[2]).get('b-queue port 0 rx')
    depths = [r['queue'][0]['depth_bytes'] / 1024 for r in rb]
    check(ql is not None and list(ql.get_ydata()) == depths and max(depths) > 100,
          f'queue line in KiB, one point a reply: {depths}')
    t0 = min(w for p in files['a'] for w, _ in wall_entries(replies(p)))
    t0 = min([t0] + [r['now_ns'] + off(r) for r in rb])
    check(ql is not None and all(abs(a - (r['now_ns'] + off(r) - t0) / 1e6) < 1e-9
                                 for a, r in zip(ql.get_xdata(), rb)),
          'queue samples at their replies\' times, on the traces\' axis')
    ys = sorted(ln.get_ydata()[0] for ln in axes[2].get_lines()
                if ln.get_label() != 'b-queue port 0 rx')
    check(ys == [20.0, 200.0], f'kmin and kmax drawn (20 and 200 KiB): {ys}')
    check(axes[2].get_legend() is not None, 'queue legend')
    plt.close(fig)


def test_cli(root, files, tmp):
    import matplotlib.image as mpimg

    script = os.path.join(root, 'scripts', 'plot-cc.py')
    out = os.path.join(tmp, 'cc.png')
    r = subprocess.run([sys.executable, script, '-o', out] + files['a'] + [files['b']],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and '2 QPs' in r.stdout and '1 queues' in r.stdout,
          f'plot-cc: {r.returncode} {r.stdout}{r.stderr}')
    ok = os.path.exists(out) and os.path.getsize(out) > 10000
    check(ok and open(out, 'rb').read(8) == b'\x89PNG\r\n\x1a\n', 'a PNG written')
    if ok:
        img = mpimg.imread(out)
        check(img.ndim == 3 and img.shape[0] > 600 and img.shape[1] > 600 and
              float(img[..., :3].std()) > 0.01, f'a picture, not a blank: {img.shape}')
    # Both QPs in one file: two series of that file, labelled by QP only.
    one = os.path.join(tmp, 'both.jsonl')
    with open(one, 'w') as f:
        for p in files['a']:
            f.write(open(p).read())
    m = load_module(root)
    series, _ = m.load([one])
    check(sorted(s.qpn for s in series) == [0x10000, 0x10001] and
          {s.name for s in series} == {'both'}, 'two QPs from one file')
    import matplotlib.pyplot as plt
    fig = m.plot(series, [])
    labels = {t.get_text() for t in fig.get_axes()[0].get_legend().get_texts()}
    check('QP 0x010000 rate' in labels, f'one file: labels by QP: {labels}')
    plt.close(fig)
    # Refused: nothing to plot, a reply without its clock, a missing file.
    empty = os.path.join(tmp, 'empty.json')
    with open(empty, 'w') as f:
        f.write('{"ok": true}\n')
    bad = os.path.join(tmp, 'bad.json')
    with open(bad, 'w') as f:
        f.write('{"qpn": 1, "entries": [{"seq": 0}]}\n')
    for path, what in ((empty, 'nothing to plot'), (bad, 'now_ns'),
                       (os.path.join(tmp, 'none.json'), 'No such file')):
        r = subprocess.run([sys.executable, script, '-o', out, path], capture_output=True,
                           text=True, timeout=120)
        check(r.returncode == 1 and what in r.stderr, f'{path}: {r.returncode} {r.stderr}')


def main():
    root = sys.argv[1]
    d = os.path.join(root, 'test', 'unit', 'data', 'cc-trace', 'bneck-2qps')
    files = {'a': [os.path.join(d, 'a-qp0.jsonl'), os.path.join(d, 'a-qp1.jsonl')],
             'b': os.path.join(d, 'b-queue.jsonl')}
    m = load_module(root)
    series = test_series(m, files)
    test_figure(m, files, series)
    test_queue(m, files)
    with tempfile.TemporaryDirectory(prefix='plot-cc-') as tmp:
        test_cli(root, files, tmp)
    print(f'plot_cc: {checks} checks, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
