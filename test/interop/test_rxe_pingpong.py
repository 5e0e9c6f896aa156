#!/usr/bin/python3
"""Interop with rdma-core's own tools: ibv_rc_pingpong and ibv_ud_pingpong on Linux Soft-RoCE
(rdma_rxe) in a qemu VM against rocectl pingpong + roced on the host, in both roles.

The VM comes from the rxe-vm harness (ROCEDP_RXE_VM, default ../shared/rxe-vm beside the
repository). The test creates its own standalone tap, boots one VM on it (names and addresses
of its own: VM rdpp, tap-rdpp, 10.99.8.0/24, TCP port 18602), attaches roced to the tap with
net_af_packet, and runs each tool as the server in the VM with rocectl pingpong as its client,
and the reverse, with -c (the client checks that what came back is what it sent): both sides
must exit 0, print their address lines (each side's remote one the other's local one, the VM's
GID its IPv4 address, ours roced's), their bytes line (size * iters * 2) and iterations line,
and no "invalid data"; roced must drop nothing. Everything it starts is stopped and the tap
removed on every path.

Skips (exit 77) when not root or when the distribution has no qemu package (marked [machine]:
legitimate), and when the harness, a host tool or the VM image is missing (scripts/test.sh counts
those as failures: scripts/install-deps.sh should have provided them).

usage: test_rxe_pingpong.py [BUILD_DIR]      (default: the repository's build-int, then build)
Environment: ROCEDP_RXE_VM (harness dir), ROCEDP_INTEROP_KEEP=DIR (copy the outputs there).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_rxe_perftest as base  # noqa: E402
from test_rxe_perftest import (Checks, Failure, Interrupted, log, on_signal,  # noqa: E402
                               wait_or_kill, wait_until)

# Names and addresses of our own: other users of the harness run br-rxe, tap-rxe0..2, vm0..vm2
# (10.99.0.0/24, 10.99.1.0/24) and the perftest interop tests rdpi, rdpu, rdpc.
VM, TAP, VM_IP, HOST_IP, ROCED_IP = base.names('rdpp', 'tap-rdpp', '10.99.8')
base.VM, base.TAP, base.VM_IP, base.HOST_IP, base.ROCED_IP = VM, TAP, VM_IP, HOST_IP, ROCED_IP
TCP_PORT = base.TCP_PORT = 18602
# rxe's active MTU is then 1024: their defaults (-m 1024, ud -s 1024).
base.IP_MTU = 1500
# In the VM: rxe0, its RoCE v2 IPv4 GID (without -g they send no GID, which RoCE cannot use).
VM_OPTS = f'-d rxe0 -g $(rxe-gid -4) -p {TCP_PORT}'

LOCAL_RE = re.compile(r'^  local address:  LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), '
                      r'PSN 0x([0-9a-f]{6})[,:] GID (\S+)$', re.M)
REMOTE_RE = re.compile(r'^  remote address: LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), '
                       r'PSN 0x([0-9a-f]{6}), GID (\S+)$', re.M)
BYTES_RE = re.compile(r'^(\d+) bytes in (\d+\.\d\d) seconds = (\d+\.\d\d) Mbit/sec$', re.M)
ITERS_RE = re.compile(r'^(\d+) iters in (\d+\.\d\d) seconds = (\d+\.\d\d) usec/iter$', re.M)

# (tool, rocectl transport, size, iterations, extra options for both sides)
CASES = [
    ('ibv_rc_pingpong', 'rc', 4096, 1000, []),
    ('ibv_ud_pingpong', 'ud', 1024, 1000, []),
    # a message of 16 packets at path MTU 1024, few receives posted at a time
    ('ibv_rc_pingpong', 'rc', 16384, 200, ['-s', '16384', '-r', '4', '-n', '200']),
    ('ibv_ud_pingpong', 'ud', 512, 300, ['-s', '512', '-r', '8', '-n', '300']),
]


class Rig(base.Rig):
    def rocectl(self, args, out):
        cmd = [os.path.join(self.build, 'app/rocectl'), '-s', self.daemon.sock, 'pingpong'] + \
            args + ['-p', str(TCP_PORT)]
        return self.spawn(['timeout', '300'] + cmd, out)


def parse(out):
    loc, rem = LOCAL_RE.search(out), REMOTE_RE.search(out)
    b, i = BYTES_RE.search(out), ITERS_RE.search(out)
    return {
        'local': (int(loc.group(2), 16), int(loc.group(3), 16), loc.group(4)) if loc else None,
        'remote': (int(rem.group(2), 16), int(rem.group(3), 16), rem.group(4)) if rem else None,
        'local_sep': loc.group(0)[loc.group(0).index(' GID') - 1] if loc else None,
        'bytes': int(b.group(1)) if b else None,
        'iters': int(i.group(1)) if i else None,
        'usec': float(i.group(3)) if i else None,
    }


def run_case(rig, t, direction, case):
    tool, tr, size, iters, extra = case
    name = f"{tool} {'server' if direction == 'fwd' else 'client'} / rocectl " \
        f"{'client' if direction == 'fwd' else 'server'} {' '.join(extra)}".rstrip()
    tag = f"{direction}_{tool}_{size}"
    rout = os.path.join(rig.tmp, f'{tag}.rocectl.txt')
    vout = os.path.join(rig.tmp, f'{tag}.vm.txt')
    args = [tr] + extra
    vm_cmd = f"{tool} {VM_OPTS} {' '.join(extra)}"
    before = rig.counters()
    t0 = time.time()
    if direction == 'fwd':
        # the tool as the server in the VM, rocectl pingpong -c its client
        vp = rig.spawn([rig.script('vm-run.sh'), '-T', '300', VM, vm_cmd], vout)
        wait_until(lambda: rig.vm_listening() or vp.poll() is not None, 60,
                   f'{tool} to listen in the VM')
        rp = rig.rocectl(args + ['-c', VM_IP], rout)
        rrc = wait_or_kill(rig, rp, 330)
        vrc = wait_or_kill(rig, vp, 120)
    else:
        # rocectl pingpong as the server, the tool -c its client in the VM
        rp = rig.rocectl(args, rout)
        wait_until(lambda: rig.host_listening() or rp.poll() is not None, 30,
                   'rocectl pingpong to listen')
        vp = rig.spawn([rig.script('vm-run.sh'), '-T', '300', VM, f'{vm_cmd} -c {HOST_IP}'],
                       vout)
        vrc = wait_or_kill(rig, vp, 330)
        rrc = wait_or_kill(rig, rp, 120)
    secs = time.time() - t0
    rtext, vtext = open(rout).read(), open(vout).read()
    after = rig.counters()
    delta = {k: after[k] - before.get(k, 0) for k in after if isinstance(after[k], int)}

    t(vrc == 0, f'{name}: {tool} exit status {vrc}:\n{vtext[-1500:]}')
    t(rrc == 0, f'{name}: rocectl pingpong exit status {rrc}:\n{rtext[-1500:]}')
    v, r = parse(vtext), parse(rtext)
    t(all(x is not None for x in (v['local'], v['remote'], r['local'], r['remote'])),
      f'{name}: both print their address lines:\n{vtext[-800:]}\n{rtext[-800:]}')
    if v['local'] and r['remote'] and r['local'] and v['remote']:
        t(r['remote'] == v['local'] and v['remote'] == r['local'],
          f"{name}: each side's remote address is the other's local one: {v} {r}")
        t(v['local'][2] == f'::ffff:{VM_IP}' and r['local'][2] == f'::ffff:{ROCED_IP}',
          f"{name}: the GIDs are the VM's and roced's IPv4 addresses: {v} {r}")
        want = ':' if tr == 'ud' else ','
        t(v['local_sep'] == want and r['local_sep'] == want,
          f"{name}: the local line's separator before the GID is {want!r}, as the tool's")
    for side, res, text in ((tool, v, vtext), ('rocectl', r, rtext)):
        t(res['bytes'] == size * iters * 2 and res['iters'] == iters,
          f'{name}: {side} counted {size} * {iters} * 2 bytes and {iters} iters: {res}\n'
          f'{text[-600:]}')
        t(res['usec'] is not None and res['usec'] > 0, f'{name}: {side} took time: {res}')
        t('invalid data' not in text, f'{name}: {side} found the data intact: {text[-600:]}')
    dr = {k: v2 for k, v2 in delta.items() if v2 and (k.startswith('DROP_') or k in (
        'RX_DROP', 'UNKNOWN_QP', 'UD_QKEY_DROP', 'UD_RECV_LEN_ERR', 'NOT_OURS'))}
    t(not dr, f'{name}: roced dropped nothing: {dr}')
    t(delta.get('RX_ROCE', 0) >= iters, f"{name}: roced received the RoCE traffic: "
      f"{delta.get('RX_ROCE', 0)}")
    log(f"interop: {name}: {'ok' if vrc == 0 and rrc == 0 else 'FAILED'} in {secs:.1f} s "
        f"({tool} {v['usec']} usec/iter, rocectl {r['usec']} usec/iter)")
    if os.environ.get('ROCEDP_INTEROP_KEEP'):
        keep = os.environ['ROCEDP_INTEROP_KEEP']
        os.makedirs(keep, exist_ok=True)
        shutil.copy(rout, keep)
        shutil.copy(vout, keep)


def main():
    build, harness = base.environment(sys.argv[1:])
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    t = Checks('interop_pingpong')
    rig = Rig(build, harness)
    t_start = time.time()
    try:
        rig.setup()
        r = rig.vm(f'ping -c 3 -W 2 {ROCED_IP}; rxe-gid; ibv_devinfo -d rxe0 | '
                   'grep -E "active_mtu|state"', timeout=60)
        t(r.returncode == 0, f'the VM pings roced: {r.stdout[-500:]}{r.stderr[-300:]}')
        log('interop: VM GID table / rxe0:\n' + r.stdout.strip())
        for case in CASES:
            for direction in ('fwd', 'rev'):
                run_case(rig, t, direction, case)
        c = rig.counters()
        log('interop: roced counters: ' + ', '.join(
            f'{k}={c[k]}' for k in ('RX_ROCE', 'TX_PKTS', 'RETRANSMITS', 'TIMEOUTS', 'DUP_REQ',
                                    'NAK_SEQ_TX', 'NAK_RNR_RX', 'UNKNOWN_QP', 'UD_QKEY_DROP',
                                    'DROP_ICRC', 'RX_DROP') if k in c))
        q = rig.daemon.ctl('qp', 'show')['qps']
        t(not q, f'roced holds no QP after the runs: {q}')
    except (Failure, subprocess.TimeoutExpired, Interrupted) as e:
        t(False, f'{type(e).__name__}: {e}')
        if rig.daemon is not None:
            log('--- roced log ---\n' + rig.daemon.tail())
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        rig.teardown()
    log(f'interop: {time.time() - t_start:.0f} s in all')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
