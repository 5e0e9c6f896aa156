#!/usr/bin/python3
"""Interop of perftest's UD mode: stock ib_send_bw -c UD and ib_send_lat -c UD (perftest 6.06)
on Linux Soft-RoCE in a qemu VM against roced + rocectl perf -c UD on the host, both
directions, in a VM of its own (so test_rxe_perftest.py keeps its runtime).

It is test_rxe_perftest.py's rig and checks (both sides' exit status, iterations, bandwidth
below the link, latency order, roced's drop counters, the ICRC of every captured frame,
4096-byte path MTU frames both ways) with UD cases and UD checks: both sides say
`Connection type : UD`, roced drops no datagram (its UD_* counters), the default size comes
down to the MTU on both sides with perftest's words, and roced received every one of the
client's datagrams when it is the server.

Skips (exit 77) as test_rxe_perftest.py does.

usage: test_rxe_perftest_ud.py [BUILD_DIR]
Environment: as test_rxe_perftest.py.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_rxe_perftest as base  # noqa: E402

# Names and addresses of our own (test_rxe_perftest.py has rdpi, tap-rdpi, 10.99.7.0/24).
base.VM, base.TAP, base.VM_IP, base.HOST_IP, base.ROCED_IP = base.names(
    'rdpu', 'tap-rdpu', '10.99.9')
base.TCP_PORT = 18603
base.PT = f'-d rxe0 -x $(rxe-gid -4) -F -p {base.TCP_PORT}'

ITERS = base.ITERS
MTU = 4096                  # rxe's active MTU on the VM's 9000-byte link, and roced's path MTU
UD_DROPS = ('UD_QKEY_DROP', 'UD_NO_RECV', 'UD_RX_TOO_LONG', 'UD_RECV_LEN_ERR', 'UD_TX_TOO_LONG',
            'STATE_DROP', 'UNKNOWN_QP', 'TRANSPORT_DROP')

UD = ['-c', 'UD']
CASES = [
    # direction, rocectl verb, latency?, rocectl args, perftest tool, perftest args
    ('fwd', 'send', False, UD + ['-s', str(MTU), '-n', str(ITERS)], 'ib_send_bw',
     f'-c UD -s {MTU} -n {ITERS}'),
    ('rev', 'send', False, UD + ['-s', str(MTU), '-n', str(ITERS)], 'ib_send_bw',
     f'-c UD -s {MTU} -n {ITERS}'),
    ('fwd', 'send', True, UD + ['--lat', '-s', '2', '-n', str(ITERS)], 'ib_send_lat',
     f'-c UD -s 2 -n {ITERS}'),
    ('rev', 'send', True, UD + ['--lat', '-s', '2', '-n', str(ITERS)], 'ib_send_lat',
     f'-c UD -s 2 -n {ITERS}'),
    # no -s: perftest's 65536 and ours both come down to the MTU, both sides say so
    ('fwd', 'send', False, UD + ['-n', str(ITERS)], 'ib_send_bw', f'-c UD -n {ITERS}'),
    ('rev', 'send', False, UD + ['-n', str(ITERS)], 'ib_send_bw', f'-c UD -n {ITERS}'),
]

_run_case = base.run_case


def run_case(rig, t, case):
    """The base test's case, then what UD adds to it."""
    direction, verb, lat, rargs, tool, pargs = case
    row = _run_case(rig, t, case)
    name = 'UD ' + row['name'] + ('' if '-s' in rargs else ' (default size)')
    row['name'] = name
    tag = f"{direction}_{tool}"
    pout = open(os.path.join(rig.tmp, f'{tag}.perftest.txt')).read()
    rtext = open(os.path.join(rig.tmp, f'{tag}.rocectl.json')).read()
    doc = {}
    for line in rtext.splitlines():
        if line.startswith('{'):
            try:
                doc = json.loads(line)
            except ValueError:
                pass
    t('Connection type : UD' in pout, f'{name}: perftest runs UD:\n{pout[:1500]}')
    t(doc.get('connection') == 'UD' and doc.get('mtu') == MTU,
      f"{name}: rocectl perf runs UD at MTU {MTU}: {doc.get('connection')}, {doc.get('mtu')}")
    drops = {k: row['delta'].get(k, 0) for k in UD_DROPS if row['delta'].get(k, 0)}
    t(not drops, f'{name}: roced dropped datagrams: {drops}')
    if not lat:
        for side, res in (('perftest', row['p']), ('rocectl', row['r'])):
            t(res is not None and int(res['bytes']) == MTU,
              f'{name}: {side} sent {MTU}-byte messages: {res}')
        if direction == 'fwd':
            # roced is the server: it received every datagram perftest sent, each once
            got = row['delta'].get('RECV_COMPLETED', 0)
            t(got == ITERS, f'{name}: roced completed {got} receives, want {ITERS}')
        if '-s' not in rargs:
            t('Max msg size in UD is MTU 4096' in pout and 'Changing to this MTU' in pout,
              f'{name}: perftest brought 65536 down to the MTU:\n{pout[:1200]}')
            t('Max msg size in UD is MTU 4096: changing to this MTU' in rtext,
              f'{name}: so did rocectl perf: {rtext[-600:]}')
    return row


base.run_case = run_case
base.CASES = CASES


if __name__ == '__main__':
    sys.exit(base.main())
