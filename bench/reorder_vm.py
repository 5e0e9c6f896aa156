#!/usr/bin/python3
"""READ against Linux Soft-RoCE over a path that reorders: roced is the READ requester
(`rocectl perf read --client -q 4`), stock `ib_read_bw` serves in the rxe VM, and netem on the
VM's egress delays, reorders and drops its READ responses. Goodput of each point against the
same run's clean path, and roced's counters (responses out of order, placed ahead, gaps that
closed themselves, re-issues, retries spent). With a second build directory, both builds run
alternately in the same VM session (A B A B): e.g. the code before and after a change.

usage: bench/reorder_vm.py BUILD [BUILD_BEFORE]    (as root; boots the VM of test/interop)
Environment: ROCE_BENCH_ITERS (READs per QP, 200), ROCE_BENCH_QPS (4), ROCE_BENCH_ROUNDS (2).
"""
import itertools
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'test', 'interop'))
import test_rxe_perftest as it  # noqa: E402

ITERS = int(os.environ.get('ROCE_BENCH_ITERS', '200'))
QPS = int(os.environ.get('ROCE_BENCH_QPS', '4'))
ROUNDS = int(os.environ.get('ROCE_BENCH_ROUNDS', '2'))
POINTS = [
    ('clean', ''),
    ('delay 1ms reorder 25%', 'delay 1ms reorder 25% 50%'),
    ('delay 1ms reorder 25%, loss 2%', 'delay 1ms reorder 25% 50% loss 2%'),
]
SERIAL = itertools.count()
KEYS = ('RESP_OOS', 'READ_OOO_PLACED', 'READ_REORDERED', 'READ_REISSUE', 'READ_SPURIOUS',
        'RETRANSMITS', 'TIMEOUTS', 'RETRY_EXC')


def use_build(rig, build):
    if rig.daemon is not None:
        rig.daemon.stop()
    rig.build = build
    rig.daemon = it.Daemon(build, rig.tmp, f'roced-{next(SERIAL)}',
                           ['--lcores', '0@(0,1),1@(0,1)',
                            f'--vdev=net_af_packet0,iface={it.TAP},qdisc_bypass=0,'
                            f'{it.AFP_JUMBO}'],
                           ['--port', 'net_af_packet0', '--ip', f'{it.ROCED_IP}/{it.PREFIX}',
                            '--mtu', str(it.IP_MTU), '--mbuf-size', str(it.MBUF_SIZE)])
    rig.daemon.wait_ready()


def one(rig, netem):
    rig.vm('tc qdisc del dev eth0 root 2>/dev/null; true', timeout=30)
    if netem:
        rig.vm(f'tc qdisc add dev eth0 root netem {netem}', timeout=30)
    vout = os.path.join(rig.tmp, 'vm.txt')
    vp = rig.spawn([rig.script('vm-run.sh'), '-T', '300', it.VM,
                    f'ib_read_bw {it.PT} -s 65536 -q {QPS} -n {ITERS} -m 1024'], vout)
    it.wait_until(lambda: rig.vm_listening() or vp.poll() is not None, 60, 'ib_read_bw')
    before = rig.counters()
    rout = os.path.join(rig.tmp, 'r.json')
    rp = rig.rocectl_perf(['read', '-s', '65536', '-q', str(QPS), '-n', str(ITERS), '--mtu', '1024',
                           '--client', it.VM_IP], rout)
    it.wait_or_kill(rig, rp, 300)
    it.wait_or_kill(rig, vp, 60)
    after = rig.counters()
    doc = {}
    for line in open(rout):
        if line.startswith('{'):
            doc = json.loads(line)
    res = it.rocectl_result(doc) if doc.get('ok') else None
    gbps = res['bw_avg'] * 1048576 * 8 / 1e9 if res else -1.0
    if res is None:
        print('  rocectl: ' + open(rout).read()[-300:].replace('\n', ' '), flush=True)
    return gbps, {k: after.get(k, 0) - before.get(k, 0) for k in KEYS}


def main():
    builds = [os.path.abspath(b) for b in sys.argv[1:3]]
    if not builds:
        print(__doc__)
        return 2
    harness = os.path.abspath(os.path.join(HERE, '..', '..', 'shared', 'rxe-vm'))
    rig = it.Rig(builds[0], harness)
    rows = []
    try:
        rig.setup()
        for rnd in range(ROUNDS):
            for b in builds:
                use_build(rig, b)
                base = None
                for name, netem in POINTS:
                    g, d = one(rig, netem)
                    base = g if base is None else base
                    rows.append((rnd, b, name, g, g / base if base > 0 else 0, d))
                    print(f'{rnd} {b[-24:]:>24} {name:<32} {g:7.3f} Gb/s '
                          f'{rows[-1][4]:5.2f} ' + ' '.join(f'{k}={v}' for k, v in d.items()),
                          flush=True)
    finally:
        rig.vm('tc qdisc del dev eth0 root 2>/dev/null; true', timeout=30)
        rig.teardown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
