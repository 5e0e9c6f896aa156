"""Helpers for integration tests: start real roced processes and drive them with rocectl only.

Each daemon gets its own EAL file prefix, control socket and log under a temporary directory;
every process a test starts is stopped when the test ends (context manager), killed if need be.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time


# Every right an MR or a QP can grant: roced gives exactly what is asked (none remote by
# default), so tests that let the peer WRITE, READ and do atomics say so.
MR_ALL = 'access=local_write,remote_write,remote_read,remote_atomic'
QP_ALL = 'access=remote_write,remote_read,remote_atomic'


class Failure(Exception):
    pass


class Checks:
    """Counts checks; a failed one is reported and counted, the test goes on."""

    def __init__(self, name):
        self.name, self.n, self.failed = name, 0, 0

    def __call__(self, cond, what):
        self.n += 1
        if not cond:
            self.failed += 1
            print(f"FAIL {self.name}: {what}", flush=True)
        return cond

    def done(self):
        print(f"{self.name}: {self.n} checks, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


class Daemon:
    def __init__(self, build, tmp, name, eal, args, netns=None, roced='app/roced/roced'):
        self.build, self.name = build, name
        self.sock = os.path.join(tmp, f"{name}.sock")
        self.log = os.path.join(tmp, f"{name}.log")
        self.prefix = f'rocedp-it-{name}-{os.getpid()}'
        cmd = [os.path.join(build, roced), '--no-huge', '-m', '512', '--no-pci',
               f'--file-prefix={self.prefix}'] + eal + \
              ['--', '--socket', self.sock, '--idle-sleep', '50'] + args
        if netns:
            cmd = ['ip', 'netns', 'exec', netns] + cmd
        # A process group of its own (killed as one), but the test's session: with the
        # kernel's autogroup scheduling each session shares the CPUs as one, and a worker of a
        # daemon alone in its session that idles (--idle-sleep) on a core where another
        # session's workers busy-poll got no CPU for seconds (roce_dp_call's 5 s panic).
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, 'w'), stderr=subprocess.STDOUT,
                                     process_group=0)

    def wait_ready(self, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                raise Failure(f"{self.name} exited ({self.proc.returncode}):\n" + self.tail())
            if os.path.exists(self.sock):
                try:
                    self.ctl('status')
                    return
                except Failure:
                    pass
            time.sleep(0.1)
        raise Failure(f"{self.name} not ready:\n" + self.tail())

    def tail(self, n=30):
        try:
            return ''.join(open(self.log).readlines()[-n:])
        except OSError:
            return ''

    def rocectl(self, *args, json_out=True, check=True, timeout=10):
        cmd = [os.path.join(self.build, 'app/rocectl'), '-s', self.sock]
        cmd += ['--json'] if json_out else []
        cmd += [str(a) for a in args]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise Failure(f"rocectl {' '.join(map(str, args))}: exit {r.returncode}: "
                          f"{r.stdout}{r.stderr}")
        return r

    def ctl(self, *args):
        return json.loads(self.rocectl(*args).stdout)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        # EAL leaves its runtime directory behind (config, mp socket, fbarrays), one per
        # prefix: remove ours so that runs do not pile them up.
        run = '/var/run/dpdk' if os.geteuid() == 0 else \
            os.path.join(os.environ.get('XDG_RUNTIME_DIR', '/tmp'), 'dpdk')
        shutil.rmtree(os.path.join(run, self.prefix), ignore_errors=True)
        return self.proc.returncode


class Pair:
    """Two daemons joined by memif: A serves the memif socket, B connects to it. Their IP MTU
    is 9000 (memif carries any frame), so QPs may use path MTU 4096. @roced: the daemon's
    program, relative to the build directory; @args: more roced options for both."""

    def __init__(self, build, start=True, mtu=9000, roced='app/roced/roced', args=()):
        self.build, self.autostart, self.mtu, self.roced = build, start, mtu, roced
        self.args = list(args)
        self.tmp = tempfile.mkdtemp(prefix='rocedp-it-')
        self.daemons = []

    def __enter__(self):
        if not self.autostart:
            return self
        m = os.path.join(self.tmp, 'memif.sock')
        # 8 KiB memif buffers: the 22.11 memif PMD corrupts its rings after frames that span
        # several buffers (seen with 4154-byte frames and the default 2 KiB).
        self.a = self.start('a', ['-l', '0,1', f'--vdev=net_memif0,role=server,socket={m},'
                                  'bsize=8192'],
                            ['--port', 'net_memif0', '--ip', '10.0.0.1/24',
                             '--ip6', 'fd00::1/64', '--mtu', str(self.mtu)] + self.args)
        self.a.wait_ready()
        # B's worker on CPU 0, A's on CPU 1: two workers on one CPU take turns by the
        # scheduler's slices, and a latency ping-pong then waits milliseconds a round trip.
        self.b = self.start('b', ['--lcores', '0@1,1@0',
                                  f'--vdev=net_memif0,role=client,socket={m},bsize=8192'],
                            ['--port', 'net_memif0', '--ip', '10.0.0.2/24',
                             '--ip6', 'fd00::2/64', '--mtu', str(self.mtu)] + self.args)
        self.b.wait_ready()
        self.wait_link()
        return self

    def start(self, name, eal, args, netns=None):
        d = Daemon(self.build, self.tmp, name, eal, args, netns, self.roced)
        self.daemons.append(d)
        return d

    def wait_link(self, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            if all(d.ctl('port', 'show')['ports'][0]['link_up'] for d in (self.a, self.b)):
                return
            time.sleep(0.1)
        raise Failure('memif link did not come up')

    def __exit__(self, *exc):
        for d in self.daemons:
            d.stop()
        if exc[0] is not None:
            for d in self.daemons:
                print(f"--- {d.name} log ---\n{d.tail()}")
        shutil.rmtree(self.tmp, ignore_errors=True)
        return False


def connect(x, y, **opts):
    """Create and connect a QP on each of two daemons; returns (qp_x, qp_y)."""
    qx, qy = x.ctl('qp', 'create', QP_ALL)['qp'], y.ctl('qp', 'create', QP_ALL)['qp']
    extra = [f'{k}={v}' for k, v in opts.items()]
    x.ctl('qp', 'connect', qx['qpn'], qy['qpn'], qy['psn'], qy['ip'], *extra)
    y.ctl('qp', 'connect', qy['qpn'], qx['qpn'], qx['psn'], qx['ip'], *extra)
    return qx, qy


def poll_wc(d, qpn, n, timeout=10):
    """Poll completions of a QP until n arrived."""
    got, end = [], time.time() + timeout
    while len(got) < n and time.time() < end:
        got += d.ctl('cq', 'poll', qpn)['wc']
        if len(got) < n:
            time.sleep(0.02)
    return got
