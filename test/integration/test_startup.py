#!/usr/bin/python3
"""roced's startup: every mistake a new user makes ends roced at once with exit status 2 and
one line that names the cause and the fix (checked word for word), before any worker polls;
--help and --version work without an EAL (no hugepages, not root); a stale control socket is
replaced and a live one is not; a PMD profile nobody tested warns once; SIGTERM says when no
counter moved and exits 0.

The af_packet and tap cases run inside a network namespace this test creates and removes.

usage: test_startup.py BUILD_DIR
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair  # noqa: E402

EAL = ['--no-huge', '-m', '256', '--no-pci', '--log-level', 'lib.eal:error']
NS = f'rstart{os.getpid() % 100000}'
# Far more than a refused start takes, far less than a daemon left polling would be allowed.
FAST = 15


def roced(build):
    return os.path.join(build, 'app/roced/roced')


def run(build, eal, args, netns=None, user=None, plain=False):
    """roced with EAL options @eal (unless @plain: none at all) and roced options @args."""
    cmd = [roced(build)]
    if not plain:
        cmd += ['-l', '0,1', f'--file-prefix=rocedp-start-{os.getpid()}'] + EAL + eal + ['--']
    cmd += args
    if user is not None:
        cmd = ['setpriv', f'--reuid={user}', f'--regid={user}', '--clear-groups'] + cmd
    if netns is not None:
        cmd = ['ip', 'netns', 'exec', netns] + cmd
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    r.elapsed = time.time() - t0
    return r


def roced_lines(r):
    return [ln for ln in r.stderr.splitlines() if ln.startswith('roced:')]


def refused(t, what, r, line):
    """Exit 2, fast, exactly one roced: line and it is @line; no worker was started."""
    lines = roced_lines(r)
    t(r.returncode == 2, f'{what}: exit {r.returncode} (want 2)')
    t(lines == [line], f'{what}: roced lines {lines}\n  want [{line!r}]')
    t(r.elapsed < FAST, f'{what}: took {r.elapsed:.1f} s')
    t('worker 0 on lcore' not in r.stdout + r.stderr and 'serving' not in r.stdout,
      f'{what}: a worker started: {r.stdout[-200:]}{r.stderr[-200:]}')


def sh(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def hugepages():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('HugePages_Total:'):
                return int(line.split()[1])
    return 0


def conf_file(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, 'w') as f:
        f.write(text)
    return path


def mistakes(t, build, tmp):
    null = ['--vdev=net_null0']
    refused(t, 'socket directory missing',
            run(build, null, ['-p', 'net_null0', '-i', '10.0.0.1/24',
                              '-s', '/nonexistent-rocedp/dir/a.sock']),
            'roced: control socket /nonexistent-rocedp/dir/a.sock: no directory '
            '/nonexistent-rocedp/dir: create it (mkdir -p /nonexistent-rocedp/dir) or give '
            'another --socket')
    refused(t, '--ip without a prefix',
            run(build, null, ['-p', 'net_null0', '--ip', '10.0.0.1']),
            "roced: option --ip: '10.0.0.1' needs a prefix length (e.g. 10.0.0.1/24)")
    refused(t, '--ip with a bad value',
            run(build, null, ['-p', 'net_null0', '--ip', '10.0.0.300/24']),
            "roced: option --ip: '10.0.0.300/24' is not an IPv4 address and prefix length "
            "(e.g. 10.0.0.1/24)")
    refused(t, 'gateway off the subnet',
            run(build, null, ['-p', 'net_null0', '--ip', '10.0.0.1/24', '-g', '10.0.3.254']),
            "roced: [port0] gateway 10.0.3.254 is not on the port's subnet 10.0.0.0/24: give a "
            "gateway inside it, or the address's real prefix length")
    refused(t, 'unknown option', run(build, [], ['--frobnicate']),
            "roced: unknown option '--frobnicate' (roced -- --help lists roced's options; EAL "
            "options go before --)")
    refused(t, 'option without its value', run(build, [], ['-p', 'net_null0', '--socket']),
            'roced: option --socket needs a value (roced -- --help lists the options)')
    refused(t, 'no such ethdev', run(build, null, ['-p', 'net_nothere0', '-i', '10.0.0.1/24']),
            "roced: [port0] device: no ethdev 'net_nothere0' (there are: 0 net_null0; or give "
            "the EAL another with --vdev or -a before --)")
    refused(t, 'too many workers', run(build, null, ['-p', 'net_null0', '-i', '10.0.0.1/24',
                                                     '-w', '2']),
            'roced: workers: 2 wanted but only 1 lcores besides the main one: give the EAL 3 '
            'with -l (e.g. -l 0-2)')

    # The EAL's own failures, with what to do about them.
    refused(t, 'an EAL option it does not know',
            run(build, [], ['-l', '0,1', '--frobnicate', '--', '-p', '0'], plain=True),
            "roced: EAL initialisation failed: an EAL option is wrong: roced -h lists them; "
            "roced's own go after --")
    eal = ['-l', '0,1', f'--file-prefix=rocedp-start-{os.getpid()}', '--no-pci',
           '--log-level', 'lib.eal:error', '--vdev=net_null0']
    app = ['--', '-p', 'net_null0', '-i', '10.0.0.1/24', '-s', os.path.join(tmp, 'h.sock')]
    if hugepages() == 0:
        refused(t, 'no hugepages', run(build, [], eal + app, plain=True),
                'roced: EAL initialisation failed: no hugepages it may use (none reserved, or '
                'not root): reserve them as root (dpdk-hugepages.py --setup 2G), or give '
                '--no-huge -m 512 for virtual devices')
    else:
        refused(t, 'more memory than the hugepages hold',
                run(build, [], eal + ['-m', '1048576'] + app, plain=True),
                'roced: EAL initialisation failed: not the memory -m asks for: reserve more '
                'hugepages (dpdk-hugepages.py --setup 2G) or give a smaller -m')

    # Configuration files: the file, the line and what is wrong with it.
    refused(t, 'config file missing', run(build, [], ['--config', '/nonexistent/roced.conf']),
            'roced: /nonexistent/roced.conf: cannot read the file: No such file or directory')
    cases = [
        ('a line without =', '[roced]\n; the MTU\nmtu 9000\n',
         "line 3: 'mtu 9000' is neither [section], key = value nor a ; comment"),
        ('a # comment', '# roced\n[roced]\n', "line 1: comments start with ';' here, not '#'"),
        ('no closing ]', '[roced\nmtu = 1500\n', "line 1: '[roced' has no closing ']'"),
        ('empty value', '[roced]\nmtu =\n',
         'line 2: mtu has no value (give one, or comment the line out with ;)'),
        ('key before any section', 'mtu = 1500\n[roced]\n',
         'line 1: mtu = 1500 before any [section] (put it under [roced] or [portN])'),
        ('unknown key', '[roced]\nworkers = 1\n\nbogus = 1\n',
         "line 4: [roced] unknown key 'bogus' (the keys of [roced] are socket, log_level, "
         "workers, mtu, mbufs, mbuf_size, max_qps, idle_sleep_us)"),
        ('value out of range', '[roced]\nmtu = 99999 ; jumbo\n',
         "line 2: [roced] mtu: '99999' is not a number in 576..9216"),
        ('unknown section', '[roced]\nmtu = 1500\n[nowhere]\na = 1\n',
         'line 3: unknown section [nowhere] (the sections are [roced] and [port0]..[port3])'),
        ('port address without prefix', '[port0]\ndevice = net_null0\n[port0]\nipv4 = 10.0.0.1\n',
         "line 4: [port0] ipv4: '10.0.0.1' needs a prefix length (e.g. 10.0.0.1/24)"),
        ('port key unknown', '[port1]\ndevice = x\ncolour = red\n',
         "line 3: [port1] unknown key 'colour' (the keys of [portN] are device, ipv4, ipv6, "
         "gateway, vlan, impair, pfc, pfc_prios, dscp2prio, pfc_watchdog_ms, pfc_water, "
         "tx_copy, tx_zc_min, queues)"),
    ]
    for what, text, line in cases:
        path = conf_file(tmp, 'bad.conf', text)
        refused(t, f'config: {what}', run(build, [], ['--config', path]),
                f'roced: {path}: {line}')


def live_and_stale(t, build, tmp):
    """A second roced on a live socket names the first one's pid and leaves it serving; a
    stale socket file (its daemon died) is replaced."""
    with Pair(build) as p:
        r = run(build, ['--vdev=net_null0'], ['-p', 'net_null0', '-i', '10.0.0.9/24',
                                              '-s', p.a.sock])
        refused(t, 'second roced on a live socket', r,
                f'roced: control socket {p.a.sock}: roced (pid {p.a.proc.pid}) already serves '
                f'it: stop it (rocectl -s {p.a.sock} shutdown) or give this roced another '
                f'--socket')
        t(p.a.ctl('status')['ok'], 'the first daemon still serves its socket')

        # A memif client started before its server (b's socket has no server): no EPERM.
        m = os.path.join(tmp, 'nosrv-memif.sock')
        refused(t, 'memif client before its server',
                run(build, [f'--vdev=net_memif0,role=client,socket={m}'],
                    ['-p', 'net_memif0', '-i', '10.0.0.1/24', '-s',
                     os.path.join(tmp, 'c.sock')]),
                f'roced: port 0: net_memif0 (net_memif): cannot start: no memif server on {m} '
                f'(a client connects at start): start the roced with role=server on that '
                f'socket first')

    stale = os.path.join(tmp, 'stale.sock')
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(stale)
    s.close()
    p = Pair(build, start=False)
    try:
        m = os.path.join(p.tmp, 'memif.sock')
        d = p.start('stale', ['-l', '0,1', f'--vdev=net_memif0,role=server,socket={m}'],
                    ['-p', 'net_memif0', '-i', '10.0.0.1/24', '--socket', stale])
        d.sock = stale
        # Ready without a request (a request counts as RPC): the log says it serves.
        end = time.time() + 20
        while time.time() < end and d.proc.poll() is None and \
                f'roced: serving {stale}' not in open(d.log).read():
            time.sleep(0.1)
        t(f'roced: serving {stale}' in open(d.log).read(), f'a stale socket file is replaced:'
          f'\n{d.tail()}')
        # Nothing moved on a memif server without a client: the exit report says so.
        rc = d.stop(signal.SIGTERM)
        log = open(d.log).read().splitlines()
        i = log.index('roced: final counters (non-zero):') if \
            'roced: final counters (non-zero):' in log else -1
        t(rc == 0, f'SIGTERM: exit {rc} (want 0, not 143)')
        t(i >= 0 and log[i + 1:i + 2] == ['  (none: no traffic)'],
          f'SIGTERM: the report says no counter moved: {log[-4:]}')
        t(not os.path.exists(stale), 'the socket file is removed at exit')
    finally:
        p.__exit__(None, None, None)


def no_eal(t, build):
    """--help and --version without hugepages, devices, or root."""
    for who in (None, 65534):
        tag = 'root' if who is None else 'nobody'
        r = run(build, [], ['--', '--help'], user=who, plain=True)
        t(r.returncode == 0 and r.stdout.startswith('usage: roced [EAL options] -- [options]')
          and '--config FILE' in r.stdout and r.stderr == '',
          f'roced -- --help as {tag}: exit {r.returncode}, {r.stdout[:80]!r} {r.stderr[-200:]!r}')
        r2 = run(build, [], ['-l', '0,1', '--', '-h'], user=who, plain=True)
        t(r2.returncode == 0 and r2.stdout == r.stdout, f'roced -l 0,1 -- -h as {tag}')
        r = run(build, [], ['--version'], user=who, plain=True)
        t(r.returncode == 0 and r.stdout.startswith('roced 0.') and '(DPDK 22.11' in r.stdout,
          f'roced --version as {tag}: {r.returncode} {r.stdout!r}')
        # Before "--", -h is the EAL's: its options, then roced's, still without memory.
        r = run(build, [], ['-h'], user=who, plain=True)
        t(r.returncode == 0 and '--file-prefix' in r.stdout and
          'usage: roced [EAL options] -- [options]' in r.stdout,
          f'roced -h as {tag}: exit {r.returncode}: {r.stdout[-200:]!r}')


def write_pcap(path):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))


def untested(t, build, tmp):
    """Two ports on a PMD without a profile (pcap): one warning, and roced serves."""
    rx = os.path.join(tmp, 'empty.pcap')
    write_pcap(rx)
    vdevs = [f'--vdev=net_pcap{i},rx_pcap={rx},tx_pcap={tmp}/out{i}.pcap' for i in (0, 1)]
    p = Pair(build, start=False)
    try:
        conf = conf_file(p.tmp, 'two.conf', '[port0]\ndevice = net_pcap0\nipv4 = 10.0.0.1/24\n'
                         '[port1]\ndevice = net_pcap1\nipv4 = 10.0.1.1/24\n')
        d = p.start('pcap', ['-l', '0,1'] + vdevs, ['--config', conf])
        d.wait_ready()
        log = open(d.log).read()
        n = log.count('no profile for this PMD')
        t(n == 1, f'generic profile: warned {n} times (want once):\n{log}')
        t('port: net_pcap0 (net_pcap): no profile for this PMD: generic settings (RSS on UDP '
          'where offered, MTU through ethdev), untested here' in log, f'the warning:\n{log}')
        ports = d.ctl('port', 'show')['ports']
        t(len(ports) == 2 and not any(q['tested'] for q in ports),
          f'port show marks them untested: {ports}')
        d.stop()
    finally:
        p.__exit__(None, None, None)


def in_netns(t, build):
    """af_packet on an interface that is not there; tap at an MTU its PMD refuses."""
    sh('ip', 'netns', 'add', NS)
    try:
        sh('ip', '-n', NS, 'link', 'set', 'lo', 'up')
        refused(t, 'af_packet interface missing',
                run(build, ['--vdev=net_af_packet0,iface=rveth-none'],
                    ['-p', 'net_af_packet0', '-i', '10.0.0.1/24', '-s',
                     f'/tmp/rocedp-start-{os.getpid()}.sock'], netns=NS),
                "roced: [port0] device: net_af_packet0 did not start: no interface "
                "'rveth-none' in this network namespace: create it (ip link) or fix iface= in "
                "its --vdev")
        # 22.11's tap reports frames of 1522 bytes at most, and drops larger ones on
        # transmit: --mtu 9000 is refused rather than kept in name only.
        refused(t, '--mtu the PMD refuses',
                run(build, ['--vdev=net_tap0,iface=rtap-mtu'],
                    ['-p', 'net_tap0', '-i', '10.0.0.1/24', '--mtu', '9000', '-s',
                     f'/tmp/rocedp-start-{os.getpid()}.sock'], netns=NS),
                'roced: port 0: net_tap0 (net_tap): --mtu 9000 refused: the PMD takes IP MTUs '
                'up to 1504 (frames of 1522 bytes): use --mtu 1504 or less')
    finally:
        sh('ip', 'netns', 'del', NS, check=False)


def main():
    build = sys.argv[1]
    t = Checks('startup')
    no_eal(t, build)
    if os.geteuid() != 0:
        print('SKIP: the rest needs root (network namespaces, af_packet, tap) [machine]')
        return 77 if t.done() == 0 else 1
    tmp = tempfile.mkdtemp(prefix='rocedp-start-')
    try:
        mistakes(t, build, tmp)
        live_and_stale(t, build, tmp)
        untested(t, build, tmp)
        in_netns(t, build)
    finally:
        subprocess.run(['rm', '-rf', tmp])
        # The EAL leaves its runtime directory behind: this test's own prefix goes.
        subprocess.run(['rm', '-rf', f'/var/run/dpdk/rocedp-start-{os.getpid()}'])
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
