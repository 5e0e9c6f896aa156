#!/usr/bin/python3
"""Port profiles on the virtual PMDs CI has: roced comes up on net_null and net_ring with the
right profile, and on net_tap inside a network namespace the test creates, where the kernel
side of the tap pings the appliance and learns its MAC.

usage: test_ports.py BUILD_DIR
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair  # noqa: E402
from test_afpacket_veth import Netns, TAG, sh  # noqa: E402


def profile(t, build, vdev, port, family):
    p = Pair(build)
    try:
        d = p.start(family, ['-l', '0,1', f'--vdev={vdev}'], ['--port', port, '--ip',
                                                             '10.9.0.1/24'])
        d.wait_ready()
        info = d.ctl('port', 'show')['ports'][0]
        t(info['driver'] == family and info['tested'], f'{vdev}: profile {info}')
        t(d.stop() == 0, f'{vdev}: clean stop')
    finally:
        p.__exit__(None, None, None)


def tap(t, build):
    with Netns() as nets:
        ns = nets.add(f'{TAG}t')
        p = Pair(build)
        try:
            d = p.start('tap', ['-l', '0,1', '--vdev=net_tap0,iface=rtap0'],
                        ['--port', 'net_tap0', '--ip', '10.3.0.1/24'], ns)
            d.wait_ready()
            # The tap PMD gives the kernel side the port's own MAC: give it another one, as a
            # real host on the link would have.
            sh('ip', '-n', ns, 'link', 'set', 'rtap0', 'address', '02:00:00:00:03:02')
            sh('ip', '-n', ns, 'addr', 'add', '10.3.0.2/24', 'dev', 'rtap0')
            sh('ip', '-n', ns, 'link', 'set', 'rtap0', 'up')
            time.sleep(0.5)
            mac = d.ctl('port', 'show')['ports'][0]['mac'].lower()
            r = sh('ip', 'netns', 'exec', ns, 'ping', '-c', '3', '-W', '2', '10.3.0.1',
                   check=False)
            t(r.returncode == 0, f'tap: ping the appliance: {r.stdout[-200:]}')
            neigh = sh('ip', '-n', ns, 'neigh', 'show', '10.3.0.1').stdout.lower()
            t(mac in neigh, f'tap: ip neigh shows {mac}: {neigh.strip()}')
        finally:
            p.__exit__(None, None, None)


def main():
    build = sys.argv[1]
    t = Checks('ports')
    profile(t, build, 'net_null0', 'net_null0', 'null')
    profile(t, build, 'net_ring0', 'net_ring0', 'ring')
    if os.geteuid() == 0:
        tap(t, build)
    else:
        print('ports: tap skipped [machine]: needs root')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
