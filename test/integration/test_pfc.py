#!/usr/bin/python3
"""The congested fabric and PFC between real roced processes, driven only through rocectl.

1. Lossless (memif): B's rx has a bottleneck below what the WRITE job reaches (200 Mb/s,
   PFC on priority 0 only, XOFF 128 KiB, XON 64 KiB, a 4 MiB buffer so that the memif ring's
   1024 frames fit the headroom when a daemon is descheduled; QPs with a 1 s ACK timeout, as
   a queue of a few MB at 200 Mb/s holds a packet for tens of ms). B pauses A with PFC frames and
   resumes it; A honours them: its priority-0 frames wait (PFC_HELD), the time paused grows.
   Nothing is dropped anywhere (no tail or headroom drop, no retransmission, no NAK), every
   message completes, the job cannot beat the bottleneck, and the queue reached XOFF. A victim
   QP on priority 3 (DSCP 26, 20 Mb/s) keeps going meanwhile: priority 3 is never paused on A
   and the victim finishes its messages at its rate (no head-of-line blocking across
   priorities). Two more victims go to B's IPv6 address, past the bottleneck (bneck_to= B's
   IPv4 address: another egress port of the switch), one 4 KiB message at a time: the one on
   priority 3 runs at its own pace, the one on priority 0 waits for A's pauses with the
   incast and completes a small fraction of the other's messages (PFC's head-of-line
   blocking).
2. Lossy (memif): the same bottleneck with a 16 KiB buffer and no PFC: tail drops counted,
   go-back-N retransmits, every message still completes, no PFC frame anywhere.
3. Hostile PFC frames (af_packet on a veth pair in network namespaces, raw frames from the
   peer's end): a pause is honoured for its quanta at the port's speed, a resume ends it,
   frames of every malformed kind are counted under their names, a storm of huge quanta is cut
   by the watchdog (pfc set watchdog_ms=50) and its further frames ignored, pfc set mode=off
   ignores pauses; the daemon keeps serving. The startup line says PFC is in software (the PMD
   has none); pfc = hw, and priorities out of range, are refused at startup.

usage: test_pfc.py BUILD_DIR
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Daemon, Pair, connect, MR_ALL, QP_ALL  # noqa: E402

SIZE = 16 << 20
NS_A, NS_B, IF_A, IF_B = 'rocedp-pfc-a', 'rocedp-pfc-b', 'rdpfca', 'rdpfcb'


def write_job(a, qpn, ma, mb, *opts, length=65536):
    a.ctl('job', 'start', qpn, 'op=write', f"lkey={ma['lkey']}", f'length={length}',
          f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", *opts)


def wait_jobs(a, qpns, timeout=60):
    end, jobs = time.time() + timeout, {}
    while time.time() < end:
        jobs = {q: a.ctl('job', 'show', q)['job'] for q in qpns}
        if not any(j['running'] for j in jobs.values()):
            break
        time.sleep(0.1)
    return jobs


def connect6(a, b, *opts):
    """A QP pair over the daemons' IPv6 addresses."""
    qa, qb = a.ctl('qp', 'create', QP_ALL)['qp'], b.ctl('qp', 'create', QP_ALL)['qp']
    a.ctl('qp', 'connect', qa['qpn'], qb['qpn'], qb['psn'], 'fd00::2', *opts)
    b.ctl('qp', 'connect', qb['qpn'], qa['qpn'], qa['psn'], 'fd00::1', *opts)
    return qa


def port_pfc(d):
    return d.ctl('pfc', 'show', 0)['pfc'][0]


def lossless(t, build):
    rate = 200
    with Pair(build) as p:
        a, b = p.a, p.b
        s = port_pfc(a)
        t(s['mode'] == 'sw' and s['watchdog_ms'] == 100 and s['prios'] == list(range(8)) and
          s['dscp2prio'][26] == 3, f'default: software PFC, 100 ms watchdog: {s}')
        t('PFC in software' in open(a.log).read(), 'the startup line says software PFC')
        # memif reports 100 Gb/s, where a pause is 335 us: shorter than a daemon's silence on a
        # busy machine. A reckons the quanta at 10 Gb/s (3.4 ms); B's resumes end them.
        r = a.ctl('pfc', 'set', 0, 'link_mbps=10000')['pfc'][0]
        t(r['link_mbps'] == 10000 and r['link_fixed'], f'link speed fixed: {r}')
        ma, mb = a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
        qa, qb = connect(a, b, timeout=18)
        va, vb = connect(a, b, timeout=18, dscp=26)
        h0, h3 = (connect6(a, b, 'timeout=18', f'dscp={dscp}') for dscp in (0, 26))
        spec = f'bneck={rate}m:4m,lossless=128k:64k:0x01:65535,bneck_to=10.0.0.2'
        r = b.ctl('impair', 'set', f'spec={spec}', 'dir=rx')
        t(r['impair'][0]['spec'] == spec, f"spec {r['impair'][0]['spec']}")
        write_job(a, qa['qpn'], ma, mb, 'duration_ms=3000', 'depth=16')
        write_job(a, va['qpn'], ma, mb, 'offset=8388608', 'duration_ms=2500', 'depth=2',
                  'rate_mbps=20')
        for qp, off in ((h0, 12), (h3, 13)):
            write_job(a, qp['qpn'], ma, mb, f'offset={off << 20}', 'duration_ms=2500',
                      'depth=1', length=4096)
        paused_seen = False
        end = time.time() + 3
        while time.time() < end:
            paused_seen |= 0 in port_pfc(a)['paused']
            time.sleep(0.05)
        jobs = wait_jobs(a, [x['qpn'] for x in (qa, va, h0, h3)])
        j, v = jobs[qa['qpn']], jobs[va['qpn']]
        v0, v3 = jobs[h0['qpn']], jobs[h3['qpn']]
        ca, cb = a.ctl('counters')['counters'], b.ctl('counters')['counters']
        e = b.ctl('impair', 'show', 0, 'dir=rx')['impair'][0]
        imp, q = e['counters'], e['queue']
        pa = port_pfc(a)
        pr = {x['prio']: x for x in pa['priorities']}
        print(f"  lossless: {j['completed']} x 64 KiB at {j['gbps']:.3f} Gb/s through "
              f"{rate} Mb/s; B sent {imp['pfc_pause_tx']} pauses, {imp['pfc_resume_tx']} "
              f"resumes (PFC_TX {cb['PFC_TX']}), queue p50 {q['p50_bytes']} p99 "
              f"{q['p99_bytes']} max {q['max_bytes']}; A heard {ca['PFC_RX_FRAMES']}, "
              f"paused {ca['PFC_PAUSED_NS'] / 1e6:.1f} ms, held {ca['PFC_HELD']} frames; "
              f"victim {v['completed']} x 64 KiB at {v['gbps'] * 1000:.1f} Mb/s; past the "
              f"bottleneck ({imp['bneck_past']} frames), 4 KiB one at a time: priority 3 "
              f"{v3['msg_rate']:.0f}/s, priority 0 {v0['msg_rate']:.0f}/s", flush=True)
        t(not j['running'] and j['completed'] > 0 and j['errors'] == 0 and
          j['completed'] == j['posted'], f'every message completed: {j}')
        t(j['gbps'] <= rate / 1000 * 1.05, f"no faster than the bottleneck: {j['gbps']}")
        t(imp['tail_dropped'] == 0 and imp['headroom_dropped'] == 0 and
          imp['red_dropped'] == 0 and imp['bneck_out'] > 1000, f'lossless: no drop {imp}')
        t(ca['RETRANSMITS'] == 0 and cb['NAK_SEQ_TX'] == 0 and ca['NAK_SEQ_RX'] == 0,
          f"no retransmission, no NAK: {ca['RETRANSMITS']} {cb['NAK_SEQ_TX']}")
        t(imp['pfc_pause_tx'] > 0 and imp['pfc_resume_tx'] > 0 and imp['pfc_nomem'] == 0,
          f'B paused and resumed A: {imp}')
        t(cb['PFC_TX'] == imp['pfc_pause_tx'] + imp['pfc_resume_tx'],
          f"B sent each frame: PFC_TX {cb['PFC_TX']}")
        t(ca['PFC_RX_FRAMES'] == cb['PFC_TX'] and ca['PFC_RX_PAUSE'] > 0 and
          ca['PFC_RX_RESUME'] > 0, f"A heard each: {ca['PFC_RX_FRAMES']}")
        t(ca['PFC_PAUSED_NS'] > 0 and ca['PFC_HELD'] > 0 and pr[0]['paused_ns'] > 0 and
          pr[0]['pauses'] == ca['PFC_RX_PAUSE'] and paused_seen,
          f"A honoured them: {ca['PFC_PAUSED_NS']} ns, {ca['PFC_HELD']} held")
        t(q['max_bytes'] >= 128 * 1024 and q['samples'] > 1000 and q['p99_bytes'] <= 4 << 20,
          f'the queue reached XOFF: {q}')
        # The victim on priority 3.
        t(pr[3]['pauses'] == 0 and pr[3]['paused_ns'] == 0, f'priority 3 never paused {pr[3]}')
        t(not v['running'] and v['errors'] == 0 and v['completed'] == v['posted'] and
          v['gbps'] >= 0.016, f'the victim kept its rate: {v}')
        # Past the bottleneck: priority 0 held back by the pauses, priority 3 not.
        t(imp['bneck_past'] >= v0['completed'] + v3['completed'],
          f"the IPv6 victims passed the bottleneck: {imp}")
        t(all(not x['running'] and x['errors'] == 0 and x['completed'] == x['posted'] > 0
              for x in (v0, v3)), f'every message completed: {v0} {v3}')
        t(v0['msg_rate'] * 4 < v3['msg_rate'],
          f"head-of-line blocking on priority 0 only: {v0['msg_rate']:.0f} against "
          f"{v3['msg_rate']:.0f} messages/s")
        # The same through rocectl's text.
        text = a.rocectl('pfc', 'show', 0, json_out=False).stdout
        t('paused_ns' in text, f'human pfc show:\n{text}')
        text = b.rocectl('impair', 'show', 0, 'dir=rx', json_out=False).stdout
        t('queue:' in text and 'p99' in text, f'human impair show:\n{text}')


def lossy(t, build):
    with Pair(build) as p:
        a, b = p.a, p.b
        ma, mb = a.ctl('mr', 'reg', SIZE, MR_ALL)['mr'], b.ctl('mr', 'reg', SIZE, MR_ALL)['mr']
        qa, qb = connect(a, b, timeout=12)
        b.ctl('impair', 'set', 'spec=bneck=200m:16k', 'dir=rx')
        write_job(a, qa['qpn'], ma, mb, 'duration_ms=1500', 'depth=8')
        j = wait_jobs(a, [qa['qpn']])[qa['qpn']]
        ca, cb = a.ctl('counters')['counters'], b.ctl('counters')['counters']
        e = b.ctl('impair', 'show', 0, 'dir=rx')['impair'][0]
        imp, q = e['counters'], e['queue']
        print(f"  lossy: {j['completed']} x 64 KiB at {j['gbps']:.3f} Gb/s; "
              f"{imp['tail_dropped']} tail drops, {ca['RETRANSMITS']} retransmissions, "
              f"queue max {q['max_bytes']}", flush=True)
        t(imp['tail_dropped'] > 0 and imp['headroom_dropped'] == 0, f'tail drops {imp}')
        t(q['max_bytes'] <= 16384, f"the queue stays in its buffer: {q['max_bytes']}")
        t(ca['RETRANSMITS'] > 0, f"go-back-N: {ca['RETRANSMITS']}")
        t(not j['running'] and j['completed'] > 0 and j['errors'] == 0 and
          j['completed'] == j['posted'], f'every message completed: {j}')
        t(imp['pfc_pause_tx'] == 0 and cb['PFC_TX'] == 0 and ca['PFC_RX_FRAMES'] == 0,
          'no PFC when lossy')


# ---- hostile frames over af_packet ----

def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def pfc_frame(src, vector, quanta, opcode=0x0101, dst=b'\x01\x80\xc2\x00\x00\x01', pad=26):
    times = b''.join(struct.pack('>H', quanta[i] if vector >> i & 1 else 0) for i in range(8))
    return dst + src + b'\x88\x08' + struct.pack('>H', opcode) + bytes([0, vector]) + times + \
        bytes(pad)


def hostile(t, build):
    if os.geteuid() != 0 or not os.path.exists('/usr/sbin/ip') and not os.path.exists('/sbin/ip'):
        print('  hostile frames: skipped (needs root and ip netns)')
        return
    tmp = tempfile.mkdtemp(prefix='rocedp-pfc-')
    nets, d, s = [], None, None
    try:
        for ns in (NS_A, NS_B):
            sh('ip', 'netns', 'add', ns)
            nets.append(ns)
        sh('ip', 'link', 'add', IF_A, 'netns', NS_A, 'type', 'veth', 'peer', 'name', IF_B,
           'netns', NS_B)
        for ns, i in ((NS_A, IF_A), (NS_B, IF_B)):
            sh('ip', '-n', ns, 'link', 'set', i, 'up')
        # pfc = hw on a PMD without PFC: a startup error that says so.
        conf = os.path.join(tmp, 'hw.conf')
        with open(conf, 'w') as f:
            f.write(f'[port0]\ndevice = net_af_packet0\nipv4 = 10.9.0.1/24\npfc = hw\n')
        hw = Daemon(build, tmp, 'pfchw', ['-l', '0,1', f'--vdev=net_af_packet0,iface={IF_A}'],
                    ['--config', conf], NS_A)
        rc = hw.proc.wait(30)
        log = open(hw.log).read()
        t(rc == 2 and 'pfc = hw' in log and 'no priority flow control' in log,
          f'pfc = hw refused at start: exit {rc}: {log[-300:]}')
        with open(conf, 'w') as f:
            f.write('[port0]\ndevice = net_af_packet0\nipv4 = 10.9.0.1/24\npfc_prios = 3,9\n')
        bad = Daemon(build, tmp, 'pfcbad', ['-l', '0,1',
                     f'--vdev=net_af_packet0,iface={IF_A}'], ['--config', conf], NS_A)
        rc = bad.proc.wait(30)
        log = open(bad.log).read()
        t(rc == 2 and 'pfc_prios' in log and '0-7' in log, f'bad pfc_prios: {rc}: {log[-200:]}')
        d = Daemon(build, tmp, 'pfc', ['-l', '0,1', f'--vdev=net_af_packet0,iface={IF_A}'],
                   ['--port', 'net_af_packet0', '--ip', '10.9.0.1/24'], NS_A)
        d.wait_ready()
        t('PFC in software' in open(d.log).read(), 'af_packet: software PFC')
        own = os.open('/proc/self/ns/net', os.O_RDONLY)
        tgt = os.open(f'/run/netns/{NS_B}', os.O_RDONLY)
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.setns(tgt, 0x40000000)
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        s.bind((IF_B, 0))
        libc.setns(own, 0x40000000)
        os.close(own)
        os.close(tgt)
        src = bytes.fromhex('020000000009')
        link = d.ctl('port', 'show')['ports'][0]['speed_mbps']
        # A pause of 65535 quanta on priority 2: paused now, for that long at the port's speed.
        s.send(pfc_frame(src, 0x04, [65535] * 8))
        time.sleep(0.05)
        x = port_pfc(d)
        c = x['counters']
        t(c['RX_FRAMES'] == 1 and c['RX_PAUSE'] == 1 and x['priorities'][2]['pauses'] == 1,
          f'a pause taken: {c}')
        # 65535 quanta at the port's speed (100 Gb/s when it reports none).
        want = 65535 * 512 * 1000 // (link or 100000)
        t(x['priorities'][2]['paused_ns'] > 0, f"paused: {x['priorities'][2]} (link {link})")
        s.send(pfc_frame(src, 0x04, [0] * 8))
        time.sleep(0.05)
        x = port_pfc(d)
        t(x['priorities'][2]['resumes'] == 1 and 2 not in x['paused'] and
          x['priorities'][2]['paused_ns'] <= want, f"resumed: {x['priorities'][2]}")
        # Every malformed kind, under its name.
        bad = {
            'RX_BAD_LENGTH': [pfc_frame(src, 1, [9] * 8, pad=40), pfc_frame(src, 1, [9] * 8,
                                                                           pad=120)],
            'RX_BAD_DST': [pfc_frame(src, 1, [9] * 8, dst=b'\x01\x80\xc2\x00\x00\x02')],
            'RX_BAD_OPCODE': [pfc_frame(src, 1, [9] * 8, opcode=0x0102),
                              pfc_frame(src, 1, [9] * 8, opcode=0xffff)],
            'RX_LINK_PAUSE': [pfc_frame(src, 1, [9] * 8, opcode=0x0001)],
            'RX_ZERO_VECTOR': [pfc_frame(src, 0, [65535] * 8)] * 3,
        }
        for frames in bad.values():
            for f in frames:
                s.send(f)
        time.sleep(0.1)
        c = port_pfc(d)['counters']
        for name, frames in bad.items():
            t(c[name] == len(frames), f'{name}: {c[name]} of {len(frames)}')
        t(c['RX_FRAMES'] == 2 and not port_pfc(d)['paused'], f'none taken: {c}')
        # A storm of huge quanta: the watchdog cuts it and ignores the rest.
        # At 1 Gb/s 65535 quanta are 33.5 ms: the sender's silences (this script descheduled)
        # do not break the storm into short pauses the watchdog rightly lets be.
        r = d.ctl('pfc', 'set', 0, 'watchdog_ms=50', 'link_mbps=1000')['pfc'][0]
        t(r['watchdog_ms'] == 50 and r['link_mbps'] == 1000, f'watchdog set: {r}')
        t0, storm = time.time(), pfc_frame(src, 0x01, [65535] * 8)
        while time.time() < t0 + 0.4:
            try:
                s.send(storm)
            except OSError:
                time.sleep(0.0001)
        x = port_pfc(d)
        c = x['counters']
        # Each cut ends a pause of 50 ms at most; a silence of the sender longer than a
        # pause (33.5 ms) ends one too, so some more may come between.
        t(c['WATCHDOG'] >= 1 and c['RX_STORM'] > 0 and 0 in x['storm'] and
          x['priorities'][0]['paused_ns'] < 85e6 * c['WATCHDOG'] + 35e6,
          f"storm cut: watchdog {c['WATCHDOG']}, ignored {c['RX_STORM']}, paused "
          f"{x['priorities'][0]['paused_ns']} ns")
        print(f"  hostile: storm of {c['RX_PAUSE']} pauses: {c['WATCHDOG']} watchdog cut(s), "
              f"{c['RX_STORM']} ignored, priority 0 paused "
              f"{x['priorities'][0]['paused_ns'] / 1e6:.1f} ms in 400 ms", flush=True)
        # Off: counted, not honoured.
        d.ctl('pfc', 'set', 0, 'mode=off')
        s.send(pfc_frame(src, 0x80, [65535] * 8))
        time.sleep(0.05)
        x = port_pfc(d)
        t(x['mode'] == 'off' and x['counters']['RX_IGNORED'] == 1 and 7 not in x['paused'],
          f'off: ignored {x["counters"]}')
        r = d.rocectl('pfc', 'set', 0, 'mode=hw', check=False)
        t(r.returncode != 0, f'mode=hw refused at run time: {r.stderr.strip()}')
        r = d.rocectl('pfc', 'set', 0, 'watchdog_ms=9000', check=False)
        t(r.returncode != 0 and '8000' in r.stderr, f'watchdog range: {r.stderr.strip()}')
        r = d.rocectl('pfc', 'set', 0, 'prios=8', check=False)
        t(r.returncode != 0 and 'prios' in r.stderr, f'prios range: {r.stderr.strip()}')
        t(d.ctl('status')['ok'], 'still serving')
    finally:
        if s is not None:
            s.close()
        if d is not None:
            d.stop()
        for ns in nets:
            sh('ip', 'netns', 'del', ns, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    build = sys.argv[1]
    t = Checks('pfc')
    lossless(t, build)
    lossy(t, build)
    hostile(t, build)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
