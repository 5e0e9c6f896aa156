#!/usr/bin/python3
"""roced over af_packet on veth pairs inside network namespaces the test creates and removes:
two daemons exchanging WRITE/READ/SEND/atomics with data checked (as over memif), and a Linux
host that pings the appliance, each learning the other's MAC.

usage: test_afpacket_veth.py BUILD_DIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair  # noqa: E402
import test_memif_pair  # noqa: E402

TAG = f"rit{os.getpid() % 100000}"


def sh(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


class Netns:
    """Namespaces joined by veth pairs, removed on exit."""

    def __init__(self):
        self.ns = []

    def add(self, name):
        sh('ip', 'netns', 'add', name)
        self.ns.append(name)
        sh('ip', '-n', name, 'link', 'set', 'lo', 'up')
        return name

    def veth(self, a, ns_a, b, ns_b):
        sh('ip', 'link', 'add', a, 'netns', ns_a, 'type', 'veth', 'peer', 'name', b,
           'netns', ns_b)
        for n, i in ((ns_a, a), (ns_b, b)):
            # No offloads: af_packet must see the frames as they are on the wire.
            sh('ip', 'netns', 'exec', n, 'ethtool', '-K', i, 'tx', 'off', 'rx', 'off',
               check=False)
            sh('ip', '-n', n, 'link', 'set', i, 'up')

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for n in self.ns:
            sh('ip', 'netns', 'del', n, check=False)
        return False


class VethPair(Pair):
    def __init__(self, build, nets, ns_a, ns_b):
        super().__init__(build)
        self.ns_a, self.ns_b = ns_a, ns_b

    def __enter__(self):
        self.a = self.start('a', ['-l', '0,1', '--vdev=net_af_packet0,iface=va'],
                            ['--port', 'net_af_packet0', '--ip', '10.0.0.1/24'], self.ns_a)
        self.b = self.start('b', ['-l', '0,1', '--vdev=net_af_packet0,iface=vb'],
                            ['--port', 'net_af_packet0', '--ip', '10.0.0.2/24'], self.ns_b)
        self.a.wait_ready()
        self.b.wait_ready()
        return self


def ping(t, build):
    with Netns() as nets:
        host, appl = nets.add(f'{TAG}h'), nets.add(f'{TAG}r')
        nets.veth('hx', host, 'hy', appl)
        sh('ip', '-n', host, 'addr', 'add', '10.1.0.2/24', 'dev', 'hx')
        p = Pair(build)
        try:
            d = p.start('r', ['-l', '0,1', '--vdev=net_af_packet0,iface=hy'],
                        ['--port', 'net_af_packet0', '--ip', '10.1.0.1/24'], appl)
            d.wait_ready()
            mac = d.ctl('port', 'show')['ports'][0]['mac'].lower()
            r = sh('ip', 'netns', 'exec', host, 'ping', '-c', '3', '-W', '2', '10.1.0.1',
                   check=False)
            t(r.returncode == 0, f'ping the appliance: {r.stdout[-200:]}{r.stderr}')
            neigh = sh('ip', '-n', host, 'neigh', 'show', '10.1.0.1').stdout.lower()
            t(mac in neigh, f'ip neigh shows the appliance MAC {mac}: {neigh.strip()}')
            # And the appliance learned the host from its ARP request.
            hmac = sh('ip', '-n', host, '-br', 'link', 'show', 'hx').stdout.split()[2].lower()
            rows = d.ctl('neigh', 'show', '10.1.0.2')['neighbours']
            t(len(rows) == 1 and (rows[0]['mac'] or '').lower() == hmac,
              f'neigh show lists the host {hmac}: {rows}')
            c = d.ctl('counters')['counters']
            t(c['NET_ECHO_REPLY_TX'] >= 3,
              'echo replies counted')
        finally:
            p.__exit__(None, None, None)


def pair(t, build):
    with Netns() as nets:
        na, nb = nets.add(f'{TAG}a'), nets.add(f'{TAG}b')
        nets.veth('va', na, 'vb', nb)
        with VethPair(build, nets, na, nb) as p:
            test_memif_pair.ops(t, p, exact_ports=False)


def main():
    t = Checks('afpacket_veth')
    if os.geteuid() != 0 or sh('ip', 'netns', 'list', check=False).returncode != 0:
        print('afpacket_veth: skipped [machine]: needs root and ip netns')
        return 77
    ping(t, sys.argv[1])
    pair(t, sys.argv[1])
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
