#!/usr/bin/python3
"""scripts/plot-cc.py on a recorded trace (test/unit/data/cc-trace): the series it reads, the
figure it draws (checked through matplotlib's objects: panels, labels, legends, the data of
each line), the PNG it writes, a queue panel, several files, and refused input.

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


def test_series(m, fixture):
    rs = replies(fixture)
    series, queues = m.load([fixture])
    check(len(series) == 2 and not queues, f'two series, no queue: {len(series)}, {queues}')
    by_qpn = {s.qpn: s for s in series}
    for r in rs:
        s = by_qpn.get(r['qpn'])
        check(s is not None and len(s.t) == len(r['entries']) > 100,
              f"QP {r['qpn']:#x}: {len(r['entries'])} entries read")
        if s is None:
            continue
        t, rate, target, alpha = s.points()
        off = r['unix_ns'] - r['now_ns']
        check(t[:-1] == [e['time_ns'] + off for e in r['entries']] and
              rate[:-1] == [e['rate_mbps'] for e in r['entries']] and
              alpha[:-1] == [e['alpha'] for e in r['entries']],
              'points are the entries on the wall clock')
        check(t[-1] == r['now_ns'] + off and rate[-1] == r['state']['rate_mbps'] and
              target[-1] == r['state']['target_mbps'], 'the series ends with the state')
    return series, rs


def line_data(ax):
    return {ln.get_label(): ln for ln in ax.get_lines()}


def test_figure(m, series, rs):
    import matplotlib.pyplot as plt

    fig = m.plot(series, [], title='two QPs')
    axes = fig.get_axes()
    check(len(axes) == 2, f'two panels: {len(axes)}')
    ax_rate, ax_alpha = axes[0], axes[1]
    check(ax_rate.get_ylabel() == 'rate (Gb/s)' and ax_alpha.get_ylabel() == 'alpha' and
          ax_alpha.get_xlabel() == 'time (ms)', f'labels: {ax_rate.get_ylabel()!r} '
          f'{ax_alpha.get_ylabel()!r} {ax_alpha.get_xlabel()!r}')
    check(fig._suptitle is not None and fig._suptitle.get_text() == 'two QPs', 'title')
    lines = line_data(ax_rate)
    want = {f"QP 0x{r['qpn']:06x} {k}" for r in rs for k in ('rate', 'target')}
    check(want <= set(lines), f'rate and target lines: {sorted(lines)}')
    legend = ax_rate.get_legend()
    check(legend is not None and want == {t.get_text() for t in legend.get_texts()},
          'rate legend names every line')
    # The line rate as a reference line.
    check(any(list(ln.get_ydata()) == [100.0, 100.0] for ln in ax_rate.get_lines()),
          'line rate drawn at 100 Gb/s')
    t0 = min(e['time_ns'] + r['unix_ns'] - r['now_ns'] for r in rs for e in r['entries'])
    for r in rs:
        name = f"QP 0x{r['qpn']:06x}"
        ln = lines.get(f'{name} rate')
        if ln is None:
            continue
        off = r['unix_ns'] - r['now_ns']
        y, x = list(ln.get_ydata()), list(ln.get_xdata())
        check(len(y) == len(r['entries']) + 1 and
              all(abs(a - e['rate_mbps'] / 1e3) < 1e-9 for a, e in zip(y, r['entries'])),
              f'{name}: rate line in Gb/s is the entries')
        check(all(abs(a - (e['time_ns'] + off - t0) / 1e6) < 1e-9
                  for a, e in zip(x, r['entries'])) and x == sorted(x),
              f'{name}: x in ms from the first entry of all')
        ya = list(line_data(ax_alpha)[name].get_ydata())
        check(ya[:-1] == [e['alpha'] for e in r['entries']], f'{name}: alpha line')
    check(ax_alpha.get_ylim() == (0, 1.05), f'alpha from 0 to 1.05: {ax_alpha.get_ylim()}')
    last = max(e['time_ns'] + r['unix_ns'] - r['now_ns'] for r in rs for e in r['entries'])
    right = ax_alpha.get_xlim()[1]
    check(abs(right - (last - t0) / 1e6 * 1.03) < 1e-6, f'axis ends after the last event: '
          f'{right}')
    plt.close(fig)
    # Mb/s on request.
    fig = m.plot(series, [], mbps=True)
    check(fig.get_axes()[0].get_ylabel() == 'rate (Mb/s)', 'Mb/s label')
    plt.close(fig)


def test_queue(m, fixture, tmp):
    """A queue, in the documented form, in a file of its own (synthetic: no recorded
    bottleneck yet), lines up with the traces by the wall clock."""
    import matplotlib.pyplot as plt

    r = replies(fixture)[0]
    t = r['entries'][0]['time_ns']
    samples = [{'time_ns': t + i * 100000, 'bytes': (i % 50) * 2048} for i in range(200)]
    q = {'queue': {'name': 'B rx', 'now_ns': r['now_ns'] + 7, 'unix_ns': r['unix_ns'] + 7,
                   'samples': samples, 'kmin_bytes': 20480, 'kmax_bytes': 81920}}
    qpath = os.path.join(tmp, 'queue.json')
    with open(qpath, 'w') as f:
        json.dump(q, f)
    series, queues = m.load([fixture, qpath])
    check(len(series) == 2 and len(queues) == 1 and queues[0].name == 'B rx',
          f'queue read: {len(queues)}')
    fig = m.plot(series, queues)
    axes = fig.get_axes()
    check(len(axes) == 3 and axes[2].get_ylabel() == 'queue (KiB)' and
          axes[2].get_xlabel() == 'time (ms)' and axes[1].get_xlabel() == '',
          f'queue panel at the bottom: {[a.get_ylabel() for a in axes]}')
    ql = line_data(axes[2]).get('B rx')
    check(ql is not None and list(ql.get_ydata()) == [s['bytes'] / 1024 for s in samples],
          'queue line in KiB')
    check(ql is not None and abs(ql.get_xdata()[0] - line_data(axes[0])[
        f"QP 0x{r['qpn']:06x} rate"].get_xdata()[0]) < 1e-9,
          'queue and trace start together on the wall clock')
    ys = sorted(ln.get_ydata()[0] for ln in axes[2].get_lines() if ln.get_label() != 'B rx')
    check(ys == [20.0, 80.0], f'kmin and kmax drawn: {ys}')
    plt.close(fig)


def test_cli(root, fixture, tmp):
    import matplotlib.image as mpimg

    script = os.path.join(root, 'scripts', 'plot-cc.py')
    out = os.path.join(tmp, 'cc.png')
    r = subprocess.run([sys.executable, script, '-o', out, fixture], capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0 and '2 QPs' in r.stdout, f'plot-cc: {r.returncode} {r.stdout}'
          f'{r.stderr}')
    ok = os.path.exists(out) and os.path.getsize(out) > 10000
    check(ok and open(out, 'rb').read(8) == b'\x89PNG\r\n\x1a\n', 'a PNG written')
    if ok:
        img = mpimg.imread(out)
        check(img.ndim == 3 and img.shape[0] > 300 and img.shape[1] > 600 and
              float(img[..., :3].std()) > 0.01, f'a picture, not a blank: {img.shape}')
    # Two files, one QP each: labels say which file.
    rs = replies(fixture)
    paths = []
    for i, x in enumerate(rs):
        paths.append(os.path.join(tmp, f'daemon{i}.jsonl'))
        with open(paths[-1], 'w') as f:
            f.write(json.dumps(x) + '\n')
    r = subprocess.run([sys.executable, script, '-o', out] + paths, capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, f'two files: {r.stderr}')
    series, _ = load_module(root).load(paths)
    check(sorted(s.name for s in series) == ['daemon0', 'daemon1'], 'series named by file')
    # Refused: nothing to plot, not JSON, a reply without its clock.
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
    fixture = os.path.join(root, 'test', 'unit', 'data', 'cc-trace', 'two-qps-mlx5.jsonl')
    m = load_module(root)
    series, rs = test_series(m, fixture)
    test_figure(m, series, rs)
    with tempfile.TemporaryDirectory(prefix='plot-cc-') as tmp:
        test_queue(m, fixture, tmp)
        test_cli(root, fixture, tmp)
    print(f'plot_cc: {checks} checks, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
