#!/usr/bin/python3
"""UD QPs between two roced over memif, driven only through rocectl: SENDs both ways (to an
address and through an address handle, IPv4 and IPv6, with immediate data), each receive
buffer starting with the GRH area as Linux fills it (IPv4: 20 zero bytes, then the IPv4
header; IPv6: the IPv6 header), completions with src_qp, qkey, src_ip; the wrong Q_Key dropped
and counted, a UD datagram to an RC QP dropped and counted, a send over the path MTU and a
receive buffer too short completing with LOC_LEN_ERR; controlled Q_Keys refused at creation.

usage: test_ud.py BUILD_DIR
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, poll_wc  # noqa: E402

SIZE = 1 << 20
QKEY = 0x11111111
LOC_LEN_ERR = 1


def hexdump(d, mr, off, length):
    return bytes.fromhex(d.ctl('mr', 'dump', mr['rkey'], f'offset={off}',
                               f'length={length}')['hex'])


def digest(d, mr, off, length):
    return d.ctl('mr', 'digest', mr['rkey'], f'offset={off}', f'length={length}')['crc32']


def counters(d, qpn):
    return d.ctl('counters', f'qpn={qpn}')['counters']


def state(d, qpn):
    return d.ctl('qp', 'show', qpn)['qps'][0]['state']


def refused(d, *args):
    """Run a command that must fail: return its error object."""
    r = d.rocectl(*args, check=False)
    try:
        out = json.loads(r.stdout) if r.stdout.strip() else {}
    except ValueError:
        out = {}
    return r.returncode != 0, out.get('error', {}), r.stdout + r.stderr


def one(t, d, qpn, what):
    wc = poll_wc(d, qpn, 1)
    t(len(wc) == 1, f'{what}: one completion, got {wc}')
    return wc[0] if wc else {}


def check_grh(t, what, grh, v6, src_ip_bytes):
    if v6:
        t(grh[0] >> 4 == 6 and grh[6] == 17 and grh[8:24] == src_ip_bytes,
          f'{what}: GRH area is the IPv6 header (next header UDP, our source): {grh.hex()}')
    else:
        t(grh[:20] == bytes(20) and grh[20] == 0x45 and grh[29] == 17 and
          grh[32:36] == src_ip_bytes,
          f'{what}: GRH area is 20 zero bytes then the IPv4 header: {grh.hex()}')


def main():
    t = Checks('ud')
    with Pair(sys.argv[1]) as p:
        a, b = p.a, p.b
        ma, mb = a.ctl('mr', 'reg', SIZE)['mr'], b.ctl('mr', 'reg', SIZE)['mr']
        qa = a.ctl('qp', 'create', 'type=ud', f'qkey={QKEY}')['qp']
        qb = b.ctl('qp', 'create', 'type=ud', f'qkey={QKEY}')['qp']
        t(qa['type'] == 'ud' and qa['qkey'] == QKEY and qa['mtu'] == 4096 and
          state(a, qa['qpn']) == 'RTS', f'UD QP created in RTS: {qa}')
        na, nb = qa['qpn'], qb['qpn']
        a.ctl('mr', 'fill', ma['rkey'], 'random:1')
        b.ctl('mr', 'fill', mb['rkey'], 'random:2')

        # A -> B to an address: 1000 bytes with immediate data.
        b.ctl('post', 'recv', nb, f"lkey={mb['lkey']}", 'offset=0', 'length=1040')
        a.ctl('post', 'send', na, f"lkey={ma['lkey']}", 'offset=4096', 'length=1000', 'imm=9',
              f'remote.qpn={nb}', f'remote.qkey={QKEY}', 'remote.ip=10.0.0.2')
        wc = one(t, a, na, 'A send')
        t(wc.get('status') == 0 and wc.get('opcode') == 'send', f'A send completion {wc}')
        wc = one(t, b, nb, 'B recv')
        t(wc.get('status') == 0 and wc.get('byte_len') == 1040 and wc.get('imm') == 9 and
          wc.get('src_qp') == na and wc.get('qkey') == QKEY and wc.get('grh') is True and
          wc.get('src_ip') == '10.0.0.1' and wc.get('sgid') == '::ffff:10.0.0.1' and
          wc.get('network') == 'ipv4' and wc.get('slid') == 0,
          f'B receive completion {wc}')
        check_grh(t, 'A->B', hexdump(b, mb, 0, 40), False, bytes([10, 0, 0, 1]))
        t(digest(a, ma, 4096, 1000) == digest(b, mb, 40, 1000), 'A->B data after the GRH')

        # B -> A through an address handle.
        ah = b.ctl('ah', 'create', '10.0.0.1')['ah']
        t(ah['ip'] == '10.0.0.1' and ah['hop_limit'] == 64, f'AH {ah}')
        a.ctl('post', 'recv', na, f"lkey={ma['lkey']}", 'offset=0', 'length=4096')
        b.ctl('post', 'send', nb, f"lkey={mb['lkey']}", 'offset=8192', 'length=4056',
              f"ah={ah['ah']}", f'remote.qpn={na}')
        one(t, b, nb, 'B send')
        wc = one(t, a, na, 'A recv')
        t(wc.get('status') == 0 and wc.get('byte_len') == 4096 and
          wc.get('src_qp') == nb and wc.get('src_ip') == '10.0.0.2',
          f'B->A with the QP\'s own Q_Key, 4056 bytes filling 4096 exactly: {wc}')
        a.ctl('post', 'recv', na, f"lkey={ma['lkey']}", 'offset=0', 'length=5000')
        b.ctl('post', 'send', nb, f"lkey={mb['lkey']}", 'offset=8192', 'length=4096',
              f"ah={ah['ah']}", f'remote.qpn={na}')
        one(t, b, nb, 'B send')
        wc = one(t, a, na, 'A recv')
        t(wc.get('status') == 0 and wc.get('byte_len') == 4136,
          f'path MTU 4096 on memif: {wc}')
        check_grh(t, 'B->A', hexdump(a, ma, 0, 40), False, bytes([10, 0, 0, 2]))
        t(digest(b, mb, 8192, 4096) == digest(a, ma, 40, 4096), 'B->A data')
        b.ctl('ah', 'destroy', ah['ah'])
        t(b.ctl('ah', 'show')['ahs'] == [], 'AH gone')

        # IPv6: the GRH area holds the IPv6 header.
        b.ctl('post', 'recv', nb, f"lkey={mb['lkey']}", 'offset=0', 'length=2048')
        a.ctl('post', 'send', na, f"lkey={ma['lkey']}", 'offset=4096', 'length=500',
              f'remote.qpn={nb}', 'remote.ip=fd00::2')
        one(t, a, na, 'A send v6')
        wc = one(t, b, nb, 'B recv v6')
        t(wc.get('status') == 0 and wc.get('src_ip') == 'fd00::1' and
          wc.get('network') == 'ipv6' and wc.get('byte_len') == 540, f'IPv6 receive {wc}')
        check_grh(t, 'A->B IPv6', hexdump(b, mb, 0, 40), True,
                  bytes.fromhex('fd000000000000000000000000000001'))

        # The wrong Q_Key: dropped and counted, nothing else.
        b.ctl('post', 'recv', nb, f"lkey={mb['lkey']}", 'offset=0', 'length=2048', 'wr_id=5')
        before = counters(b, nb)
        a.ctl('post', 'send', na, f"lkey={ma['lkey']}", 'length=64', f'remote.qpn={nb}',
              'remote.qkey=0x22222222', 'remote.ip=10.0.0.2')
        one(t, a, na, 'A send, wrong Q_Key')
        t(not poll_wc(b, nb, 1, timeout=0.5), 'no receive for the wrong Q_Key')
        after = counters(b, nb)
        t(after['UD_QKEY_DROP'] == before['UD_QKEY_DROP'] + 1 and
          after['RECV_COMPLETED'] == before['RECV_COMPLETED'],
          f"UD_QKEY_DROP {before['UD_QKEY_DROP']} -> {after['UD_QKEY_DROP']}")
        t(b.ctl('counters')['counters']['UD_QKEY_DROP'] >= 1, 'daemon-wide UD_QKEY_DROP')
        a.ctl('post', 'send', na, f"lkey={ma['lkey']}", 'length=64', f'remote.qpn={nb}',
              'remote.ip=10.0.0.2')
        one(t, a, na, 'A send, own Q_Key')
        wc = one(t, b, nb, 'B recv after the drop')
        t(wc.get('wr_id') == 5 and wc.get('status') == 0 and state(b, nb) == 'RTS',
          f'the receive kept for the next datagram: {wc}')

        # A UD datagram to an RC QP.
        rc = b.ctl('qp', 'create')['qp']
        before = counters(b, rc['qpn'])
        a.ctl('post', 'send', na, f"lkey={ma['lkey']}", 'length=64', f"remote.qpn={rc['qpn']}",
              'remote.ip=10.0.0.2')
        one(t, a, na, 'A send to an RC QP')
        after = counters(b, rc['qpn'])
        t(after['TRANSPORT_DROP'] == before['TRANSPORT_DROP'] + 1 and
          after['RX_PKTS'] == before['RX_PKTS'],
          f"RC QP TRANSPORT_DROP {before['TRANSPORT_DROP']} -> {after['TRANSPORT_DROP']}")

        # Refused: a controlled Q_Key, connecting a UD QP, RC arguments on UD and back.
        bad, err, out = refused(a, 'qp', 'create', 'type=ud', 'qkey=0x80000001')
        t(bad and err.get('code') == 'EPERM', f'controlled Q_Key refused: {out}')
        bad, err, out = refused(a, 'qp', 'connect', na, nb, 0, '10.0.0.2')
        t(bad and err.get('code') == 'EINVAL', f'qp connect on UD refused: {out}')
        bad, err, out = refused(a, 'post', 'write', na, f"lkey={ma['lkey']}",
                                'remote_addr=0', 'rkey=1')
        t(bad and err.get('code') == 'EINVAL', f'WRITE on UD refused: {out}')
        bad, err, out = refused(a, 'post', 'send', na, f"lkey={ma['lkey']}")
        t(bad and err.get('code') == 'EINVAL', f'UD send without a destination: {out}')

        # A receive buffer too short for GRH + payload: LOC_LEN_ERR, the QP in ERR.
        b.ctl('post', 'recv', nb, f"lkey={mb['lkey']}", 'length=100', 'wr_id=7')
        a.ctl('post', 'send', na, f"lkey={ma['lkey']}", 'length=61', f'remote.qpn={nb}',
              'remote.ip=10.0.0.2')
        one(t, a, na, 'A send into a short buffer')
        wc = one(t, b, nb, 'B short receive')
        t(wc.get('wr_id') == 7 and wc.get('status') == LOC_LEN_ERR and state(b, nb) == 'ERR' and
          counters(b, nb)['UD_RECV_LEN_ERR'] == 1, f'100-byte buffer for 40 + 61: {wc}')

        # A send over the path MTU: LOC_LEN_ERR, nothing sent, the QP in ERR.
        tx = counters(a, na)['TX_PKTS']
        a.ctl('post', 'send', na, f"lkey={ma['lkey']}", 'length=4097', f'remote.qpn={nb}',
              'remote.ip=10.0.0.2')
        wc = one(t, a, na, 'A send over the MTU')
        c = counters(a, na)
        t(wc.get('status') == LOC_LEN_ERR and state(a, na) == 'ERR' and c['TX_PKTS'] == tx and
          c['UD_TX_TOO_LONG'] == 1, f'4097 bytes at MTU 4096: {wc}')

        # Nothing went wrong below the transport.
        for d in (a, b):
            c = d.ctl('counters')['counters']
            t(c['DROP_ICRC'] == 0 and c['NOT_OURS'] == 0 and c['UNKNOWN_QP'] == 0,
              f'{d.name}: no ICRC, routing or unknown-QP drops')
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
