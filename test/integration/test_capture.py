#!/usr/bin/python3
"""rocectl capture between two roced over memif, decoded by rocedump and by tshark with
tools/wireshark/rocedp-sr.lua.

A known exchange (RC go-back-N and selective-repeat QPs: a WRITE job of 3-packet messages,
SENDs, SR WRITEs with immediate) is captured on one daemon in both directions; rocedump and
tshark must see the same frames with the same opcodes, and the data opcodes the job's exact
message counts; every SR packet is decoded by the Lua dissector with its SRETH (RSN and offset
as the messages imply) or its SACK, none is left as "Unknown OpCode" (which tshark says of every
one without the script). count ends a capture by itself after exactly that many frames; a snap
length keeps that many bytes and rocedump decodes the cut frames, marked truncated; SR under
loss gives SACK bitmaps the dissector lists. The file name is outside input: relative names
(resolved by rocectl), missing directories, directories, symbolic links and FIFOs are refused
with a clear error, a second capture with EBUSY, and a busy capture's file is left alone.

dpdk-dumpcap attaches as a DPDK secondary process. In DPDK 22.11 a secondary cannot attach to a
primary started with --no-huge (as these tests start roced): the test checks that it fails
saying so, and when the host has free hugepages on a mounted hugetlbfs it also starts a roced
with hugepages and captures from it with dpdk-dumpcap; otherwise that part is skipped with the
reason.

usage: test_capture.py BUILD_DIR
"""
import decimal
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedp_it import Checks, Daemon, Failure, Pair, connect, poll_wc, MR_ALL  # noqa: E402

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
LUA = os.path.join(SRC, 'tools', 'wireshark', 'rocedp-sr.lua')
MTU = 1024
WRITES, WSIZE = 20, 3000     # 3 packets each at MTU 1024
SENDS, SSIZE = 10, 100       # RC: SEND ONLY
SR_SENDS, SR_SSIZE = 10, 2000  # SR: SEND FIRST + LAST
SR_IMMS, SR_ISIZE = 5, 100   # SR: WRITE ONLY with immediate
RC_EXPECT = {6: WRITES, 7: WRITES, 8: WRITES, 4: SENDS}
SR_EXPECT = {0xC6: WRITES, 0xC7: WRITES, 0xC8: WRITES, 0xC0: SR_SENDS, 0xC2: SR_SENDS,
             0xCB: SR_IMMS}
SR_FIELDS = ['rocedp_sr.opcode', 'rocedp_sr.sreth.rsn', 'rocedp_sr.sreth.offset',
             'rocedp_sr.sack.cumulative_psn', 'rocedp_sr.sack.ranges', 'rocedp_sr.aeth.msn']


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


class Decoders:
    def __init__(self, build, tshark):
        self.rocedump = os.path.join(build, 'app', 'rocedump')
        self.tshark = tshark

    def dump_fields(self, path):
        """rocedump --fields: {frame: (opcode, psn)} of the RoCE frames."""
        r = run([self.rocedump, '--fields', path])
        if r.returncode != 0:
            raise Failure(f'rocedump --fields {path}: {r.returncode} {r.stderr}')
        return {int(c[0]): (int(c[1]), int(c[3]))
                for c in (ln.split('\t') for ln in r.stdout.splitlines())}

    def dump_lines(self, path):
        r = run([self.rocedump, path])
        if r.returncode != 0:
            raise Failure(f'rocedump {path}: {r.returncode} {r.stderr}')
        return r.stdout.splitlines()[1:]

    def dump_frames(self, path):
        r = run([self.rocedump, '--table', path])
        m = re.search(r'frames: (\d+)', r.stdout)
        return int(m.group(1)) if m else -1

    def tshark_rows(self, path, lua=True, extra=()):
        """tshark -T fields: one dict per frame (values '' when absent)."""
        fields = ['frame.number', 'infiniband.bth.opcode', 'infiniband.bth.psn', '_ws.col.Info',
                  'frame.time_epoch']
        fields += SR_FIELDS if lua else []
        cmd = [self.tshark, '-n', '-r', path, '-T', 'fields', '-E', 'separator=\t']
        cmd += ['-X', f'lua_script:{LUA}'] if lua else []
        for f in fields:
            cmd += ['-e', f]
        r = run(cmd + list(extra))
        if r.returncode != 0:
            raise Failure(f'tshark {path}: {r.returncode} {r.stderr[-500:]}')
        return [dict(zip(fields, ln.split('\t'))) for ln in r.stdout.splitlines()]


def wait_job(d, qpn, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        job = d.ctl('job', 'show', qpn)['job']
        if not job['running']:
            return job
        time.sleep(0.05)
    raise Failure(f'job on QP {qpn} still running')


def exchange(t, a, b, ma, mb, rc, sr):
    """The known exchange: a WRITE job on each QP, then SENDs, then (SR) WRITEs with
    immediate; every message completed on both sides."""
    for (qa, _), what in ((rc, 'RC'), (sr, 'SR')):
        a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", f'length={WSIZE}',
              f'count={WRITES}', f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}")
        job = wait_job(a, qa['qpn'])
        t(job['completed'] == WRITES and job['errors'] == 0, f'{what} WRITE job: {job}')
    posts = ((rc, SENDS, SSIZE, []), (sr, SR_SENDS, SR_SSIZE, []),
             (sr, SR_IMMS, SR_ISIZE, ['imm=0x1234']))
    for (qa, qb), n, size, imm in posts:
        b.ctl('post', 'recv', qb['qpn'], f"lkey={mb['lkey']}", 'offset=65536', 'length=4096',
              f'count={n}')
        if imm:
            a.ctl('post', 'write', qa['qpn'], f"lkey={ma['lkey']}", f'length={size}',
                  f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}", f'count={n}', *imm)
        else:
            a.ctl('post', 'send', qa['qpn'], f"lkey={ma['lkey']}", f'length={size}',
                  f'count={n}')
        got, rgot = poll_wc(a, qa['qpn'], n), poll_wc(b, qb['qpn'], n)
        t(len(got) == n and all(w['status'] == 0 for w in got) and len(rgot) == n,
          f'{n} messages of {size} bytes: {len(got)} sent, {len(rgot)} received')


def opcode_counts(ops):
    """{opcode: frames} of {frame: (opcode, psn)}."""
    out = {}
    for op, _ in ops.values():
        out[op] = out.get(op, 0) + 1
    return out


def tx_req(d):
    return d.ctl('counters')['counters']['TX_REQ']


def check_job(t, what, ops, sent):
    """The data frames are the job's: each opcode's distinct PSNs as many as its messages
    made, and every request the daemon sent (TX_REQ, resends after a timeout included)
    captured once."""
    expect = {**RC_EXPECT, **SR_EXPECT}
    data = [(op, psn) for op, psn in ops.values() if op in expect]
    distinct = opcode_counts({i: k for i, k in enumerate(set(data))})
    for op, n in expect.items():
        t(distinct.get(op, 0) == n, f'{what}: opcode {op:#x}: {distinct.get(op, 0)} PSNs, '
          f'the job made {n}')
    t(len(data) == sent, f'{what}: {len(data)} request frames, the daemon sent {sent}')
    if len(data) != len(set(data)):
        print(f'{what}: {len(data) - len(set(data))} resends (ACK timeouts on a loaded host)')


def check_decodes(t, dec, path, written, what):
    """rocedump and tshark agree frame by frame; @return (rocedump {frame: op}, tshark rows)."""
    ops = dec.dump_fields(path)
    rows = dec.tshark_rows(path)
    tops = {int(r['frame.number']): (int(r['infiniband.bth.opcode'].split(',')[0]),
                                     int(r['infiniband.bth.psn'].split(',')[0]))
            for r in rows if r['infiniband.bth.opcode']}
    t(dec.dump_frames(path) == written and len(rows) == written,
      f'{what}: {written} frames written, rocedump {dec.dump_frames(path)}, tshark {len(rows)}')
    t(ops == tops, f'{what}: rocedump and tshark disagree on '
      f'{sorted(set(ops.items()) ^ set(tops.items()))[:10]}')
    # The writer merges its rings (one per queue and direction) in time order.
    times = [decimal.Decimal(r['frame.time_epoch']) for r in rows]
    t(times == sorted(times), f'{what}: frames out of time order')
    unknown = [r['frame.number'] for r in rows if 'Unknown OpCode' in r['_ws.col.Info']]
    t(not unknown, f'{what}: "Unknown OpCode" in frames {unknown[:10]}')
    sr_rows = [r for r in rows if r['infiniband.bth.opcode'] and
               0xC0 <= int(r['infiniband.bth.opcode'].split(',')[0]) <= 0xD7]
    bad = [r['frame.number'] for r in sr_rows
           if not r['rocedp_sr.opcode'] or
           (int(r['infiniband.bth.opcode']) == 0xD1) != (r['rocedp_sr.sack.cumulative_psn'] != '')
           or (int(r['infiniband.bth.opcode']) != 0xD1 and
               (r['rocedp_sr.sreth.rsn'] == '' or r['rocedp_sr.sreth.offset'] == ''))]
    t(not bad, f'{what}: SR frames without their SRETH or SACK fields: {bad[:10]}')
    return ops, rows


def lossless(t, dec, p, tmp, rc, sr, ma, mb):
    a, b = p.a, p.b
    path = os.path.join(tmp, 'exchange.pcapng')
    sent = tx_req(a)
    r = a.ctl('capture', 'start', path)['capture']
    t(r['state'] == 'running' and r['dir'] == 'both' and r['ports'] == [0],
      f'capture start: {r}')
    # One capture at a time; the running capture's file is not touched by the refusal.
    size = os.path.getsize(path)
    r2 = a.rocectl('capture', 'start', path, check=False)
    t(r2.returncode == 1 and 'EBUSY' in r2.stdout and os.path.getsize(path) == size,
      f'second capture: {r2.returncode} {r2.stdout.strip()}')
    exchange(t, a, b, ma, mb, rc, sr)
    show = a.ctl('capture', 'show')['capture']
    t(show['state'] == 'running', f"capture show while running: {show['state']}")
    time.sleep(0.3)
    st = a.ctl('capture', 'stop')['capture']
    c = st['counters']
    t(st['state'] == 'stopped' and c['written'] == c['seen'] == c['copied'] and
      c['drop_ring'] == 0 and c['drop_nombuf'] == 0 and c['past_count'] == 0 and c['written'],
      f'capture stop: {st}')
    ops, rows = check_decodes(t, dec, path, c['written'], 'exchange')
    check_job(t, 'exchange', ops, tx_req(a) - sent)
    cnt = opcode_counts(ops)
    t(cnt.get(0x11, 0) >= 1 and cnt.get(0xD1, 0) >= 1,
      f'RC ACKs {cnt.get(0x11, 0)}, SR ACKs {cnt.get(0xD1, 0)}')
    t(set(cnt) <= set(RC_EXPECT) | set(SR_EXPECT) | {0x11, 0xD1}, f'other opcodes: {cnt}')
    # The SRETH as the messages imply: the offset is the packet's place in the message, the
    # RSN numbers the messages that use a receive WQE (the SENDs, then the WRITEs with
    # immediate), from 0; WRITEs carry 0.
    place = {0xC6: 0, 0xC7: MTU, 0xC8: 2 * MTU, 0xC0: 0, 0xC2: MTU, 0xCB: 0}
    seen_rsn, bad, first = [], [], set()
    for r in rows:
        op = int(r['infiniband.bth.opcode'] or 0)
        if op not in place or (op, r['infiniband.bth.psn']) in first:
            continue
        first.add((op, r['infiniband.bth.psn']))
        off, rsn = int(r['rocedp_sr.sreth.offset']), int(r['rocedp_sr.sreth.rsn'])
        if off != place[op] or (op in (0xC6, 0xC7, 0xC8) and rsn != 0):
            bad.append((r['frame.number'], hex(op), rsn, off))
        if op in (0xC2, 0xCB):
            seen_rsn.append(rsn)
    t(not bad, f'SRETH fields not as the messages imply: {bad[:5]}')
    t(seen_rsn == list(range(SR_SENDS + SR_IMMS)), f'RSNs of the SR messages: {seen_rsn}')
    # Without the script tshark knows none of them: the script is what decodes them.
    plain = dec.tshark_rows(path, lua=False)
    n_unknown = sum('Unknown OpCode' in r['_ws.col.Info'] for r in plain)
    n_sr = sum(cnt.get(op, 0) for op in list(SR_EXPECT) + [0xD1])
    t(n_unknown == n_sr, f'without the dissector: {n_unknown} Unknown OpCode, {n_sr} SR frames')
    # Directions: A's requests go out, the ACKs come in.
    lines = dec.dump_lines(path)
    wrong = [ln for ln in lines if ('ACK' in ln.split()[2]) != ln.endswith('[rx]')]
    t(not wrong and all(ln.endswith(('[rx]', '[tx]')) for ln in lines),
      f'directions: {wrong[:3]}')
    return c['written']


def count_and_snaplen(t, dec, p, tmp, rc, sr, ma, mb):
    a, b = p.a, p.b
    # count: the capture ends by itself once that many frames are written.
    path = os.path.join(tmp, 'count.pcapng')
    a.ctl('capture', 'start', path, 'count=25')
    a.ctl('job', 'start', rc[0]['qpn'], 'op=write', f"lkey={ma['lkey']}", f'length={WSIZE}',
          f'count={WRITES}', f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}")
    wait_job(a, rc[0]['qpn'])
    end, st = time.time() + 5, {}
    while time.time() < end:
        st = a.ctl('capture', 'show')['capture']
        if st['state'] != 'running':
            break
        time.sleep(0.05)
    t(st.get('state') == 'count' and st['counters']['written'] == 25,
      f"count=25: state {st.get('state')}, {st.get('counters')}")
    t(dec.dump_frames(path) == 25 and len(dec.tshark_rows(path)) == 25,
      f'count=25: rocedump {dec.dump_frames(path)} frames, tshark '
      f'{len(dec.tshark_rows(path))}')
    # A capture that ended by itself does not keep the next from starting.
    path2 = os.path.join(tmp, 'snap.pcapng')
    # rocectl's tcpdump-like spelling, and a relative name taken from rocectl's directory.
    r = run([os.path.join(a.build, 'app/rocectl'), '-s', a.sock, 'capture', 'start',
             'snap.pcapng', '--snaplen', '96', '--dir', 'tx', '--port', '0'], cwd=tmp)
    t(r.returncode == 0 and os.path.exists(path2), f'rocectl capture start --snaplen: {r}')
    sent = tx_req(a)
    exchange(t, a, b, ma, mb, rc, sr)
    st = a.ctl('capture', 'stop')['capture']
    t(st['snaplen'] == 96 and st['dir'] == 'tx' and st['file'] == path2,
      f'snaplen capture: {st}')
    ops, rows = check_decodes(t, dec, path2, st['counters']['written'], 'snaplen 96')
    lines = dec.dump_lines(path2)
    cut = [ln for ln in lines if '(truncated: 96 of' in ln]
    long_frames = [r for r in rows if int(r['frame.number']) in ops]
    t(cut and all(ln.split()[1] == 'ROCE' and ln.endswith('[tx]') for ln in lines),
      f'snaplen 96: {len(cut)} cut frames of {len(lines)}, not all decoded RoCE tx: '
      f'{[ln for ln in lines if ln.split()[1] != "ROCE"][:3]}')
    check_job(t, 'snaplen 96', ops, tx_req(a) - sent)
    t(len(long_frames) == len(ops), 'snaplen 96: frames tshark does not decode')


def sr_loss(t, dec, p, tmp, ma, mb):
    """SR under 5 % loss on B's receive side: SACK bitmaps, resends, all decoded."""
    a, b = p.a, p.b
    qa, qb = connect(a, b, mtu=MTU, sr='true', sr_rto_us=500)
    path = os.path.join(tmp, 'loss.pcapng')
    a.ctl('capture', 'start', path)
    b.ctl('impair', 'set', 'spec=loss=0.05,seed=7', 'dir=rx')
    n = 50
    a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", f'length={WSIZE}',
          f'count={n}', 'depth=16', f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}")
    job = wait_job(a, qa['qpn'], 60)
    b.ctl('impair', 'clear')
    time.sleep(0.2)
    st = a.ctl('capture', 'stop')['capture']
    t(job['completed'] == n and job['errors'] == 0, f'SR job under loss: {job}')
    ops, rows = check_decodes(t, dec, path, st['counters']['written'], 'SR under loss')
    sacks = [r['rocedp_sr.sack.ranges'] for r in rows if r['rocedp_sr.sack.ranges']]
    t(sacks, 'SR under loss: no SACK ranges decoded')
    # Every PSN of the job went out at least once, resends besides.
    data = [(int(r['infiniband.bth.opcode']), int(r['infiniband.bth.psn'])) for r in rows
            if r['infiniband.bth.opcode'] and int(r['infiniband.bth.opcode']) in (0xC6, 0xC7,
                                                                                  0xC8)]
    psns = {psn for _, psn in data}
    t(len(psns) == 3 * n and len(data) > 3 * n,
      f'SR under loss: {len(psns)} distinct PSNs (want {3 * n}), {len(data)} sends')
    print(f'SR under loss: {len(data) - 3 * n} resends, {len(sacks)} SACKs, e.g. {sacks[:2]}')
    a.ctl('qp', 'destroy', qa['qpn'])
    b.ctl('qp', 'destroy', qb['qpn'])


def refusals(t, a, tmp):
    def refused(args, words, what):
        r = a.rocectl(*args, check=False)
        out = r.stdout + r.stderr
        t(r.returncode != 0 and all(w in out for w in words), f'{what}: {r.returncode} {out}')

    os.mkdir(os.path.join(tmp, 'dir'))
    os.symlink(os.path.join(tmp, 'target'), os.path.join(tmp, 'link'))
    os.mkfifo(os.path.join(tmp, 'fifo'))
    refused(['capture', 'stop'], ['ENOENT', 'no capture'], 'stop without a capture')
    refused(['call', 'capture.start', '{"file": "rel.pcapng"}'], ['EINVAL', 'absolute'],
            'relative name in the request')
    refused(['capture', 'start', os.path.join(tmp, 'no', 'such.pcapng')],
            ['ENOENT', 'cannot open', 'No such file'], 'missing directory')
    refused(['capture', 'start', os.path.join(tmp, 'dir')], ['EINVAL', 'not a regular file'],
            'a directory')
    refused(['capture', 'start', os.path.join(tmp, 'link')], ['symbolic link'],
            'a symbolic link')
    t(not os.path.exists(os.path.join(tmp, 'target')), 'written through a symbolic link')
    refused(['capture', 'start', os.path.join(tmp, 'fifo')], ['not a regular file'],
            'a FIFO')
    bad = os.path.join(tmp, 'bad.pcapng')
    for arg in ('snaplen=0', 'snaplen=65536', 'dir=up', 'port=4'):
        refused(['capture', 'start', bad, arg], ['EINVAL'], f'capture start {arg}')
    refused(['capture', 'start', bad, '--snaplen'], ['needs a value'], '--snaplen alone')


def dumpcap_no_huge(t, p):
    """DPDK 22.11: a secondary cannot attach to a --no-huge primary; say so, not hang."""
    prefix = f'rocedp-it-a-{os.getpid()}'
    r = run(['dpdk-dumpcap', f'--file-prefix={prefix}', '-D'])
    out = r.stdout + r.stderr
    t(r.returncode != 0 and 'hugepage' in out,
      f'dpdk-dumpcap on a --no-huge roced: {r.returncode} {out[-300:]}')


def hugetlbfs():
    """A mounted hugetlbfs with enough free pages for a roced, or (None, reason)."""
    mounts = [ln.split()[1] for ln in open('/proc/mounts') if ln.split()[2] == 'hugetlbfs']
    info = dict(ln.split(':', 1) for ln in open('/proc/meminfo'))
    free = int(info.get('HugePages_Free', '0').split()[0])
    page_kb = int(info.get('Hugepagesize', '0 kB').split()[0])
    if not mounts:
        return None, 'no hugetlbfs mounted'
    if free * page_kb < 256 * 1024:
        return None, f'{free} free hugepages of {page_kb} kB: a roced needs 256 MB'
    return mounts[0], None


def dumpcap_attach(t, build, dec, tmp):
    huge, why = hugetlbfs()
    if huge is None:
        print(f'SKIP dpdk-dumpcap attach: roced runs with --no-huge here, and a DPDK 22.11 '
              f'secondary process cannot attach to such a primary; {why}')
        return
    prefix = f'rocedp-it-huge-{os.getpid()}'
    m = os.path.join(tmp, 'huge-memif.sock')
    p = Pair(build, start=False)
    try:
        # Daemon() puts --no-huge first; this one is started by hand with hugepages.
        a = Daemon.__new__(Daemon)
        a.build, a.name = build, 'huge'
        a.sock, a.log = os.path.join(tmp, 'huge.sock'), os.path.join(tmp, 'huge.log')
        a.proc = subprocess.Popen(
            # -m: its memory taken at startup, not page by page under a request's timeout.
            [os.path.join(build, 'app/roced/roced'), '--huge-dir', huge, '-m', '256', '--no-pci',
             f'--file-prefix={prefix}', '-l', '0,1',
             f'--vdev=net_memif0,role=server,socket={m},bsize=8192', '--', '--socket', a.sock,
             '--idle-sleep', '50', '--port', 'net_memif0', '--ip',
             '10.0.1.1/24', '--mtu', '9000'],
            stdout=open(a.log, 'w'), stderr=subprocess.STDOUT, process_group=0)
        p.daemons.append(a)
        a.wait_ready()
        b = p.start('hugepeer', ['-l', '0,1', f'--vdev=net_memif0,role=client,socket={m},'
                                 'bsize=8192'],
                    ['--port', 'net_memif0', '--ip', '10.0.1.2/24', '--mtu', '9000'])
        b.wait_ready()
        p.a, p.b = a, b
        p.wait_link()
        out = os.path.join(tmp, 'dumpcap.pcapng')
        dc = subprocess.Popen(['dpdk-dumpcap', f'--file-prefix={prefix}', '-i', 'net_memif0',
                               '-w', out, '-c', '40', '-q'], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
        # Attached once it has written the file's header.
        end = time.time() + 15
        while time.time() < end and dc.poll() is None and not os.path.exists(out):
            time.sleep(0.1)
        time.sleep(0.5)
        ma, mb = a.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr'], b.ctl('mr', 'reg', 1 << 20,
                                                                   MR_ALL)['mr']
        qa, _ = connect(a, b, mtu=MTU)
        a.ctl('job', 'start', qa['qpn'], 'op=write', f"lkey={ma['lkey']}", f'length={WSIZE}',
              f'count={WRITES}', f"remote_addr={mb['iova']}", f"rkey={mb['rkey']}")
        wait_job(a, qa['qpn'])
        try:
            msg, _ = dc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(dc.pid, signal.SIGINT)
            msg, _ = dc.communicate(timeout=10)
        t(dc.returncode == 0, f'dpdk-dumpcap: exit {dc.returncode}: {msg[-500:]}')
        ops = dec.dump_fields(out) if os.path.exists(out) else {}
        rows = dec.tshark_rows(out) if os.path.exists(out) else []
        cnt = opcode_counts(ops)
        t(dec.dump_frames(out) >= 40 and len(rows) == dec.dump_frames(out) and
          cnt.get(6, 0) >= 10, f'dpdk-dumpcap file: {dec.dump_frames(out)} frames, {cnt}')
        print(f'dpdk-dumpcap attached to a roced with hugepages: {len(rows)} frames, {cnt}')
    except Failure as e:
        t(False, f'dpdk-dumpcap attach: {e}')
        for d in p.daemons:
            print(f'--- {d.name} log ---\n{d.tail()}')
    finally:
        for d in p.daemons:
            d.stop()
        shutil.rmtree(f'/var/run/dpdk/{prefix}', ignore_errors=True)


def main():
    build = sys.argv[1]
    tshark = shutil.which('tshark')
    if tshark is None or shutil.which('dpdk-dumpcap') is None:
        print('SKIP: tshark or dpdk-dumpcap missing (scripts/install-deps.sh installs them)')
        return 77
    t = Checks('capture')
    dec = Decoders(build, tshark)
    tmp = tempfile.mkdtemp(prefix='rocedp-capture-')
    try:
        with Pair(build) as p:
            a, b = p.a, p.b
            ma = a.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr']
            mb = b.ctl('mr', 'reg', 1 << 20, MR_ALL)['mr']
            rc = connect(a, b, mtu=MTU)
            sr = connect(a, b, mtu=MTU, sr='true')
            refusals(t, a, tmp)
            written = lossless(t, dec, p, tmp, rc, sr, ma, mb)
            count_and_snaplen(t, dec, p, tmp, rc, sr, ma, mb)
            sr_loss(t, dec, p, tmp, ma, mb)
            c = a.ctl('counters')['counters']
            t(c.get('CAPTURE_WRITTEN', 0) > written and c.get('CAPTURE_DROP_RING') == 0,
              f"daemon counters: CAPTURE_WRITTEN {c.get('CAPTURE_WRITTEN')}")
            a.ctl('counters', 'clear')
            c = a.ctl('counters')['counters']
            t(c.get('CAPTURE_WRITTEN') == 0 and c.get('CAPTURE_SEEN') == 0,
              f"after counters clear: CAPTURE_WRITTEN {c.get('CAPTURE_WRITTEN')}")
            dumpcap_no_huge(t, p)
        dumpcap_attach(t, build, dec, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        # The EAL runtime directories of this test's daemons (rocedp_it's file prefixes).
        for name in ('a', 'b', 'hugepeer'):
            shutil.rmtree(f'/var/run/dpdk/rocedp-it-{name}-{os.getpid()}', ignore_errors=True)
    return t.done()


if __name__ == '__main__':
    sys.exit(main())
