#!/usr/bin/python3
"""Interop with the real thing: stock perftest on Linux Soft-RoCE (rdma_rxe) in a qemu VM against
roced + rocectl perf on the host, both directions.

The VM comes from the rxe-vm harness (ROCEDP_RXE_VM, default ../shared/rxe-vm beside the
repository). The test creates its own standalone tap, boots one VM on it, attaches roced to the
tap with net_af_packet, and runs ib_{write,read,send,atomic}_bw and ib_{write,send,read}_lat
against `rocectl perf ... --server` and `rocectl perf ... --client` against the same tools as
servers in the VM. It checks both sides' exit status and results (iterations, bandwidth,
latency order, the OOB report both print, the atomic targets), roced's drop counters and the
ICRC of every captured RoCE frame, and prints a table. Everything it starts is stopped and the
tap removed on every path.

Skips (exit 77) when not root or when the distribution has no qemu package (marked [machine]:
legitimate), and when the harness, a host tool or the VM image is missing (scripts/test.sh counts
those as failures: scripts/install-deps.sh should have provided them).

With --cc, congestion control instead (issue 12): a VM of its own, rocectl perf --cc dcqcn on
every run, perftest with --tclass=2 so that rxe's packets are ECT(0), and roced's rx marking
a fifth of the ECT packets CE on some runs (impair ecn=20%): perftest must pass as without, and
the capture must show roced's packets ECT(0), its CNPs (opcode 0x81, BECN, DSCP 48, Not-ECT)
to the VM's QPs with good ICRCs, and what rxe sends and does with them.

usage: test_rxe_perftest.py [BUILD_DIR] [--cc]  (default: the repository's build-int, then build)
Environment: ROCEDP_RXE_VM (harness dir), ROCEDP_RXE_VM_REBUILD=1 (run build-image.sh even
when the image exists), ROCEDP_INTEROP_KEEP=DIR (copy the pcap and outputs there).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'test', 'integration'))
from rocedp_it import Checks, Daemon, Failure  # noqa: E402

# A VM that test_rxe_suite.py booted for all the interop tests, one boot instead of six:
# "NAME TAP VM_IP HOST_IP ROCED_IP IP_MTU". Each test then takes its names, and sets the VM's
# IP MTU to its own and back.
SHARED = os.environ.get('ROCEDP_INTEROP_VM', '').split() or None


def names(vm, tap, net):
    """A test's VM, tap, VM, host and roced addresses (@net: the /24's first three octets),
    or the shared VM's."""
    if SHARED:
        return tuple(SHARED[:5])
    return vm, tap, f'{net}.1', f'{net}.254', f'{net}.2'


# Names and addresses of our own: another user of the harness runs br-rxe, tap-rxe0..2 and
# vm0..vm2 with 10.99.0.0/24 and 10.99.1.0/24.
VM, TAP, VM_IP, HOST_IP, ROCED_IP = names('rdpi', 'tap-rdpi', '10.99.7')
PREFIX = 24
TCP_PORT = 18599           # perftest's -p; not the default 18515, which other tests may use
LINK_GBPS = 10.0           # the tap's reported speed: no result may exceed it
# Jumbo frames on both sides: rxe's active MTU is then 4096 (netdev MTU - 80, as rxe reckons),
# roced's af_packet slots hold 9000-byte frames (framesz, blocksz and mbufs to match).
IP_MTU = 9000
AFP_JUMBO = 'framesz=9216,blocksz=36864'
MBUF_SIZE = 9184
SKIP = 77

ITERS = 100
BW_SIZE = 4096
LAT_SIZE = 2
PT = f'-d rxe0 -x $(rxe-gid -4) -F -p {TCP_PORT}'

# --cc: names and addresses of its own, so that it never meets the plain run's VM.
CC_TCP_PORT = 18604
CC_MARK = 'ecn=20%'        # roced's rx marks a fifth of the ECT packets CE
ECT0, CNP_DSCP, OP_CNP = 2, 48, 0x81


def use_cc_names():
    global VM, TAP, VM_IP, HOST_IP, ROCED_IP, TCP_PORT, PT
    VM, TAP, VM_IP, HOST_IP, ROCED_IP = names('rdpc', 'tap-rdpc', '10.99.10')
    TCP_PORT = CC_TCP_PORT
    PT = f'-d rxe0 -x $(rxe-gid -4) -F -p {TCP_PORT}'


def log(msg):
    print(msg, flush=True)


def skip(why, machine=False):
    """Skip; scripts/test.sh counts a skip as a failure unless the machine cannot run it."""
    log(f'interop: skipped{" [machine]" if machine else ""}: {why}')
    sys.exit(SKIP)


class Interrupted(Exception):
    pass


def on_signal(sig, frame):
    raise Interrupted(f'signal {sig}')


def sh(*cmd, check=True, timeout=120, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise Failure(f"{' '.join(cmd)}: exit {r.returncode}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


# ---- perftest output ----

def perftest_result(out, lat):
    """The numeric line after perftest's '#bytes' header, as a dict (None if absent)."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if '#bytes' not in line:
            continue
        for nxt in lines[i + 1:]:
            f = nxt.split()
            if not f or not re.fullmatch(r'\d+', f[0]):
                continue
            try:
                v = [float(x) for x in f]
            except ValueError:
                continue
            if lat and len(v) >= 9:
                return dict(zip(('bytes', 'iterations', 'min', 'max', 'typical', 'avg', 'stdev',
                                 'p99', 'p999'), v))
            if not lat and len(v) >= 5:
                return dict(zip(('bytes', 'iterations', 'bw_peak', 'bw_avg', 'msg_rate_mpps'),
                                v))
    return None


def rocectl_result(doc):
    r = doc.get('results') or []
    return r[-1] if r else None


# ---- the setup ----

def make_tap(tap, host_ip):
    """A standalone tap with the host's address on it, for a VM and roced to share."""
    sh('ip', 'link', 'del', tap, check=False)
    sh('ip', 'tuntap', 'add', 'dev', tap, 'mode', 'tap')
    # No host IPv6 noise; never forward what arrives on the tap (the host shares the tap's
    # MAC with roced, so frames for roced's IP also reach the host's IP stack).
    sh('sysctl', '-qw', f'net.ipv6.conf.{tap}.disable_ipv6=1', check=False)
    sh('sysctl', '-qw', f'net.ipv4.conf.{tap}.forwarding=0', check=False)
    sh('ip', 'link', 'set', tap, 'up')
    sh('ip', 'addr', 'add', f'{host_ip}/{PREFIX}', 'dev', tap)


def boot_vm(harness, vm, tap, host_ip, vm_ip, mtu, owner):
    """Boot @vm on a new @tap; @owner's tap_made and vm_up say what teardown must remove.
    Returns the seconds the boot took."""
    # A VM or tap of ours left by an interrupted earlier run.
    sh(os.path.join(harness, 'vm-stop.sh'), vm, check=False)
    make_tap(tap, host_ip)
    owner.tap_made = True
    t0 = time.time()
    owner.vm_up = True
    r = sh(os.path.join(harness, 'vm-boot.sh'), '-n', vm, '-t', tap, '-i', f'{vm_ip}/{PREFIX}',
           '-M', str(mtu), '--wait', '300', check=False, timeout=330)
    if r.returncode != 0:
        raise Failure(f'vm-boot.sh failed: {r.stdout[-1500:]}{r.stderr[-1500:]}')
    return time.time() - t0


def drop_vm(harness, vm, tap, owner):
    if owner.vm_up:
        sh(os.path.join(harness, 'vm-stop.sh'), vm, check=False, timeout=60)
    if owner.tap_made:
        sh('ip', 'link', 'del', tap, check=False)


# What a test may leave running in a shared VM (vm-run.sh's timeout ends it; a killed host
# side does not).
VM_TOOLS = ('ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat ib_read_lat '
            'ib_send_lat ib_atomic_lat ibv_rc_pingpong ibv_ud_pingpong rping tcpdump')


class Rig:
    def __init__(self, build, harness):
        self.build, self.harness = build, harness
        self.tmp = tempfile.mkdtemp(prefix='rocedp-interop-')
        self.procs = []           # background Popen objects (own process groups)
        self.daemon = None
        self.vm_up = False
        self.tap_made = False
        self.tcpdump = None
        self.pcap = os.path.join(self.tmp, 'interop.pcap')

    def script(self, name):
        return os.path.join(self.harness, name)

    def spawn(self, cmd, out):
        p = subprocess.Popen(cmd, stdout=open(out, 'w'), stderr=subprocess.STDOUT,
                             start_new_session=True, text=True)
        self.procs.append(p)
        return p

    @staticmethod
    def killpg(p, grace=5):
        if p.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                return
            try:
                p.wait(grace)
                return
            except subprocess.TimeoutExpired:
                pass

    def setup(self):
        if SHARED:
            self.adopt_vm()
        else:
            self.boot_s = boot_vm(self.harness, VM, TAP, HOST_IP, VM_IP, IP_MTU, self)
            log(f'interop: VM {VM} ({VM_IP}) on {TAP} ready in {self.boot_s:.1f} s')
        # qdisc_bypass=0: roced's frames pass the kernel's packet taps, so tcpdump on the tap
        # sees both directions.
        self.daemon = Daemon(self.build, self.tmp, 'roced',
                             # lcores free to run on either CPU: on a small shared host a
                             # pinned worker waits behind the VM's TCG thread for up to 0.1 s
                             ['--lcores', '0@(0,1),1@(0,1)',
                              f'--vdev=net_af_packet0,iface={TAP},qdisc_bypass=0,{AFP_JUMBO}'],
                             ['--port', 'net_af_packet0', '--ip', f'{ROCED_IP}/{PREFIX}',
                              '--mtu', str(IP_MTU), '--mbuf-size', str(MBUF_SIZE)])
        self.daemon.wait_ready()
        self.mac = self.daemon.ctl('port', 'show')['ports'][0]['mac'].lower()
        self.tcpdump = subprocess.Popen(['tcpdump', '-i', TAP, '-s', '0', '-U', '-w',
                                         self.pcap, 'udp port 4791'],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        time.sleep(1)

    def adopt_vm(self):
        """The suite's VM, at this test's IP MTU (rxe follows the netdev's MTU)."""
        r = self.vm(f'ip link set eth0 mtu {IP_MTU} && ip -o link show eth0', timeout=60)
        if r.returncode != 0 or f'mtu {IP_MTU} ' not in r.stdout:
            raise Failure(f"the shared VM's MTU cannot be set to {IP_MTU}: "
                          f'{r.stdout[-500:]}{r.stderr[-500:]}')
        self.boot_s = 0.0
        log(f'interop: the suite\'s VM {VM} ({VM_IP}) on {TAP}, IP MTU {IP_MTU}')

    def leave_vm(self):
        """The shared VM as the next test expects it: none of our tools left, the suite's MTU."""
        self.vm(f'for p in {VM_TOOLS}; do pkill -x $p; done; ip link set eth0 mtu {SHARED[5]}',
                timeout=60)

    def vm(self, cmd, timeout=300):
        return sh(self.script('vm-run.sh'), '-T', str(timeout), VM, cmd, check=False,
                  timeout=timeout + 30)

    def rocectl_perf(self, args, out):
        cmd = [os.path.join(self.build, 'app/rocectl'), '-s', self.daemon.sock,
               '--json', 'perf'] + args + ['-p', str(TCP_PORT)]
        return self.spawn(['timeout', '300'] + cmd, out)

    def host_listening(self):
        r = sh('ss', '-Hltn', f'sport = :{TCP_PORT}', check=False)
        return r.returncode == 0 and r.stdout.strip() != ''

    def vm_listening(self):
        r = self.vm(f"ss -Hltn 'sport = :{TCP_PORT}'", timeout=30)
        return r.returncode == 0 and r.stdout.strip() != ''

    def counters(self):
        return self.daemon.ctl('counters')['counters']

    def teardown(self):
        for p in self.procs:
            self.killpg(p)
        if self.daemon is not None:
            self.daemon.stop()
        if self.tcpdump is not None:
            self.killpg(self.tcpdump)
        if SHARED:
            self.leave_vm()
        drop_vm(self.harness, VM, TAP, self)
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---- one test ----

def wait_or_kill(rig, proc, secs):
    """The process's exit code, or -1 after killing its group when it overran @secs."""
    try:
        return proc.wait(secs)
    except subprocess.TimeoutExpired:
        rig.killpg(proc)
        return -1


def wait_until(pred, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.3)
    raise Failure(f'timed out waiting for {what}')


def run_case(rig, t, case):
    """case: (direction, verb, lat, rocectl args, perftest tool, perftest args[, impairment
    of roced's rx for the run])."""
    direction, verb, lat, rargs, tool, pargs = case[:6]
    ud = '-c' in rargs and rargs[rargs.index('-c') + 1] == 'UD'
    mark = case[6] if len(case) > 6 else None
    name = f"{tool} {'->' if direction == 'fwd' else '<-'} rocectl" + (' (CE marks)' if mark
                                                                       else '')
    tag = f"{direction}_{tool}" + ('_ce' if mark else '')
    rout = os.path.join(rig.tmp, f'{tag}.rocectl.json')
    if mark:
        rig.daemon.ctl('impair', 'set', f'spec={mark}', 'dir=rx')
    before = rig.counters()
    t0 = time.time()
    if direction == 'fwd':
        # stock perftest client in the VM, rocectl perf server on the host
        rp = rig.rocectl_perf([verb] + rargs + ['--server'], rout)
        wait_until(lambda: rig.host_listening() or rp.poll() is not None, 30,
                   'rocectl perf to listen')
        pr = rig.vm(f'{tool} {PT} {pargs} {HOST_IP}')
        pout, prc = pr.stdout + pr.stderr, pr.returncode
        rrc = wait_or_kill(rig, rp, 120)
    else:
        # stock perftest server in the VM, rocectl perf client on the host
        vout = os.path.join(rig.tmp, f'{tag}.perftest.txt')
        vp = rig.spawn([rig.script('vm-run.sh'), '-T', '300', VM, f'{tool} {PT} {pargs}'],
                       vout)
        wait_until(lambda: rig.vm_listening() or vp.poll() is not None, 60,
                   f'{tool} to listen in the VM')
        rp = rig.rocectl_perf([verb] + rargs + ['--client', VM_IP], rout)
        rrc = wait_or_kill(rig, rp, 330)
        prc = wait_or_kill(rig, vp, 120)
        pout = open(vout).read()
    secs = time.time() - t0
    with open(os.path.join(rig.tmp, f'{tag}.perftest.txt'), 'w') as f:
        f.write(pout)
    rtext = open(rout).read()
    after = rig.counters()
    if mark:
        rig.daemon.ctl('impair', 'clear')
    delta = {k: after[k] - before.get(k, 0) for k in after if isinstance(after[k], int)}
    if mark:
        # Every mark is seen; the NP answers marks with CNPs, at most one per 4 us per QP.
        t(delta.get('CE_RX', 0) > 0 and 0 < delta.get('CNP_TX', 0) <= delta['CE_RX'],
          f"{name}: CE marks seen and answered with CNPs: CE_RX {delta.get('CE_RX')}, "
          f"CNP_TX {delta.get('CNP_TX')}")
    if '--cc' in rargs:
        t(delta.get('CNP_RX', 0) == 0, f"{name}: rxe sent no CNP: {delta.get('CNP_RX')}")

    # -- checks --
    t(prc == 0, f'{name}: perftest exit status {prc}:\n{pout[-1500:]}')
    t(rrc == 0, f'{name}: rocectl perf exit status {rrc}:\n{rtext[-1500:]}')
    doc = {}
    for line in rtext.splitlines():
        if line.startswith('{'):
            try:
                doc = json.loads(line)
            except ValueError:
                pass
    t(doc.get('ok') is True, f'{name}: rocectl perf JSON ok: {rtext[-800:]}')
    t(doc.get('peer_version') == '6.06', f"{name}: peer version {doc.get('peer_version')}")
    pres = perftest_result(pout, lat)
    rres = rocectl_result(doc)
    # perftest's passive read_lat server prints no result line; so does ours.
    passive_read_lat = lat and verb in ('read', 'atomic')
    pside_passive = passive_read_lat and direction == 'rev'
    rside_passive = passive_read_lat and direction == 'fwd'
    if not pside_passive:
        t(pres is not None, f'{name}: perftest printed a result line:\n{pout[-1500:]}')
    if not rside_passive:
        t(rres is not None, f'{name}: rocectl printed a result: {rtext[-800:]}')
    row = {'name': name, 'secs': secs, 'p': pres, 'r': rres, 'delta': delta, 'lat': lat,
           'verify': doc.get('verify')}
    for side, res in (('perftest', pres), ('rocectl', rres)):
        if res is None:
            continue
        t(int(res['iterations']) == ITERS,
          f"{name}: {side} iterations {res['iterations']} != {ITERS}")
        if lat:
            ok = 0 < res['min'] <= res['max'] and res['min'] <= res['avg'] <= res['max'] and \
                res['p99'] <= res['max']
            typ = res.get('typical', res.get('median'))
            ok = ok and res['min'] <= typ <= res['max']
            t(ok, f'{name}: {side} latencies positive and ordered: {res}')
        else:
            gbps = res['bw_avg'] * 1048576 * 8 / 1e9      # MB/sec is 2^20 bytes
            peak = res['bw_peak'] * 1048576 * 8 / 1e9
            # Who measured these numbers: the client, whose report the passive write/read/
            # atomic server prints; a send_bw server measures its receives itself.
            if direction == 'fwd':
                by_perftest = side == 'perftest' or verb != 'send'
            else:
                by_perftest = side == 'perftest' and verb == 'send'
            implied = res['msg_rate_mpps'] * 1e6 * res['bytes'] / 1048576
            positive = res['msg_rate_mpps'] > 0 and (res['bw_avg'] > 0 or implied < 0.005)
            below_link = gbps < LINK_GBPS and peak < LINK_GBPS
            # A UD sender's SEND completes once queued (nothing acknowledges a datagram):
            # its rate is how fast it queued them, which the link does not bound.
            if ud and side == ('rocectl' if direction == 'rev' else 'perftest'):
                below_link = True
            if by_perftest and not (positive and below_link) and res['msg_rate_mpps'] >= 0:
                # perftest times with the guest's TSC under TCG. It has printed 0.000000 Mpps
                # for 100 atomics that took under 3 s of wall clock, and a send_bw server
                # that polled a burst of receives at once timed only that burst (27 Gb/s on
                # a tap). Its numbers, not ours: note them.
                log(f'interop: NOTE {name}: perftest measured {res} ({ITERS} ops in '
                    f'{time.time() - t0:.1f} s wall clock)')
                continue
            # perftest prints MB/sec with two decimals: 0.00 for a few thousand atomics/s.
            t(positive, f'{name}: {side} bandwidth and message rate > 0: {res}')
            t(below_link, f'{name}: {side} bandwidth below the {LINK_GBPS} Gb/s link: {res}')
    # Passive bw servers print the client's report, which travelled over the OOB exchange:
    # both must show the same numbers (perftest prints two decimals).
    if not lat and verb != 'send' and pres is not None and rres is not None:
        same = all(abs(pres[k] - rres[k]) <= 0.0051 + 1e-6 * abs(rres[k])
                   for k in ('bw_peak', 'bw_avg')) and \
            abs(pres['msg_rate_mpps'] - rres['msg_rate_mpps']) <= 1e-6 + 1e-3 * rres['msg_rate_mpps']
        t(same, f'{name}: the server reports the client\'s numbers: perftest {pres}, '
                f'rocectl {rres}')
    if '--mtu' in rargs:
        want = int(rargs[rargs.index('--mtu') + 1])
        t(doc.get('mtu') == want, f"{name}: path MTU {doc.get('mtu')}, asked for {want}")
    if '--verify' in rargs:
        t(doc.get('verify') == 'ok', f"{name}: roced's atomic targets add up to the client's "
                                     f"{ITERS} fetch-and-adds: verify={doc.get('verify')}")
    drops = {k: v for k, v in delta.items() if (k.startswith('DROP_') or k == 'RX_DROP') and v}
    t(not drops, f'{name}: roced dropped RoCE/IP frames: {drops}')
    if ud and not lat and direction == 'rev':
        # roced only sends: a datagram has no ACK
        t(delta.get('TX_PKTS', 0) >= ITERS and delta.get('RX_ROCE', 0) == 0,
          f"{name}: roced sent {delta.get('TX_PKTS')} datagrams, received "
          f"{delta.get('RX_ROCE')} RoCE frames")
    else:
        t(delta.get('RX_ROCE', 0) > 0, f'{name}: roced received RoCE frames')
    log(f"interop: {name}: {'ok' if prc == 0 and rrc == 0 else 'FAILED'} in {secs:.1f} s")
    return row


CASES = [
    # direction, rocectl verb, latency?, rocectl args, perftest tool, perftest args
    ('fwd', 'write', False, ['-s', str(BW_SIZE), '-n', str(ITERS)], 'ib_write_bw',
     f'-s {BW_SIZE} -n {ITERS}'),
    ('fwd', 'read', False, ['-s', str(BW_SIZE), '-n', str(ITERS)], 'ib_read_bw',
     f'-s {BW_SIZE} -n {ITERS}'),
    ('fwd', 'send', False, ['-s', str(BW_SIZE), '-n', str(ITERS)], 'ib_send_bw',
     f'-s {BW_SIZE} -n {ITERS}'),
    ('fwd', 'atomic', False, ['-n', str(ITERS), '--verify'], 'ib_atomic_bw', f'-n {ITERS}'),
    ('fwd', 'write', True, ['--lat', '-s', str(LAT_SIZE), '-n', str(ITERS)], 'ib_write_lat',
     f'-s {LAT_SIZE} -n {ITERS}'),
    ('fwd', 'send', True, ['--lat', '-s', str(LAT_SIZE), '-n', str(ITERS)], 'ib_send_lat',
     f'-s {LAT_SIZE} -n {ITERS}'),
    ('fwd', 'read', True, ['--lat', '-s', str(LAT_SIZE), '-n', str(ITERS)], 'ib_read_lat',
     f'-s {LAT_SIZE} -n {ITERS}'),
    ('rev', 'write', False, ['-s', str(BW_SIZE), '-n', str(ITERS)], 'ib_write_bw',
     f'-s {BW_SIZE} -n {ITERS}'),
    ('rev', 'read', False, ['-s', str(BW_SIZE), '-n', str(ITERS)], 'ib_read_bw',
     f'-s {BW_SIZE} -n {ITERS}'),
    ('rev', 'send', False, ['-s', str(BW_SIZE), '-n', str(ITERS)], 'ib_send_bw',
     f'-s {BW_SIZE} -n {ITERS}'),
    ('rev', 'atomic', False, ['-n', str(ITERS)], 'ib_atomic_bw', f'-n {ITERS}'),
    ('rev', 'write', True, ['--lat', '-s', str(LAT_SIZE), '-n', str(ITERS)], 'ib_write_lat',
     f'-s {LAT_SIZE} -n {ITERS}'),
    ('rev', 'send', True, ['--lat', '-s', str(LAT_SIZE), '-n', str(ITERS)], 'ib_send_lat',
     f'-s {LAT_SIZE} -n {ITERS}'),
    ('rev', 'read', True, ['--lat', '-s', str(LAT_SIZE), '-n', str(ITERS)], 'ib_read_lat',
     f'-s {LAT_SIZE} -n {ITERS}'),
    # Both MTUs said out loud, both directions: 64 KiB messages in 4096-byte packets (the
    # jumbo path), and in 1024-byte ones on the same jumbo link.
    ('fwd', 'write', False, ['-s', '65536', '-n', str(ITERS), '--mtu', '4096'], 'ib_write_bw',
     f'-s 65536 -n {ITERS} -m 4096'),
    ('rev', 'read', False, ['-s', '65536', '-n', str(ITERS), '--mtu', '4096'], 'ib_read_bw',
     f'-s 65536 -n {ITERS} -m 4096'),
    ('rev', 'write', False, ['-s', '65536', '-n', str(ITERS), '--mtu', '1024'], 'ib_write_bw',
     f'-s 65536 -n {ITERS} -m 1024'),
]


# Every run with congestion control on (the daemon's for the run: rocectl perf --cc), rxe's
# packets ECT(0) (--tclass=2), and on the runs with a mark roced's rx marks CE.
CC = ['--cc', 'dcqcn']
TC = '--tclass=2'
CC_CASES = [
    ('fwd', 'write', False, ['-s', str(BW_SIZE), '-n', str(ITERS)] + CC, 'ib_write_bw',
     f'-s {BW_SIZE} -n {ITERS} {TC}', CC_MARK),
    ('fwd', 'send', True, ['--lat', '-s', str(LAT_SIZE), '-n', str(ITERS)] + CC, 'ib_send_lat',
     f'-s {LAT_SIZE} -n {ITERS} {TC}', CC_MARK),
    ('rev', 'write', False, ['-s', str(BW_SIZE), '-n', str(ITERS)] + CC, 'ib_write_bw',
     f'-s {BW_SIZE} -n {ITERS} {TC}', CC_MARK),
    ('rev', 'read', False, ['-s', str(BW_SIZE), '-n', str(ITERS)] + CC, 'ib_read_bw',
     f'-s {BW_SIZE} -n {ITERS} {TC}'),
    ('fwd', 'send', False, ['-s', str(BW_SIZE), '-n', str(ITERS)] + CC, 'ib_send_bw',
     f'-s {BW_SIZE} -n {ITERS} {TC}'),
]


def ecn_of(pkt):
    """(src IP, ECN, DSCP, BTH opcode, BECN, dest QPN) of a RoCEv2 frame, else None."""
    from scapy.layers.inet import IP, UDP
    if IP not in pkt or UDP not in pkt or pkt[UDP].dport != 4791:
        return None
    bth = bytes(pkt[UDP].payload)
    if len(bth) < 12:
        return None
    return (pkt[IP].src, pkt[IP].tos & 3, pkt[IP].tos >> 2, bth[0], bool(bth[4] & 0x40),
            int.from_bytes(bth[5:8], 'big'))


def cc_capture_checks(rig, t):
    """What both sides put on the wire with congestion control on."""
    # Imported before reading, so that the layers are bound when the frames are dissected.
    from scapy.layers.inet import IP, UDP  # noqa: F401
    from scapy.layers.l2 import Ether  # noqa: F401
    from scapy.utils import rdpcap
    frames = [f for f in (ecn_of(p) for p in rdpcap(rig.pcap)) if f is not None]
    ours = [f for f in frames if f[0] == ROCED_IP]
    cnps = [f for f in ours if f[3] == OP_CNP]
    data = [f for f in ours if f[3] != OP_CNP]
    vm = [f for f in frames if f[0] == VM_IP]
    hist = lambda fs: {c: sum(1 for f in fs if f[1] == c) for c in sorted({f[1] for f in fs})}
    log(f'interop: cc capture: roced sent {len(data)} RoCE packets, ECN {hist(data)}; '
        f'{len(cnps)} CNPs, ECN {hist(cnps)}; the VM sent {len(vm)}, ECN {hist(vm)} '
        '(0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE)')
    t(data and all(f[1] == ECT0 for f in data),
      f'every RoCE packet roced sent is ECT(0): {hist(data)}')
    t(vm and all(f[1] == ECT0 for f in vm),
      f"rxe's packets carry --tclass=2's ECN, ECT(0): {hist(vm)}")
    vm_qps = {f[5] for f in data}
    t(len(cnps) > 0, 'roced sent CNPs to the VM')
    bad = [f for f in cnps if not (f[1] == 0 and f[2] == CNP_DSCP and f[4] and f[5] in vm_qps)]
    t(not bad, f"every CNP is Not-ECT, DSCP {CNP_DSCP}, BECN, to one of the VM's QPs "
               f"{sorted(vm_qps)}: {bad[:5]}")


def fmt(res, lat, key_typ):
    if res is None:
        return '-'
    if lat:
        return (f"{res['min']:.0f}/{res[key_typ]:.0f}/{res['max']:.0f} us")
    return (f"{res['bw_avg'] * 1048576 * 8 / 1e6:.1f} Mb/s "
            f"{res['msg_rate_mpps'] * 1e6:.0f}/s")


def table(rows):
    log('')
    log('interop results (perftest = stock perftest 6.06 on rxe in the VM; rocectl = rocectl '
        f'perf + roced on af_packet; {ITERS} iterations, bw {BW_SIZE} B, lat {LAT_SIZE} B)')
    hdr = (f"{'test':<26} {'iters p/r':>9}  {'perftest':<22} {'rocectl':<22} "
           f"{'RoCE rx/tx':>10} {'dup':>4} {'secs':>5}")
    log(hdr)
    log('-' * len(hdr))
    for r in rows:
        it = '/'.join(str(int(x['iterations'])) if x else '-' for x in (r['p'], r['r']))
        d = r['delta']
        dup = d.get('DUP_REQ', 0) + d.get('DUP_READ', 0) + d.get('DUP_ATOMIC', 0)
        extra = f" verify={r['verify']}" if r['verify'] else ''
        log(f"{r['name']:<26} {it:>9}  {fmt(r['p'], r['lat'], 'typical'):<22} "
            f"{fmt(r['r'], r['lat'], 'median'):<22} "
            f"{d.get('RX_ROCE', 0):>5}/{d.get('TX_PKTS', 0):<4} {dup:>4} {r['secs']:>5.1f}{extra}")
    log('(bw: average and message rate; lat: t_min/t_typical/t_max, rocectl: min/median/max; '
        'RoCE rx/tx and dup: roced counter deltas)')


def environment(args):
    """The build and harness directories, after every check a run needs (a skip, with its
    reason, for what is missing; the VM image built when absent)."""
    if args:
        build = os.path.abspath(args[0])
    else:
        build = next((os.path.join(REPO, b) for b in ('build-int', 'build')
                      if os.path.exists(os.path.join(REPO, b, 'app/roced/roced'))),
                     os.path.join(REPO, 'build'))
    harness = os.environ.get('ROCEDP_RXE_VM') or os.path.join(REPO, '..', 'shared', 'rxe-vm')
    harness = os.path.abspath(harness)
    if os.geteuid() != 0:
        skip('needs root (tap, qemu, af_packet)', machine=True)
    if not os.path.isfile(os.path.join(harness, 'vm-boot.sh')):
        skip(f'no rxe-vm harness at {harness} (set ROCEDP_RXE_VM)')
    for exe in ('roced/roced', 'rocectl'):
        if not os.access(os.path.join(build, 'app', exe), os.X_OK):
            log(f'interop: FAIL: {build}/app/{exe} missing (build first)')
            sys.exit(1)
    if shutil.which('qemu-system-x86_64') is None:
        # Only a distribution without the package is a machine limit; otherwise the install
        # step (scripts/install-deps.sh) is wrong.
        r = subprocess.run(['apt-cache', 'policy', 'qemu-system-x86'], capture_output=True,
                           text=True)
        skip('qemu-system-x86_64 missing', machine='Candidate:' not in r.stdout or
             'Candidate: (none)' in r.stdout)
    for tool in ('tcpdump', 'socat', 'ss', 'debootstrap', 'cpio'):
        if shutil.which(tool) is None:
            skip(f'{tool} missing on the host (scripts/install-deps.sh installs it)')
    root = os.environ.get('RXE_VM_ROOT', '/var/tmp/rxe-vm')
    if os.environ.get('ROCEDP_RXE_VM_REBUILD') == '1' or not all(
            os.path.isfile(os.path.join(root, f)) for f in ('vmlinuz', 'rxe-rootfs.cpio.gz')):
        log(f'interop: building the VM image under {root} (build-image.sh)')
        r = subprocess.run([os.path.join(harness, 'build-image.sh')], capture_output=True,
                           text=True, timeout=1200)
        if r.returncode != 0:
            skip('the VM image cannot be built: ' +
                 ((r.stderr.strip().splitlines() or ['build-image.sh failed'])[-1]))
    return build, harness


def main():
    cc = '--cc' in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != '--cc']
    if cc:
        use_cc_names()
    build, harness = environment(args)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    t = Checks('interop')
    rig = Rig(build, harness)
    rows = []
    t_start = time.time()
    try:
        rig.setup()
        # The VM must reach roced at L2/L3: ARP resolves to roced's (the tap's) MAC.
        r = rig.vm(f'ping -c 3 -W 2 {ROCED_IP}; ip neigh show {ROCED_IP}', timeout=60)
        t(r.returncode == 0, f'the VM pings roced: {r.stdout[-500:]}{r.stderr[-300:]}')
        t(rig.mac in r.stdout.lower(), f"the VM's ARP entry for {ROCED_IP} is roced's MAC "
                                       f"{rig.mac}: {r.stdout[-300:]}")
        r = rig.vm('rxe-gid; ib_write_bw --version 2>&1 | head -1', timeout=60)
        log('interop: VM GID table / perftest:\n' + r.stdout.strip())
        for case in CC_CASES if cc else CASES:
            rows.append(run_case(rig, t, case))
        if cc:
            r = rig.vm('rdma statistic show link rxe0/1', timeout=60)
            log("interop: rxe's counters after CNPs: " + ' '.join(r.stdout.split()[2:]))
        # What both sides put on the wire: every captured RoCE frame's ICRC, independently.
        rig.killpg(rig.tcpdump)
        r = sh('/usr/bin/python3', rig.script('icrc-check.py'), rig.pcap, check=False)
        log('interop: ' + r.stdout.strip().splitlines()[-1] if r.stdout.strip() else
            'interop: icrc-check printed nothing')
        m = re.search(r'(\d+) ICRC ok, (\d+) bad', r.stdout)
        t(r.returncode == 0 and m is not None and int(m.group(1)) > 0 and m.group(2) == '0',
          f'ICRC of every captured RoCE frame: {r.stdout[-500:]}{r.stderr[-500:]}')
        if cc:
            cc_capture_checks(rig, t)
        elif m:
            ours = sh('tcpdump', '-r', rig.pcap, '-nn', f'src host {ROCED_IP}', check=False)
            n_ours = len(ours.stdout.splitlines())
            t(n_ours > 0, 'the capture holds roced\'s frames too')
            log(f'interop: capture: {int(m.group(1))} RoCE frames, {n_ours} from roced, '
                'all ICRCs good')
            for who in ('src', 'dst'):
                big = sh('tcpdump', '-r', rig.pcap, '-nn', f'{who} host {ROCED_IP} and '
                         'greater 4150', check=False)
                t(len(big.stdout.splitlines()) > 0,
                  f'the capture holds 4096-byte path MTU frames {who} roced')
        c = rig.counters()
        log('interop: roced counters: ' + ', '.join(
            f'{k}={c[k]}' for k in ('RX_ROCE', 'TX_PKTS', 'RETRANSMITS', 'TIMEOUTS', 'DUP_REQ',
                                    'DUP_READ', 'DUP_ATOMIC', 'NAK_SEQ_TX', 'NAK_SEQ_RX',
                                    'NAK_RNR_RX', 'UNKNOWN_QP', 'DROP_ICRC', 'RX_DROP')
            if k in c))
        drops = {k: v for k, v in c.items() if (k.startswith('DROP_') or k == 'RX_DROP') and v}
        t(not drops, f'roced drop counters are zero: {drops}')
    except (Failure, subprocess.TimeoutExpired, Interrupted) as e:
        t(False, f'{type(e).__name__}: {e}')
        if rig.daemon is not None:
            log('--- roced log ---\n' + rig.daemon.tail())
    finally:
        keep = os.environ.get('ROCEDP_INTEROP_KEEP')
        if keep:
            os.makedirs(keep, exist_ok=True)
            for f in os.listdir(rig.tmp):
                if f.endswith(('.pcap', '.json', '.txt', '.log')):
                    shutil.copy(os.path.join(rig.tmp, f), keep)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        rig.teardown()
    if rows:
        table(rows)
    log(f'interop: {time.time() - t_start:.0f} s in all')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
