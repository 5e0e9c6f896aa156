#!/usr/bin/python3
"""Copy-paste must work: run the commands the user is told to type, as written.

The blocks run are: the fenced block after "Quick start by hand" in README.md, and the
```sh blocks of doc/user-guide.md's sections "Two daemons over memif" and "Two network
namespaces over veth (af_packet)". Each runs in bash -e (pipefail), with BUILD_DIR's
programs first on PATH, within a time limit; it must exit 0. The daemons a block starts are
stopped by the block itself (rocectl shutdown); anything of its session still alive 15 s after
the block ended is killed and fails the block, and the veth namespaces are removed if the block left
them. A block that is missing (a heading renamed) fails too, so the test cannot go quiet.

usage: check_doc_commands.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

BLOCKS = [
    ('README.md', 'Quick start by hand', None),
    ('doc/user-guide.md', '## Two daemons over memif', 'sh'),
    ('doc/user-guide.md', '## Two network namespaces over veth (af_packet)', 'sh'),
]
LEFTOVER_NS = ('guide-a', 'guide-b')


def block_after(text, marker, lang):
    """The first fenced block after @marker (in its section when it is a heading)."""
    i = text.find(marker)
    if i < 0:
        return None
    rest = text[i + len(marker):]
    if marker.startswith('#'):
        end = re.search(r'^#{1,%d} ' % marker.count('#', 0, 4), rest, re.M)
        rest = rest[:end.start()] if end else rest
    fence = '```' + (lang or '')
    m = re.search(r'^' + re.escape(fence) + r'\n(.*?)^```$', rest, re.M | re.S)
    return m.group(1) if m else None


def run(src, build, name, code, timeout=150):
    env = dict(os.environ)
    env['PATH'] = ':'.join([os.path.join(build, 'app/roced'), os.path.join(build, 'app'),
                            env.get('PATH', '')])
    # A file, not a pipe: what the block leaves running would hold a pipe open.
    log = tempfile.TemporaryFile(mode='w+')
    p = subprocess.Popen(['bash', '-e', '-o', 'pipefail', '-c', code], cwd=src, env=env,
                         stdout=log, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        rc = 'timeout'
    # Whatever the block left running in its session, once daemons told to shut down had
    # the time to exit (rocectl shutdown answers before the daemon is gone).
    end = time.time() + 15
    while True:
        left = subprocess.run(['pgrep', '-s', str(p.pid)], capture_output=True,
                              text=True).stdout
        if not left or time.time() > end:
            break
        time.sleep(0.2)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    log.seek(0)
    return rc, log.read(), left.split()


def main():
    src, build = sys.argv[1], os.path.abspath(sys.argv[2])
    failed = 0
    if os.geteuid() != 0:
        print('doc_commands: skipped [machine]: the documented commands run as root')
        return 0
    for path, marker, lang in BLOCKS:
        name = f'{path}: {marker.lstrip("# ")}'
        code = block_after(open(os.path.join(src, path)).read(), marker, lang)
        if code is None:
            print(f'FAIL {name}: no such block')
            failed += 1
            continue
        t0 = time.time()
        rc, out, left = run(src, build, name, code)
        ok = rc == 0 and not left
        print(f'{"ok  " if ok else "FAIL"} {name}: exit {rc} in {time.time() - t0:.1f} s'
              f'{", left running: " + " ".join(left) if left else ""}')
        if not ok:
            failed += 1
            print('    ' + '\n    '.join(out.strip().splitlines()[-25:]))
        for ns in LEFTOVER_NS:
            subprocess.run(['ip', 'netns', 'del', ns], capture_output=True)
    print(f'doc_commands: {len(BLOCKS)} blocks, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
