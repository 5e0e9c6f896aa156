#!/usr/bin/python3
"""A memif peer that vanishes under traffic must not take the survivor down.

Phase 1: a memif server daemon lives on while its client is killed (SIGKILL or SIGINT, in
turn) mid-traffic and started again, CYCLES times. Phase 2: the same with roles swapped, a
client surviving servers that die. Phase 3: both daemons stopped together with SIGINT under
traffic (as an operator stops a pair), both must exit 0. Every cycle both send WRITEs to each other; after each kill
the survivor must still answer `status`, and at the end it must have served every cycle and
stop cleanly with exit 0. The disconnect unmaps the peer's shared memory on the interrupt
thread while a worker may be inside rx/tx burst: roced's workers are brought to a quiescent
point first (lib/dataplane/quiesce.c).

usage: test_peer_churn.py BUILD_DIR [CYCLES]       (default 30; ROCE_CHURN_CYCLES)
"""
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Failure, Pair, connect, MR_ALL, QP_ALL  # noqa: E402


def traffic(x, y):
    """Long WRITE jobs both ways on one QP pair, so both workers poll and send."""
    mx, my = x.ctl('mr', 'reg', 1 << 18, MR_ALL)['mr'], y.ctl('mr', 'reg', 1 << 18, MR_ALL)['mr']
    qx, qy = connect(x, y, timeout=10, retry_cnt=1)
    for d, q, m, r in ((x, qx, mx, my), (y, qy, my, mx)):
        d.ctl('job', 'start', q['qpn'], 'op=write', f"lkey={m['lkey']}", 'length=65536',
              f"remote_addr={r['iova']}", f"rkey={r['rkey']}", 'count=100000000')
    return qx


def wait_link(d, up, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        if d.ctl('port', 'show')['ports'][0]['link_up'] == up:
            return
        time.sleep(0.05)
    raise Failure(f'{d.name}: link did not go {"up" if up else "down"}')


def phase(t, build, survivor_role, cycles, rng):
    peer_role = 'client' if survivor_role == 'server' else 'server'
    with Pair(build, start=False) as p:
        m = os.path.join(p.tmp, 'memif.sock')

        def start(name, role, ip):
            d = p.start(name, ['-l', '0,1', f'--vdev=net_memif0,role={role},socket={m},'
                               'bsize=8192'],
                        ['--port', 'net_memif0', '--ip', f'{ip}/24'])
            d.wait_ready()
            return d

        # A memif client needs its server's socket to start.
        first = start('peer0', peer_role, '10.0.0.2') if survivor_role == 'client' else None
        s = start('survivor', survivor_role, '10.0.0.1')
        served = 0
        for i in range(cycles):
            peer = first if i == 0 and first is not None else \
                start(f'peer{i}', peer_role, '10.0.0.2')
            wait_link(s, True)
            wait_link(peer, True)
            traffic(s, peer)
            time.sleep(rng.uniform(0.05, 0.4))
            sig = signal.SIGKILL if i % 2 == 0 else signal.SIGINT
            peer.stop(sig)
            p.daemons.remove(peer)
            if not t(s.proc.poll() is None, f'{survivor_role} alive after its peer {i} '
                                            f'({sig.name}):\n{s.tail()}'):
                return
            st = s.ctl('status')
            served += 1
            if survivor_role == 'client':
                wait_link(s, False)
        t(served == cycles, f'{survivor_role}: {served} of {cycles} cycles')
        # Every disconnect unmapped the peer's memory through roced's munmap, which waited
        # for the workers; a client also restarted its port to reconnect.
        t(st['quiesces'] >= cycles, f"{survivor_role}: {st['quiesces']} grace periods for "
                                    f"{cycles} disconnects")
        if survivor_role == 'client':
            t(st['port_restarts'] >= cycles - 1, f"client: {st['port_restarts']} restarts")
        rc = s.stop(signal.SIGTERM)
        t(rc == 0, f'{survivor_role} stops with exit 0, not {rc}:\n{s.tail()}')


def together(t, build, cycles, rng):
    """Both stop at once with SIGINT under traffic: each must exit 0 (no crash in the PMD)."""
    for i in range(cycles):
        with Pair(build) as p:
            traffic(p.a, p.b)
            time.sleep(rng.uniform(0.05, 0.3))
            for d in (p.a, p.b):
                os.killpg(d.proc.pid, signal.SIGINT)
            rcs = [d.proc.wait(30) for d in (p.a, p.b)]
            if not t(rcs == [0, 0], f'cycle {i}: both stopped together, exit {rcs}:\n'
                                    f'{p.a.tail()}\n{p.b.tail()}'):
                return


def main():
    build = sys.argv[1]
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else \
        int(os.environ.get('ROCE_CHURN_CYCLES', '30'))
    t = Checks('peer_churn')
    rng = random.Random(7)
    t0 = time.time()
    for role in ('server', 'client'):
        try:
            phase(t, build, role, cycles, rng)
        except Failure as e:
            t(False, f'{role} survivor: {e}')
    try:
        together(t, build, cycles, rng)
    except Failure as e:
        t(False, f'stopped together: {e}')
    print(f'peer_churn: {cycles} cycles per role in {time.time() - t0:.0f} s')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
