#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""meson install: the three programs, the man pages, the example configurations and the
systemd unit, and nothing else; the unit's ExecStart, ExecStop and --config paths are those of
the install, for this build's prefix and for another one.

1. `meson install --destdir TMP` of BUILD_DIR: the tree is exactly the expected files, the
   programs run from it (--version), the unit names the installed roced, rocectl and
   roced.conf.
2. A second build directory configured with --prefix /usr (meson then puts the configuration
   in /etc) and nothing built: its generated unit and its install plan (meson introspect
   --installed) follow that prefix.

usage: check_install.py SOURCE_ROOT BUILD_DIR
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

failed = 0


def check(cond, what):
    global failed
    if not cond:
        failed += 1
        print(f'FAIL install: {what}', flush=True)
    return cond


def options(build):
    out = subprocess.run(['meson', 'introspect', build, '--buildoptions'], check=True,
                         capture_output=True, text=True).stdout
    opts = {o['name']: o['value'] for o in json.loads(out)}
    prefix = opts['prefix']

    def path(name):
        return os.path.join(prefix, opts[name])
    unit_dir = opts.get('systemdunitdir') or os.path.join(prefix, 'lib/systemd/system')
    return {'prefix': prefix, 'bindir': path('bindir'), 'sysconfdir': path('sysconfdir'),
            'mandir': path('mandir'), 'unitdir': unit_dir}


def expected(o):
    return {
        os.path.join(o['bindir'], 'roced'), os.path.join(o['bindir'], 'rocectl'),
        os.path.join(o['bindir'], 'rocedump'),
        os.path.join(o['mandir'], 'man1', 'rocectl.1'),
        os.path.join(o['mandir'], 'man8', 'roced.8'),
        os.path.join(o['sysconfdir'], 'rocedp', 'roced.conf'),
        os.path.join(o['sysconfdir'], 'rocedp', 'roced-memif.conf'),
        os.path.join(o['unitdir'], 'roced.service'),
    }


def unit_paths(text):
    """ExecStart's program and --config file, ExecStop's program."""
    keys = dict(ln.split('=', 1) for ln in text.splitlines()
                if '=' in ln and not ln.startswith('#'))
    start, stop = shlex.split(keys.get('ExecStart', '')), shlex.split(keys.get('ExecStop', ''))
    conf = start[start.index('--config') + 1] if '--config' in start[:-1] else None
    return (start[0] if start else None), conf, (stop[0] if stop else None), text


def check_unit(tag, o, text):
    start, conf, stop, text = unit_paths(text)
    check('@' not in text, f'{tag}: the unit has unreplaced @VARIABLES@:\n{text}')
    check(start == os.path.join(o['bindir'], 'roced'),
          f"{tag}: ExecStart runs {start}, want {os.path.join(o['bindir'], 'roced')}")
    check(stop == os.path.join(o['bindir'], 'rocectl'),
          f"{tag}: ExecStop runs {stop}, want {os.path.join(o['bindir'], 'rocectl')}")
    check(conf == os.path.join(o['sysconfdir'], 'rocedp', 'roced.conf'),
          f"{tag}: --config {conf}, want {os.path.join(o['sysconfdir'], 'rocedp', 'roced.conf')}")
    return start, conf, stop


def installed_tree(src, build, tmp):
    dest = os.path.join(tmp, 'dest')
    r = subprocess.run(['meson', 'install', '-C', build, '--no-rebuild', '--destdir', dest],
                       capture_output=True, text=True)
    if not check(r.returncode == 0, f'meson install: exit {r.returncode}\n{r.stdout}{r.stderr}'):
        return
    o = options(build)
    files = set()
    for dirpath, _, names in os.walk(dest):
        for n in names:
            files.add('/' + os.path.relpath(os.path.join(dirpath, n), dest))
    want = expected(o)
    check(files == want, f'installed tree: extra {sorted(files - want)}, '
          f'missing {sorted(want - files)}')
    for prog in ('roced', 'rocectl', 'rocedump'):
        p = dest + os.path.join(o['bindir'], prog)
        check(os.access(p, os.X_OK), f'{prog} is not executable')
    r = subprocess.run([dest + os.path.join(o['bindir'], 'roced'), '--version'],
                       capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.startswith('roced '), f'installed roced --version: '
          f'{r.returncode} {r.stdout}{r.stderr}')
    unit = dest + os.path.join(o['unitdir'], 'roced.service')
    if os.path.exists(unit):
        start, conf, stop = check_unit('installed', o, open(unit).read())
        for p in (start, conf, stop):
            check(p is not None and os.path.exists(dest + p),
                  f'the unit names {p}, which the install does not hold')
    conf = dest + os.path.join(o['sysconfdir'], 'rocedp', 'roced.conf')
    if os.path.exists(conf):
        check(open(conf).read() == open(os.path.join(src, 'config', 'roced.conf')).read(),
              'the installed roced.conf is config/roced.conf')


def other_prefix(src, tmp):
    build = os.path.join(tmp, 'build-usr')
    r = subprocess.run(['meson', 'setup', build, src, '--prefix', '/usr'],
                       capture_output=True, text=True)
    if not check(r.returncode == 0, f'meson setup --prefix /usr: {r.stdout[-2000:]}{r.stderr}'):
        return
    o = options(build)
    check(o['bindir'] == '/usr/bin' and o['sysconfdir'] == '/etc',
          f'prefix /usr: bindir {o["bindir"]}, sysconfdir {o["sysconfdir"]}')
    check_unit('prefix /usr', o, open(os.path.join(build, 'config', 'roced.service')).read())
    out = subprocess.run(['meson', 'introspect', build, '--installed'], check=True,
                         capture_output=True, text=True).stdout
    plan = set(json.loads(out).values())
    check(plan == expected(o), f'prefix /usr: install plan extra {sorted(plan - expected(o))}, '
          f'missing {sorted(expected(o) - plan)}')


def main():
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if shutil.which('meson') is None:
        print('meson is not on PATH')
        return 1
    tmp = tempfile.mkdtemp(prefix='rocedp-install-')
    try:
        installed_tree(src, build, tmp)
        other_prefix(src, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f'install: {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
