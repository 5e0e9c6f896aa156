#!/usr/bin/python3
"""scripts/plot.py renders from recorded JSON (test/plot/*.json*, taken from two roced over
memif): a PNG is written and not empty, with the axes, scales, curves and marks expected; input
of the wrong kind exits 2 with one line.

usage: test_plot.py SOURCE_DIR
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

src = sys.argv[1]
here = os.path.join(src, 'test/plot')
spec = importlib.util.spec_from_file_location('plot', os.path.join(src, 'scripts/plot.py'))
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)
failed = checks = 0


def check(cond, what):
    global failed, checks
    checks += 1
    if not cond:
        failed += 1
        print(f'FAIL plot: {what}')


def png_ok(path):
    with open(path, 'rb') as f:
        head = f.read(8)
    return head == b'\x89PNG\r\n\x1a\n' and os.path.getsize(path) > 10000


tmp = tempfile.mkdtemp(prefix='rocedp-plot-')
f = lambda n: os.path.join(here, n)  # noqa: E731
out = os.path.join(tmp, 'lat.png')
fig = plot.plot_lat([f('job-hist.json'), f('perf-write-lat.json')], out)
cdf, hst = fig.axes
check(png_ok(out), 'lat: PNG written')
check(cdf.get_xlabel() == 'latency (us)' and cdf.get_xscale() == 'log' and
      cdf.get_ylabel() == 'fraction of samples', 'lat: CDF axes')
check(len(cdf.get_lines()) >= 2 + 6, 'lat: two curves and the p50/p99/p99.9 lines of each')
texts = [t.get_text() for t in cdf.texts]
check(sum(t.startswith('p50 ') for t in texts) == 2 and
      sum(t.startswith('p99.9 ') for t in texts) == 2, f'lat: marks {texts}')
ys = cdf.get_lines()[0].get_ydata()
check(abs(ys[-1] - 1.0) < 1e-9 and all(a <= b for a, b in zip(ys, ys[1:])),
      'lat: the CDF rises to 1')
check(hst.get_ylabel() == 'samples' and len(hst.patches) > 100, 'lat: histogram bars')
out = os.path.join(tmp, 'bw.png')
fig = plot.plot_bw(f('top.jsonl'), out)
ax = fig.axes[0]
labels = [l.get_label() for l in ax.get_lines()]
check(png_ok(out) and ax.get_ylabel() == 'Gbit/s' and ax.get_xlabel() == 'time (s)',
      'bw: PNG and axes')
check(labels[-1] == 'aggregate' and len(labels) == 3, f'bw: two QPs and the sum: {labels}')
lines = ax.get_lines()
tot = lines[-1].get_ydata()
check(all(abs(tot[i] - lines[0].get_ydata()[i] - lines[1].get_ydata()[i]) < 1e-9
          for i in range(len(tot))), 'bw: the aggregate is the sum')
check(0.25 < sum(lines[0].get_ydata()) / len(tot) < 0.35 and
      0.55 < sum(lines[1].get_ydata()) / len(tot) < 0.65,
      'bw: the recorded jobs paced at 300 and 600 Mb/s read so')
out = os.path.join(tmp, 'bwport.png')
fig = plot.plot_bw(f('stats.jsonl'), out)
check(png_ok(out) and fig.axes[0].get_lines()[0].get_label() == 'port 0 tx',
      'bw: stats samples per port')
out = os.path.join(tmp, 'sizes.png')
fig = plot.plot_sizes([f('perf-write-bw-a.json')], out)
ax = fig.axes[0]
xs = list(ax.get_lines()[0].get_xdata())
check(png_ok(out) and ax.get_xscale() == 'log' and xs[0] == 2 and xs[-1] == 8388608,
      f'sizes: 2 B to 8 MiB on a log axis: {xs[:2]}..{xs[-1:]}')
r = subprocess.run([sys.executable, os.path.join(src, 'scripts/plot.py'), 'lat',
                    f('top.jsonl'), '-o', os.path.join(tmp, 'x.png')], capture_output=True,
                   text=True)
check(r.returncode == 2 and r.stderr.startswith('plot.py: ') and
      not os.path.exists(os.path.join(tmp, 'x.png')), f'bad input: {r.returncode} {r.stderr}')
print(f'plot: {checks} checks, {failed} failed')
sys.exit(1 if failed else 0)
