#!/usr/bin/python3
"""Interop of perftest's rdma_cm mode: stock ib_write_bw -R, ib_read_bw -R, ib_send_bw -R and
ib_write_lat -R (perftest 6.06) on Linux Soft-RoCE in a qemu VM against roced + rocectl perf -R
on the host, both directions, in a VM of its own.

It is test_rxe_perftest.py's rig and checks (both sides' exit status, iterations, bandwidth
below the link, latency order, the client's report the passive server prints, roced's drop
counters, the ICRC of every captured frame) with -R cases and what -R adds: both sides say
`rdma_cm QPs : ON` and `Data ex. method : rdma_cm`; each run makes two CM connections on
roced (the side channel's and the test QP's: its CM counted both established), nothing went
over TCP, and when the run is over no connection is left on roced (time wait over) and
nobody listens; the capture holds the REQ, REP, RTU, DREQ and DREP MADs of both sides.

Skips (exit 77) as test_rxe_perftest.py does.

usage: test_rxe_perftest_rcm.py [BUILD_DIR]
Environment: as test_rxe_perftest.py.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_rxe_perftest as base  # noqa: E402

# Names and addresses of our own (rdpi 10.99.7, rdpu 10.99.9, rdpc 10.99.10 are others').
base.VM, base.TAP, base.VM_IP, base.HOST_IP, base.ROCED_IP = base.names(
    'rdpm', 'tap-rdpm', '10.99.12')
base.TCP_PORT = 18605
base.PT = f'-d rxe0 -x $(rxe-gid -4) -F -p {base.TCP_PORT} -R'

ITERS = base.ITERS
BW = base.BW_SIZE
R = ['-R']
CASES = [
    # direction, rocectl verb, latency?, rocectl args, perftest tool, perftest args
    ('fwd', 'write', False, R + ['-s', str(BW), '-n', str(ITERS)], 'ib_write_bw',
     f'-s {BW} -n {ITERS}'),
    ('rev', 'write', False, R + ['-s', str(BW), '-n', str(ITERS)], 'ib_write_bw',
     f'-s {BW} -n {ITERS}'),
    ('fwd', 'read', False, R + ['-s', str(BW), '-n', str(ITERS)], 'ib_read_bw',
     f'-s {BW} -n {ITERS}'),
    ('rev', 'read', False, R + ['-s', str(BW), '-n', str(ITERS)], 'ib_read_bw',
     f'-s {BW} -n {ITERS}'),
    ('fwd', 'send', False, R + ['-s', str(BW), '-n', str(ITERS)], 'ib_send_bw',
     f'-s {BW} -n {ITERS}'),
    ('rev', 'send', False, R + ['-s', str(BW), '-n', str(ITERS)], 'ib_send_bw',
     f'-s {BW} -n {ITERS}'),
    ('fwd', 'write', True, R + ['--lat', '-s', '2', '-n', str(ITERS)], 'ib_write_lat',
     f'-s 2 -n {ITERS}'),
    ('rev', 'write', True, R + ['--lat', '-s', '2', '-n', str(ITERS)], 'ib_write_lat',
     f'-s 2 -n {ITERS}'),
]
MADS = {0x10: 'REQ', 0x13: 'REP', 0x14: 'RTU', 0x15: 'DREQ', 0x16: 'DREP'}


def cm_listening(rig):
    """rocectl perf -R --server listens through roced's CM, not on TCP."""
    try:
        ls = rig.daemon.ctl('cm', 'show')['listeners']
    except Exception:
        return False
    return any(x['port'] == base.TCP_PORT for x in ls)


def vm_cm_listening(rig):
    """perftest -R's server: an rdma_cm id listening on the port (iproute2's rdma tool)."""
    r = rig.vm('rdma resource show cm_id', timeout=30)
    return r.returncode == 0 and any('LISTEN' in line and f':{base.TCP_PORT}' in line
                                     for line in r.stdout.splitlines())


base.Rig.host_listening = cm_listening
base.Rig.vm_listening = vm_cm_listening

_run_case = base.run_case


def cm_state(rig):
    s = rig.daemon.ctl('cm', 'show')
    return s['conns'], s['listeners'], s['counters'], s.get('orphans', 0)


def run_case(rig, t, case):
    """The base test's case, then what -R adds to it."""
    direction, verb, lat, rargs, tool, pargs = case
    host_ip = base.HOST_IP
    # perftest -R connects to roced's address (the CM's), not the host's TCP side channel
    base.HOST_IP = base.ROCED_IP
    cnt0 = cm_state(rig)[2]
    est0 = cnt0.get('established', 0)
    try:
        row = _run_case(rig, t, case)
    finally:
        base.HOST_IP = host_ip
    name = row['name'] + ' -R'
    row['name'] = name
    tag = f'{direction}_{tool}'
    pout = open(os.path.join(rig.tmp, f'{tag}.perftest.txt')).read()
    rtext = open(os.path.join(rig.tmp, f'{tag}.rocectl.json')).read()
    t('rdma_cm QPs' in pout and ': ON' in pout.split('rdma_cm QPs', 1)[1][:20] and
      'Data ex. method : rdma_cm' in pout, f'{name}: perftest runs -R:\n{pout[:1500]}')
    doc = {}
    for line in rtext.splitlines():
        if line.startswith('{'):
            try:
                doc = json.loads(line)
            except ValueError:
                pass
    t(doc.get('rdma_cm') is True, f'{name}: rocectl perf ran -R: {rtext[-400:]}')
    # two CM connections: the side channel's and the test QP's
    end = time.time() + 40
    while True:
        conns, listeners, cnt, orphans = cm_state(rig)
        if (not conns and not orphans and not listeners) or time.time() > end:
            break
        time.sleep(0.5)
    t(cnt.get('established', 0) - est0 == 2,
      f"{name}: roced's CM established 2 connections: {cnt.get('established', 0) - est0}")
    t(not conns and not orphans and not listeners,
      f'{name}: no CM connection or listener left on roced: {conns} {listeners} '
      f'orphans {orphans}')
    # 'duplicate' is no refusal: perftest's server disconnects its test QP as our client
    # does (its rdma_disconnect() in destroy_ctx()), the DREQs cross, each side answers
    # the other's with a DREP and enters time wait, where the DREP to its own DREQ counts as
    # a duplicate, as in Linux's cm_drep_handler()
    bad = {k: v - cnt0.get(k, 0) for k, v in cnt.items()
           if k not in ('established', 'duplicate') and v != cnt0.get(k, 0)}
    t(not bad, f"{name}: roced's CM refused nothing: {bad}")
    return row


def mad_checks(rig, t):
    """The CM MADs both sides sent: REQ, REP, RTU, DREQ and DREP from each."""
    # Imported before reading, so that the layers are bound when the frames are dissected.
    from scapy.layers.inet import IP, UDP  # noqa: F401
    from scapy.layers.l2 import Ether  # noqa: F401
    from scapy.utils import rdpcap
    seen = {base.ROCED_IP: set(), base.VM_IP: set()}
    for p in rdpcap(rig.pcap):
        if IP not in p or UDP not in p or p[UDP].dport != 4791:
            continue
        b = bytes(p[UDP].payload)
        # BTH (12) + DETH (8) to QP1, then the MAD: class 0x07 at 1, attribute ID at 16
        if len(b) < 20 + 24 or int.from_bytes(b[5:8], 'big') != 1 or b[20 + 1] != 0x07:
            continue
        attr = int.from_bytes(b[20 + 16:20 + 18], 'big')
        if p[IP].src in seen and attr in MADS:
            seen[p[IP].src].add(MADS[attr])
    for who, got in seen.items():
        t({'REQ', 'REP', 'RTU', 'DREQ', 'DREP'} <= got,
          f'the capture holds REQ, REP, RTU, DREQ and DREP from {who}: {sorted(got)}')


base.run_case = run_case
base.CASES = CASES


def main():
    # the base's main runs the cases and the capture checks; the MADs are checked on the
    # capture it leaves, before its teardown removes it
    orig_teardown = base.Rig.teardown
    state = {}

    def teardown(rig):
        if os.path.exists(rig.pcap) and state.get('t') is not None:
            subprocess.run(['sync'])
            mad_checks(rig, state['t'])
        orig_teardown(rig)

    orig_checks = base.Checks

    class Checks(orig_checks):
        def __init__(self, name):
            super().__init__(name)
            state['t'] = self

    base.Checks = Checks
    base.Rig.teardown = teardown
    return base.main()


if __name__ == '__main__':
    sys.exit(main())
