#!/usr/bin/python3
"""Jumbo frames: an MTU the port cannot carry is a startup error that names the fix; a QP's path
MTU never exceeds what its port carries; jumbo frames work where they are set up right.

- memif carries any frame (it chains buffers): --mtu 9000 is the port's MTU, 4096 WRITEs pass.
- af_packet on a veth: --mtu 9000 with the default framesz exits 2 naming framesz, blocksz and
  --mbuf-size (slots must tile af_packet's blocks); with them it raises the veth's MTU itself and 4096-byte path MTU WRITEs pass.
- qp.connect mtu=4096 on a port of IP MTU 1500 is refused (EMSGSIZE) with the largest that fits.

usage: test_mtu.py BUILD_DIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Failure, Pair, connect, poll_wc, MR_ALL, QP_ALL  # noqa: E402

NS = f'rmtu{os.getpid() % 100000}'
JUMBO = ',framesz=9216,blocksz=36864'


def sh(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def write_verified(t, a, b, what, mtu=4096, size=65536):
    ma, mb = a.ctl('mr', 'reg', size, MR_ALL)['mr'], b.ctl('mr', 'reg', size, MR_ALL)['mr']
    a.ctl('mr', 'fill', ma['rkey'], 'random:9')
    qa, qb = connect(a, b, mtu=mtu)
    a.ctl('post', 'write', qa['qpn'], f"lkey={ma['lkey']}", f'length={size}',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}")
    wc = poll_wc(a, qa['qpn'], 1)
    t(len(wc) == 1 and wc[0]['status'] == 0, f'{what}: WRITE at path MTU {mtu}: {wc}')
    ca = a.ctl('mr', 'digest', ma['rkey'], 'offset=0', f'length={size}')['crc32']
    cb = b.ctl('mr', 'digest', mb['rkey'], 'offset=0', f'length={size}')['crc32']
    t(ca == cb, f'{what}: the data arrived: {ca} {cb}')
    c = b.ctl('counters')['counters']
    t(c.get('RETRANSMITS', 0) == 0 and a.ctl('counters')['counters'].get('RETRANSMITS', 0) == 0,
      f'{what}: no retransmission')


def memif(t, build):
    with Pair(build, start=False) as p:
        m = os.path.join(p.tmp, 'memif.sock')
        for name, role, ip in (('a', 'server', '10.0.0.1'), ('b', 'client', '10.0.0.2')):
            d = p.start(name, ['-l', '0,1', f'--vdev=net_memif0,role={role},socket={m},'
                               'bsize=8192'],
                        ['--port', 'net_memif0', '--ip', f'{ip}/24', '--mtu', '9000'])
            d.wait_ready()
            setattr(p, name, d)
        p.wait_link()
        port = p.a.ctl('port', 'show')['ports'][0]
        t(port['mtu'] == 9000 and port['ip_mtu'] == 9000, f'memif at MTU 9000: {port}')
        write_verified(t, p.a, p.b, 'memif 9000')


def path_mtu_refused(t, build):
    with Pair(build, mtu=1500) as p:
        qa, qb = p.a.ctl('qp', 'create', QP_ALL)['qp'], p.b.ctl('qp', 'create', QP_ALL)['qp']
        r = p.a.rocectl('qp', 'connect', qa['qpn'], qb['qpn'], qb['psn'], qb['ip'], 'mtu=4096',
                        check=False)
        t(r.returncode != 0 and 'EMSGSIZE' in r.stdout and 'path MTU 1024' in r.stdout,
          f'mtu=4096 on IP MTU 1500 refused: {r.stdout}{r.stderr}')
        r = p.a.rocectl('qp', 'connect', qa['qpn'], qb['qpn'], qb['psn'], qb['ip'], 'mtu=1024',
                        check=False)
        t(r.returncode == 0, f'mtu=1024 fits: {r.stdout}{r.stderr}')


def af_packet(t, build):
    sh('ip', 'netns', 'add', NS)
    try:
        sh('ip', '-n', NS, 'link', 'add', 'va', 'type', 'veth', 'peer', 'name', 'vb')
        for i in ('va', 'vb'):
            sh('ip', 'netns', 'exec', NS, 'ethtool', '-K', i, 'tx', 'off', 'rx', 'off',
               check=False)
            sh('ip', '-n', NS, 'link', 'set', i, 'up')
        with Pair(build, start=False) as p:
            d = p.start('bad', ['-l', '0,1', '--vdev=net_af_packet0,iface=va'],
                        ['--port', 'net_af_packet0', '--ip', '10.0.0.1/24', '--mtu', '9000'],
                        NS)
            rc = d.proc.wait(30)
            log = d.tail()
            t(rc == 2 and 'framesz=9216,blocksz=36864' in log and '--mbuf-size 9184' in log,
              f'af_packet at MTU 9000 without framesz: exit {rc}:\n{log}')
            d = p.start('small', ['-l', '0,1', f'--vdev=net_af_packet0,iface=va{JUMBO}'],
                        ['--port', 'net_af_packet0', '--ip', '10.0.0.1/24', '--mtu', '9000'],
                        NS)
            rc = d.proc.wait(30)
            t(rc == 2 and '--mbuf-size 9184 (now 4608)' in d.tail(),
              f'framesz without --mbuf-size: exit {rc}:\n{d.tail()}')
            for name, iface, ip in (('a', 'va', '10.0.0.1'), ('b', 'vb', '10.0.0.2')):
                d = p.start(name, ['-l', '0,1', f'--vdev=net_af_packet0,iface={iface}{JUMBO}'],
                            ['--port', 'net_af_packet0', '--ip', f'{ip}/24', '--mtu', '9000',
                             '--mbuf-size', '9184'], NS)
                d.wait_ready()
                setattr(p, name, d)
            link = sh('ip', '-n', NS, 'link', 'show', 'va').stdout
            t('mtu 9000' in link, f'roced raised the veth to MTU 9000: {link}')
            t(p.a.ctl('port', 'show')['ports'][0]['mtu'] == 9000, 'port MTU 9000')
            write_verified(t, p.a, p.b, 'af_packet 9000')
    finally:
        sh('ip', 'netns', 'del', NS, check=False)


def main():
    t = Checks('mtu')
    try:
        memif(t, sys.argv[1])
        path_mtu_refused(t, sys.argv[1])
        if os.geteuid() == 0:
            af_packet(t, sys.argv[1])
        else:
            print('mtu: af_packet skipped [machine]: needs root')
    except (Failure, subprocess.SubprocessError) as e:
        t(False, f'{type(e).__name__}: {e}')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
