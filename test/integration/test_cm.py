#!/usr/bin/python3
"""The IB connection manager between two roced over memif, driven only through rocectl: A
listens on RDMA_PS_TCP port 7174 (rping's), B connects an RC QP through it (REQ, REP, RTU over
QP1): both see established, the QPs are programmed with each other's QPN and PSN and carry a
WRITE, a SEND and a READ with the data checked; B disconnects (DREQ, DREP), both sides see
disconnected and, after time wait, timewait_exit, and A's QP (made by the listener) is gone.
Then a listener with manual accept (connect_request carries B's private data, A accepts with a
QP of its own), a reject (B sees rejected with the reason), a connect to a port nobody
listens on (REJ reason 8: invalid service ID), and the counters. The capture of A's port is
decoded by tshark: every CM MAD is one of ours or B's, with no malformed frame.

usage: test_cm.py BUILD_DIR
"""
import json
import os
import socket
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Pair, poll_wc  # noqa: E402

PORT = 7174
SIZE = 1 << 16
ACCESS = 'local_write,remote_write,remote_read,remote_atomic'
QP_ACCESS = 'remote_write,remote_read,remote_atomic'


def events(d, since=0, **kw):
    r = d.ctl('cm', 'events', since, *[f'{k}={v}' for k, v in kw.items()])
    return r['events'], r['next']


def wait_event(d, name, since=0, timeout=15, **kw):
    """The first event called @name after @since (and its seq), or None."""
    end = time.time() + timeout
    while time.time() < end:
        evs, _ = events(d, since, **kw)
        for e in evs:
            if e['event'] == name:
                return e
        time.sleep(0.05)
    return None


def conn_of(d, cid):
    return next((c for c in d.ctl('cm', 'show')['conns'] if c['conn'] == cid), None)


def check_capture(t, pcap):
    """Every CM MAD in the capture decodes, and nothing is malformed."""
    if shutil.which('tshark') is None:
        t(False, 'tshark missing (scripts/install-deps.sh installs it)')
        return
    r = subprocess.run(['tshark', '-r', pcap, '-d', 'udp.port==4791,infiniband', '-Y',
                        'infiniband.mad.attributeid', '-T', 'fields', '-e', 'infiniband.mad.attributeid',
                        '-e', '_ws.expert.message'], capture_output=True, text=True)
    rows = [line.split('\t') for line in r.stdout.splitlines() if line.strip()]
    attrs = {int(x[0], 16) if x[0].startswith('0x') else int(x[0]) for x in rows if x[0]}
    # REQ, REJ, REP, RTU, DREQ, DREP
    want = {0x10, 0x12, 0x13, 0x14, 0x15, 0x16}
    t(want <= attrs, f'the capture has REQ, REJ, REP, RTU, DREQ and DREP: {sorted(attrs)}')
    # Over IPv6 tshark flags the UDP checksum 0 of our RoCEv2 frames (the ICRC covers them;
    # RFC 6935/6936 allow a zero checksum for such tunnels): the only expert info allowed.
    bad = [x for x in rows if len(x) > 1 and x[1] and x[1] != 'Illegal checksum value (0)']
    t(not bad, f'tshark: no expert info on any MAD: {bad[:5]}')


def main():
    t = Checks('cm')
    with Pair(sys.argv[1]) as p:
        a, b = p.a, p.b
        pcap = os.path.join(p.tmp, 'a.pcapng')
        a.ctl('capture', 'start', pcap)
        ma = a.ctl('mr', 'reg', SIZE, f'access={ACCESS}')['mr']
        mb = b.ctl('mr', 'reg', SIZE, f'access={ACCESS}')['mr']
        a.ctl('mr', 'fill', ma['rkey'], 'random:1')
        b.ctl('mr', 'fill', mb['rkey'], 'random:2')

        # -- auto accept: the listener makes the QP --
        r = a.ctl('cm', 'listen', PORT)['listen']
        t(r['service_id'] == 0x0000000001060000 | PORT and r['accept'] == 'auto',
          f'listening on the RDMA_PS_TCP service ID of port {PORT}: {r}')
        qb = b.ctl('qp', 'create', f'access={QP_ACCESS}')['qp']
        c = b.ctl('cm', 'connect', qb['qpn'], '10.0.0.1', PORT)['conn']
        t(c['state'] == 'REQ_SENT' and c['role'] == 'active', f'REQ sent: {c}')
        eb = wait_event(b, 'established', conn=c['conn'])
        ea = wait_event(a, 'established')
        t(eb is not None and ea is not None, f'both sides established: {eb} {ea}')
        if eb is None or ea is None:
            return t.done()
        qa_n = ea['qpn']
        t(eb['remote_qpn'] == qa_n and ea['remote_qpn'] == qb['qpn'],
          f"each knows the other's QP: B {eb}, A {ea}")
        qa = a.ctl('qp', 'show', qa_n)['qps'][0]
        qbs = b.ctl('qp', 'show', qb['qpn'])['qps'][0]
        t(qa['state'] == 'RTS' and qbs['state'] == 'RTS', f"both QPs in RTS: {qa['state']} "
          f"{qbs['state']}")

        # The QPs work: B writes, sends and reads; the data arrives where it should.
        b.ctl('post', 'write', qb['qpn'], f"lkey={mb['lkey']}", 'offset=0', 'length=4096',
              f"remote_addr={ma['iova'] + 8192}", f"rkey={ma['rkey']}")
        wc = poll_wc(b, qb['qpn'], 1)
        t(len(wc) == 1 and wc[0]['status'] == 0, f'WRITE completed: {wc}')
        t(a.ctl('mr', 'digest', ma['rkey'], 'offset=8192', 'length=4096')['crc32'] ==
          b.ctl('mr', 'digest', mb['rkey'], 'offset=0', 'length=4096')['crc32'],
          'WRITE: the bytes arrived at the address')
        a.ctl('post', 'recv', qa_n, f"lkey={ma['lkey']}", 'offset=16384', 'length=1024')
        b.ctl('post', 'send', qb['qpn'], f"lkey={mb['lkey']}", 'offset=4096', 'length=1000')
        wa, wb = poll_wc(a, qa_n, 1), poll_wc(b, qb['qpn'], 1)
        t(len(wa) == 1 and wa[0]['status'] == 0 and wa[0]['byte_len'] == 1000 and
          len(wb) == 1 and wb[0]['status'] == 0, f'SEND received: {wa} {wb}')
        b.ctl('post', 'read', qb['qpn'], f"lkey={mb['lkey']}", 'offset=32768', 'length=2048',
              f"remote_addr={ma['iova']}", f"rkey={ma['rkey']}")
        wc = poll_wc(b, qb['qpn'], 1)
        t(len(wc) == 1 and wc[0]['status'] == 0 and
          b.ctl('mr', 'digest', mb['rkey'], 'offset=32768', 'length=2048')['crc32'] ==
          a.ctl('mr', 'digest', ma['rkey'], 'offset=0', 'length=2048')['crc32'],
          f'READ brought the right bytes: {wc}')

        # Disconnect from B: DREQ, DREP; disconnected on both, then time wait ends.
        seq_a = events(a)[1]
        b.ctl('cm', 'disconnect', c['conn'])
        db = wait_event(b, 'disconnected', conn=c['conn'])
        da = wait_event(a, 'disconnected', since=seq_a)
        t(db is not None and da is not None, f'both sides disconnected: {db} {da}')
        t(b.ctl('qp', 'show', qb['qpn'])['qps'][0]['state'] == 'ERR',
          "B's QP in ERR after the disconnect")
        ta = wait_event(a, 'timewait_exit', since=seq_a, timeout=20)
        tb = wait_event(b, 'timewait_exit', conn=c['conn'], timeout=20)
        t(ta is not None and tb is not None, f'time wait over on both: {ta} {tb}')
        gone = a.rocectl('qp', 'show', qa_n, check=False)
        t(gone.returncode != 0, f"the listener's QP went with the connection: {gone.stdout}")
        t(conn_of(a, ea['conn']) is None and conn_of(b, c['conn']) is None,
          'no connection left on either side')
        b.ctl('qp', 'destroy', qb['qpn'])

        # -- manual accept, private data both ways --
        a.ctl('cm', 'listen', PORT + 1, 'accept=manual')
        qb2 = b.ctl('qp', 'create', f'access={QP_ACCESS}')['qp']
        seq_a = events(a)[1]
        c2 = b.ctl('cm', 'connect', qb2['qpn'], '10.0.0.1', PORT + 1,
                   'private_data=00112233445566778899')['conn']
        rq = wait_event(a, 'connect_request', since=seq_a)
        t(rq is not None and rq.get('private_data', '').startswith('00112233445566778899'),
          f"connect_request with B's private data: {rq}")
        if rq is not None:
            qa2 = a.ctl('qp', 'create', f'access={QP_ACCESS}')['qp']
            a.ctl('post', 'recv', qa2['qpn'], f"lkey={ma['lkey']}", 'offset=0', 'length=64')
            acc = a.ctl('cm', 'accept', rq['conn'], qa2['qpn'])['conn']
            t(acc['state'] == 'REP_SENT' and acc['qpn'] == qa2['qpn'], f'REP sent: {acc}')
            eb = wait_event(b, 'established', conn=c2['conn'])
            t(eb is not None and eb['remote_qpn'] == qa2['qpn'],
              f"manual: B established with A's QP: {eb}")
            b.ctl('post', 'send', qb2['qpn'], f"lkey={mb['lkey']}", 'offset=0', 'length=64')
            wa = poll_wc(a, qa2['qpn'], 1)
            t(len(wa) == 1 and wa[0]['status'] == 0, f'manual: SEND received: {wa}')
            # A disconnects this time.
            a.ctl('cm', 'disconnect', rq['conn'])
            t(wait_event(b, 'disconnected', conn=c2['conn']) is not None,
              'B sees the disconnect A started')

        # -- reject --
        qb3 = b.ctl('qp', 'create')['qp']
        seq_a = events(a)[1]
        c3 = b.ctl('cm', 'connect', qb3['qpn'], '10.0.0.1', PORT + 1)['conn']
        rq = wait_event(a, 'connect_request', since=seq_a)
        if rq is not None:
            a.ctl('cm', 'reject', rq['conn'], 'reason=28')
        rj = wait_event(b, 'rejected', conn=c3['conn'])
        t(rj is not None and rj.get('reason') == 28, f'B sees the REJ, reason 28: {rj}')

        # -- a listener owned by its control connection goes when it closes (a killed
        #    `rocectl rping -s`), and the request it held unaccepted gets a REJ --
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.connect(a.sock)
        raw.settimeout(10)
        raw.sendall(json.dumps({'v': 1, 'id': 1, 'cmd': 'cm.listen', 'port': PORT + 4,
                                'accept': 'manual', 'owned': True}).encode() + b'\n')
        r = json.loads(raw.makefile().readline())
        t(r.get('ok') and r['listen'].get('owned') is True, f'owned listener: {r}')
        qb8 = b.ctl('qp', 'create')['qp']
        seq_a = events(a)[1]
        c8 = b.ctl('cm', 'connect', qb8['qpn'], '10.0.0.1', PORT + 4)['conn']
        t(wait_event(a, 'connect_request', since=seq_a) is not None,
          'owned listener: the REQ is held for cm.accept')
        raw.close()
        rj = wait_event(b, 'rejected', conn=c8['conn'])
        t(rj is not None and rj.get('reason') == 28,
          f'its client closed: the held REQ is rejected, reason 28: {rj}')
        ports = [x['port'] for x in a.ctl('cm', 'show')['listeners']]
        t(PORT + 4 not in ports and PORT + 1 in ports,
          f'its client closed: the owned listener is gone, the others stay: {ports}')

        # -- nobody listens: REJ reason 8 (invalid service ID), as Linux's CM answers --
        qb4 = b.ctl('qp', 'create')['qp']
        c4 = b.ctl('cm', 'connect', qb4['qpn'], '10.0.0.1', 9999)['conn']
        rj = wait_event(b, 'rejected', conn=c4['conn'])
        t(rj is not None and rj.get('reason') == 8, f'no listener: rejected, reason 8: {rj}')

        # -- a connection's QP destroyed: the connection goes with it (a DREQ), as
        #    rdma_destroy_qp + rdma_destroy_id, so no later DREQ can hit a QP that reuses
        #    the number --
        qb5 = b.ctl('qp', 'create', f'access={QP_ACCESS}')['qp']
        seq_a = events(a)[1]
        c5 = b.ctl('cm', 'connect', qb5['qpn'], '10.0.0.1', PORT)['conn']
        if wait_event(b, 'established', conn=c5['conn']) is not None:
            b.ctl('qp', 'destroy', qb5['qpn'])
            t(conn_of(b, c5['conn']) is None, "B's connection went with its QP")
            t(wait_event(a, 'disconnected', since=seq_a) is not None,
              'A sees the disconnect of the destroyed QP')
        else:
            t(False, f'connection for the QP destroy case: {events(b)}')

        # -- a listener bound to one address (rdma_bind_addr): REQs to another address of
        #    ours are refused with REJ 8, those to it taken --
        r = a.ctl('cm', 'listen', PORT + 2, 'ip=fd00::1')['listen']
        t(r.get('ip') == 'fd00::1', f'listener bound to fd00::1: {r}')
        qb6 = b.ctl('qp', 'create')['qp']
        c6 = b.ctl('cm', 'connect', qb6['qpn'], '10.0.0.1', PORT + 2)['conn']
        rj = wait_event(b, 'rejected', conn=c6['conn'])
        t(rj is not None and rj.get('reason') == 8 and
          a.ctl('cm', 'show')['counters']['not_bound'] == 1,
          f'a REQ to 10.0.0.1 for the listener on fd00::1: REJ 8, counted: {rj}')
        qb7 = b.ctl('qp', 'create')['qp']
        c7 = b.ctl('cm', 'connect', qb7['qpn'], 'fd00::1', PORT + 2)['conn']
        t(wait_event(b, 'established', conn=c7['conn']) is not None,
          'a REQ to fd00::1 (IPv6 GIDs) is taken')
        r = a.rocectl('cm', 'listen', PORT + 3, 'ip=10.9.9.9', check=False)
        t(r.returncode != 0 and 'EADDRNOTAVAIL' in r.stdout,
          f'binding to an address roced does not have is refused: {r.stdout}')

        # -- refusals --
        r = b.rocectl('cm', 'connect', qb['qpn'], '10.0.0.1', PORT, check=False)
        t(r.returncode != 0, f'a QP that is not in INIT cannot connect: {r.stdout}')
        r = a.rocectl('cm', 'listen', PORT, check=False)
        t(r.returncode != 0 and 'EADDRINUSE' in r.stdout, f'listening twice refused: {r.stdout}')
        r = a.rocectl('cm', 'accept', 12345, qa_n, check=False)
        t(r.returncode != 0 and 'ENOENT' in r.stdout, f'accept of no connection: {r.stdout}')

        sa, sb = a.ctl('cm', 'show'), b.ctl('cm', 'show')
        t(sa['counters']['no_listener'] >= 1, f"A counted the REQ for port 9999: "
          f"{sa['counters']}")
        t(sa['counters']['established'] >= 2 and sb['counters']['established'] >= 2,
          f"established twice on each side: A {sa['counters']['established']}, "
          f"B {sb['counters']['established']}")
        ga = a.ctl('counters', 'match=GSI_*')['counters']
        t(ga.get('GSI_CM', 0) > 0 and ga.get('GSI_NO_CM', 0) == 0,
          f'the GSI agent handed every CM MAD to the CM: {ga}')
        a.ctl('capture', 'stop')
        check_capture(t, pcap)

    return t.done()


if __name__ == '__main__':
    sys.exit(main())
