#!/usr/bin/python3
"""Congestion control on the wire: two roced over af_packet on a veth pair (in network
namespaces the test creates and removes), tcpdump on A's end, and the frames decoded by scapy
(scapy.contrib.roce) and tshark (Wireshark's InfiniBand dissector), not by our code.

With cc set profile=mlx5 np_min_time_between_cnps=50 on both and B's rx marking 10 % of the
ECN-capable packets CE, a WRITE job A -> B: every CNP B sends is checked field by field
(Ethernet and IP addresses of the QPs' path, DSCP np_cnp_dscp = 48, Not-ECT, TTL 64, the UDP
source port of B's QP, BTH opcode 0x81, SE/M/pad/TVer 0, P_Key 0xFFFF, FECN 0, BECN 1, the
destination QP = A's QP, AckReq 0, PSN 0, 16 reserved zero bytes, ICRC as scapy's
BTH.compute_icrc() and annex A17.3.3 compute it, 74 bytes), tshark finds no malformed frame
and no expert warning and agrees on every field it has, and A counts exactly the CNPs
captured. ../shared/captures has no CNP to compare with (rxe 6.1 sends none: its
errors/INDEX.md), so the ICRC is checked by the two independent computations. A's data
packets carry ECT(0) (the daemon's codepoint) and B's ACKs ECT(1) (B's QP's own, cc set QPN
ecn=ect1).

usage: test_cc_wire.py BUILD_DIR
"""
import logging
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, connect, MR_ALL  # noqa: E402
from test_afpacket_veth import Netns, VethPair, sh  # noqa: E402

try:
    logging.getLogger('scapy.runtime').setLevel(logging.ERROR)
    from scapy.all import IP, UDP, Ether, raw, rdpcap
    from scapy.contrib.roce import BTH, CNPPadding
    import scapy.config
    scapy.config.conf.verb = 0
    from test_hostile import icrc_of  # noqa: E402
except ImportError as e:
    print(f'cc_wire: skipped [machine]: scapy unavailable ({e})')
    sys.exit(77)

TAG = f"ccw{os.getpid() % 100000}"
CNP = 0x81
ACK = 0x11
TSHARK = ['tshark', '-d', 'udp.port==4791,infiniband', '--disable-protocol', 'rpcordma']
FIELDS = ['frame.number', 'frame.len', '_ws.malformed', '_ws.expert.severity', 'eth.src',
          'eth.dst', 'ip.src', 'ip.dst', 'ip.dsfield.dscp', 'ip.dsfield.ecn', 'ip.ttl',
          'udp.srcport', 'udp.dstport', 'infiniband.bth.opcode', 'infiniband.bth.se',
          'infiniband.bth.m', 'infiniband.bth.padcnt', 'infiniband.bth.tver',
          'infiniband.bth.p_key', 'infiniband.bth.destqp', 'infiniband.bth.a',
          'infiniband.bth.psn', 'infiniband.vendor']


def capture_start(ns, iface, path):
    p = subprocess.Popen(['ip', 'netns', 'exec', ns, 'tcpdump', '-i', iface, '-w', path, '-U', '--immediate-mode',
                          '-s', '128', '-n'], stderr=subprocess.PIPE,
                         text=True)
    # tcpdump says so once it listens.
    line = p.stderr.readline()
    if 'listening' not in line:
        raise RuntimeError(f'tcpdump: {line}')
    return p


def capture_stop(p):
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=20)[1]
    dropped = [int(x.split()[0]) for x in err.splitlines() if 'dropped by kernel' in x]
    return dropped[0] if dropped else None


def tshark_rows(path):
    cmd = TSHARK + ['-r', path, '-T', 'fields', '-E', 'separator=|', '-E', 'occurrence=a'] + \
        [x for f in FIELDS for x in ('-e', f)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    rows = []
    for line in r.stdout.splitlines():
        rows.append(dict(zip(FIELDS, line.split('|'))))
    return rows, r


def check_cnp_scapy(t, f, want, bad):
    """One CNP against what it must be; @bad collects the first few differences."""
    b = raw(f)
    eth, ip, udp, bth = f[Ether], f[IP], f[UDP], f[BTH]
    pad = f[CNPPadding] if CNPPadding in f else None
    got = {
        'eth': (eth.src, eth.dst, eth.type), 'ip': (ip.src, ip.dst, ip.tos >> 2, ip.tos & 3,
                                                    ip.ttl, ip.proto),
        'udp': (udp.sport, udp.dport, udp.len), 'len': len(b),
        'bth': (bth.opcode, bth.solicited, bth.migreq, bth.padcount, bth.version, bth.pkey,
                bth.fecn, bth.becn, bth.dqpn, bth.ackreq, bth.psn, bth.resv6, bth.resv7),
        'reserved': (pad.reserved1, pad.reserved2) if pad is not None else None,
        'icrc_scapy': bth.compute_icrc(None) == b[-4:],
        'icrc_a17': struct.unpack('<I', b[-4:])[0] == icrc_of(b[14:]),
    }
    for k, v in want.items():
        if got[k] != v and len(bad) < 3:
            bad.append(f'{k}: {got[k]} != {v}')
    return got


def run(t, build, nets, na, nb):
    tmp = tempfile.mkdtemp(prefix='rocedp-ccw-')
    try:
        with VethPair(build, nets, na, nb) as p:
            a, b = p.a, p.b
            for d in (a, b):
                d.ctl('cc', 'set', 'profile=mlx5', 'np_min_time_between_cnps=50')
            ma, mb = a.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr'], \
                b.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr']
            qa, qb = connect(a, b, timeout=15)
            t(b.ctl('cc', 'set', qb['qpn'], 'ecn=ect1')['ecn'] == 'ect1', "B's QP: ECT(1)")
            b.ctl('impair', 'set', 'spec=ecn=10%,seed=11', 'dir=rx')
            pa, pb = a.ctl('port', 'show')['ports'][0], b.ctl('port', 'show')['ports'][0]
            # af_packet's transmit bypasses the kernel's queueing: each end sees only what
            # arrives, so B's frames are captured at A's end and A's at B's.
            pcap, pcap_b = os.path.join(tmp, 'a.pcap'), os.path.join(tmp, 'b.pcap')
            cap, cap_b = capture_start(na, 'va', pcap), capture_start(nb, 'vb', pcap_b)
            a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", 'length=4096',
                  f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", 'duration_ms=300',
                  'depth=2')
            end = time.time() + 20
            while a.ctl('job', 'show', qa['qpn'])['job']['running'] and time.time() < end:
                time.sleep(0.05)
            time.sleep(0.3)
            dropped = capture_stop(cap)
            capture_stop(cap_b)
            ca, cb = a.ctl('counters')['counters'], b.ctl('counters')['counters']
            j = a.ctl('job', 'show', qa['qpn'])['job']
            t(not j['running'] and j['errors'] == 0 and j['completed'] > 0, f'job {j}')
            frames = rdpcap(pcap)
            roce = [f for f in frames if BTH in f]
            cnps = [f for f in roce if f[BTH].opcode == CNP]
            data = [f for f in rdpcap(pcap_b) if BTH in f and f[IP].src == pa['ip']]
            acks = [f for f in roce if f[IP].src == pb['ip'] and f[BTH].opcode == ACK]
            print(f"  captured {len(roce)} RoCE frames ({dropped} dropped by the kernel): "
                  f"{len(data)} from A, {len(acks)} ACKs and {len(cnps)} CNPs from B; B sent "
                  f"{cb['CNP_TX']} CNPs for {cb['CE_RX']} CE marks, A heard {ca['CNP_RX']}",
                  flush=True)
            t(cb['CNP_TX'] > 10 and ca['CNP_RX'] == cb['CNP_TX'] and ca['DROP_ICRC'] == 0,
              f"A took every CNP B sent: {ca['CNP_RX']} of {cb['CNP_TX']}")
            if dropped == 0:
                t(len(cnps) == cb['CNP_TX'], f'every CNP captured: {len(cnps)}')
            else:
                t(0 < len(cnps) <= cb['CNP_TX'], f'CNPs captured: {len(cnps)}')
            # B's UDP source port for this QP pair: its ACKs have it.
            sports = {f[UDP].sport for f in acks}
            t(len(sports) == 1, f"B's QP sends from one UDP port: {sports}")
            want = {
                'eth': (pb['mac'].lower(), pa['mac'].lower(), 0x0800),
                'ip': (pb['ip'], pa['ip'], 48, 0, 64, 17),
                'udp': (next(iter(sports)) if sports else None, 4791, 8 + 12 + 16 + 4),
                'len': 74,
                'bth': (CNP, 0, 0, 0, 0, 0xFFFF, 0, 1, qa['qpn'], 0, 0, 0, 0),
                'reserved': (0, 0), 'icrc_scapy': True, 'icrc_a17': True,
            }
            bad = []
            for f in cnps:
                check_cnp_scapy(t, f, want, bad)
            t(cnps and not bad, f'scapy: {len(cnps)} CNPs as they must be: {bad}')
            t(data and all(f[IP].tos & 3 == 2 for f in data),
              f"A's packets ECT(0): {sorted({f[IP].tos & 3 for f in data})}")
            t(acks and all(f[IP].tos & 3 == 1 for f in acks),
              f"B's ACKs ECT(1), its QP's own: {sorted({f[IP].tos & 3 for f in acks})}")
            if shutil.which('tshark') is None:
                t(False, 'tshark missing (scripts/install-deps.sh installs it)')
                return
            rows, r = tshark_rows(pcap)
            t(r.returncode == 0 and len(rows) == len(frames), f'tshark read {len(rows)} frames '
              f'of {len(frames)}: {r.stderr[-300:]}')
            # Expert severities at warning (0x00600000) or error (0x00800000).
            bad = [x for x in rows if x['_ws.malformed'] or
                   any(s and int(s, 0) >= 0x00600000 for s in
                       x['_ws.expert.severity'].split(','))]
            t(not bad, f'tshark: no malformed frame, no warning or error: {bad[:2]}')
            tc = [x for x in rows if x['infiniband.bth.opcode'] == str(CNP)]
            icrcs = {i + 1: struct.unpack('<I', raw(f)[-4:])[0] for i, f in enumerate(frames)}
            wrong = []
            for x in tc:
                want_t = {
                    'frame.len': '74', 'eth.src': pb['mac'].lower(),
                    'eth.dst': pa['mac'].lower(), 'ip.src': pb['ip'], 'ip.dst': pa['ip'],
                    'ip.dsfield.dscp': '48', 'ip.dsfield.ecn': '0', 'ip.ttl': '64',
                    'udp.dstport': '4791', 'infiniband.bth.se': '0', 'infiniband.bth.m': '0',
                    'infiniband.bth.padcnt': '0', 'infiniband.bth.tver': '0',
                    'infiniband.bth.p_key': '65535', 'infiniband.bth.destqp': qa['qpn'],
                    'infiniband.bth.a': '0', 'infiniband.bth.psn': '0',
                    # Wireshark 4.0 has no CNP: the 16 reserved bytes and the ICRC as vendor
                    # data (the ICRC as it is on the wire).
                    'infiniband.vendor': '00' * 16 + struct.pack(
                        '<I', icrcs[int(x['frame.number'])]).hex(),
                }
                # Several vendor items: the last one follows the BTH.
                x['infiniband.vendor'] = x['infiniband.vendor'].split(',')[-1]
                x['infiniband.bth.destqp'] = int(x['infiniband.bth.destqp'] or '-1', 0)
                for k, v in want_t.items():
                    if (x[k].lower() if isinstance(x[k], str) else x[k]) != v and \
                            len(wrong) < 3:
                        wrong.append(f"frame {x['frame.number']} {k}: {x[k]} != {v}")
            t(len(tc) == len(cnps) and not wrong, f'tshark: {len(tc)} CNPs as they must be '
              f'{wrong}')
            rows_b, r = tshark_rows(pcap_b)
            ecn_t = {x['ip.dsfield.ecn'] for x in rows_b if x['ip.src'] == pa['ip'] and
                     x['infiniband.bth.opcode']}
            t(ecn_t == {'2'}, f"tshark: A's packets ECT(0): {ecn_t}")
            ecn_t = {x['ip.dsfield.ecn'] for x in rows if x['infiniband.bth.opcode'] == '17'}
            t(ecn_t == {'1'}, f"tshark: B's ACKs ECT(1): {ecn_t}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    t = Checks('cc_wire')
    if os.geteuid() != 0 or sh('ip', 'netns', 'list', check=False).returncode != 0 or \
            shutil.which('tcpdump') is None:
        print('cc_wire: skipped [machine]: needs root, ip netns and tcpdump')
        return 77
    with Netns() as nets:
        na, nb = nets.add(f'{TAG}a'), nets.add(f'{TAG}b')
        nets.veth('va', na, 'vb', nb)
        run(t, sys.argv[1], nets, na, nb)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
