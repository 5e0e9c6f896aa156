#!/usr/bin/python3
"""Interop of rdma-core's rping: stock rping (rdmacm-utils) on Linux Soft-RoCE in a qemu VM
against roced + rocectl rping on the host, both roles, in a VM of its own (test_rxe_perftest.py's
rig and its closing checks: the ICRC of every captured frame, roced's drop counters).

- fwd: `rping -s -a VM -C 100 -V -v` in the VM, `rocectl rping -c -a VM -C 100 -V -v` here;
- rev: `rocectl rping -s -v` here, `rping -c -a ROCED -C 100 -V -v` in the VM;
- the same both ways with -S 8000 (READs and WRITEs of two 4096-byte packets);
- a client to a port nobody listens on, both ways: rxe's CM and ours answer with a REJ and the
  two rpings print the same line and end with the same status;
- rping's and rocectl rping's -S range message.

Each run: both exit 0, the client's 100 `ping data:` lines exactly the text rping makes (-V
compared it on the client), the server's 100 `server ping data:` lines, the server's
`server DISCONNECT EVENT...` / `wait for RDMA_READ_ADV state 10`, the DREQ from the client
and the DREP from the server in the capture, the REQ's responder resources and initiator
depth 1, no drop counter moved.

Skips (exit 77) as test_rxe_perftest.py does.

usage: test_rxe_rping.py [BUILD_DIR]
Environment: as test_rxe_perftest.py.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'integration'))
import test_rxe_perftest as base  # noqa: E402
from test_rping import rping_data  # noqa: E402

# Names and addresses of our own (test_rxe_perftest.py has rdpi, tap-rdpi, 10.99.7.0/24).
base.VM, base.TAP, base.VM_IP, base.HOST_IP, base.ROCED_IP = base.names(
    'rdpr', 'tap-rdpr', '10.99.11')
base.TCP_PORT = 18607          # unused: rping has no TCP side channel (18605: rxe_perftest_rcm)
PORT = 7174                    # rping's default, in a VM of our own
COUNT = 100
DROPS = ('UNKNOWN_QP', 'GSI_NO_CM', 'STATE_DROP', 'TRANSPORT_DROP')


def log(msg):
    print(msg, flush=True)


def rocectl(rig, *args):
    return [os.path.join(rig.build, 'app/rocectl'), '-s', rig.daemon.sock, *map(str, args)]


def vm_listening(rig):
    r = rig.vm('rdma resource show cm_id', timeout=30)
    return r.returncode == 0 and any('LISTEN' in x and f':{PORT}' in x
                                     for x in r.stdout.splitlines())


def host_listening(rig):
    return any(x['port'] == PORT for x in rig.daemon.ctl('cm', 'show')['listeners'])


def drops(delta):
    return {k: v for k, v in delta.items() if v and (k.startswith('DROP_') or k == 'RX_DROP' or
                                                    k in DROPS)}


def cm_mads(rig, since_frame):
    """(src ip, attribute, responder resources, initiator depth) of every CM MAD captured
    after frame @since_frame, and the frame count."""
    r = base.sh('tshark', '-r', rig.pcap, '-d', 'udp.port==4791,infiniband', '-T', 'fields',
                '-e', 'frame.number', '-e', 'ip.src', '-e', 'infiniband.mad.attributeid', '-e',
                'infiniband.cm.req.responderres', '-e', 'infiniband.cm.req.initdepth',
                check=False)
    rows = [x.split('\t') for x in r.stdout.splitlines() if x.strip()]
    last = int(rows[-1][0]) if rows else 0
    out = []
    for x in rows:
        if int(x[0]) > since_frame and len(x) > 2 and x[2]:
            out.append((x[1], int(x[2], 0), x[3] if len(x) > 3 else '', x[4] if len(x) > 4 else ''))
    return out, last


def frames(rig):
    # tcpdump writes with -U: what it wrote so far is readable
    _, last = cm_mads(rig, 1 << 30)
    return last


def vm_rping(args, tag):
    """A shell command running rping in the VM with its stdout, stderr and status in files
    (the agent streams output in pieces that may cut lines, stderr in between)."""
    return f'rping {args} >/tmp/{tag}.out 2>/tmp/{tag}.err; echo $? >/tmp/{tag}.rc'


def vm_result(rig, tag):
    """(status, md5 of stdout, stdout's line count, first 300 bytes of stdout, stderr lines)
    of a vm_rping() run: the data lines go by their digest, not through the agent."""
    r = rig.vm(f'cat /tmp/{tag}.rc; md5sum </tmp/{tag}.out; wc -l </tmp/{tag}.out; '
               f'head -c 300 /tmp/{tag}.out; echo; echo ---; cat /tmp/{tag}.err', timeout=60)
    lines = r.stdout.splitlines()
    try:
        rc, md5, n = int(lines[0]), lines[1].split()[0], int(lines[2])
    except (IndexError, ValueError):
        return -1, '', 0, r.stdout[-300:], []
    sep = lines.index('---') if '---' in lines else len(lines)
    return rc, md5, n, '\n'.join(lines[3:sep])[:300], [x for x in lines[sep + 1:] if x.strip()]


def md5_of(lines):
    return hashlib.md5(''.join(x + '\n' for x in lines).encode()).hexdigest()


def short(x, n=300):
    x = str(x)
    return x if len(x) <= n else x[:n] + f'... ({len(x)} chars)'


def run_case(rig, t, case):
    direction, size = case
    name = f"rping{' -S %d' % size if size != 64 else ''} " + \
        ('(VM server, rocectl client)' if direction == 'fwd' else '(rocectl server, VM client)')
    sz = [] if size == 64 else ['-S', str(size)]
    before = rig.counters()
    f0 = frames(rig)
    t0 = time.time()
    tag = f'rping_{direction}_{size}'
    want = [f'ping data: {rping_data(i, size)}' for i in range(COUNT)]
    swant = ['server ' + x for x in want]
    if direction == 'fwd':
        vp = rig.spawn([rig.script('vm-run.sh'), '-T', '300', base.VM,
                        vm_rping(f"-s -a {base.VM_IP} -C {COUNT} -V -v {' '.join(sz)}", tag)],
                       os.path.join(rig.tmp, f'{tag}.vm.txt'))
        base.wait_until(lambda: vm_listening(rig) or vp.poll() is not None, 60,
                        'rping -s to listen in the VM')
        c = subprocess.run(rocectl(rig, 'rping', '-c', '-a', base.VM_IP, '-C', COUNT, '-V', '-v',
                                   *sz), capture_output=True, text=True, timeout=300)
        base.wait_or_kill(rig, vp, 60)
        src, smd5, sn, shead, serr = vm_result(rig, tag)
        crc = c.returncode
        c_ok = c.stdout.splitlines() == want
        s_ok = smd5 == md5_of(swant) and sn == COUNT
        cerr = c.stderr.splitlines()
        c_show, s_show = c.stdout[:300], shead
    else:
        # to files: a pipe nobody reads while the run goes would stop it at 64 KiB
        so_path, se_path = (os.path.join(rig.tmp, f'{tag}.{x}') for x in ('stdout', 'stderr'))
        sp = subprocess.Popen(rocectl(rig, 'rping', '-s', '-v', *sz), stdout=open(so_path, 'w'),
                              stderr=open(se_path, 'w'), text=True)
        base.wait_until(lambda: host_listening(rig) or sp.poll() is not None, 20,
                        'rocectl rping -s to listen')
        rig.vm(vm_rping(f"-c -a {base.ROCED_IP} -C {COUNT} -V -v {' '.join(sz)}", tag))
        crc, cmd5, cn, chead, cerr = vm_result(rig, tag)
        try:
            sp.wait(60)
        except subprocess.TimeoutExpired:
            sp.kill()
            sp.wait()
        src = sp.returncode
        sout, serr_text = open(so_path).read(), open(se_path).read()
        serr = serr_text.splitlines()
        c_ok = cmd5 == md5_of(want) and cn == COUNT
        s_ok = sout.splitlines() == swant
        c_show, s_show = chead, sout[:300]
    secs = time.time() - t0
    after = rig.counters()
    delta = {k: after[k] - before.get(k, 0) for k in after if isinstance(after[k], int)}
    with open(os.path.join(rig.tmp, f'{tag}.out.txt'), 'w') as f:
        f.write(f'server {src}: {s_show}\n{serr}\nclient {crc}: {c_show}\n{cerr}\n')

    t(src == 0, f'{name}: server exit 0: {src}: {short(serr)}')
    t(crc == 0, f'{name}: client exit 0: {crc}: {short(cerr)}')
    t(c_ok, f"{name}: the client's {COUNT} lines are rping's text, in order: {short(c_show)}")
    t(s_ok, f"{name}: the server's {COUNT} lines: {short(s_show)}")
    t(not any('mismatch' in x or 'failed' in x for x in cerr + serr),
      f'{name}: no data mismatch, nothing failed: {short(cerr + serr)}')
    t(serr == ['server DISCONNECT EVENT...', 'wait for RDMA_READ_ADV state 10'],
      f"{name}: the server ends as rping's: {short(serr)}")
    # rping's client prints the DISCONNECTED its DREP brings if its CM thread sees it before
    # rdma_destroy_id() (mostly: not always); ours waits for it
    t(cerr == ['client DISCONNECT EVENT...'] or (direction == 'rev' and cerr == []),
      f"{name}: the client's stderr: {short(cerr)}")
    # tcpdump's ring hands frames over with some delay: wait for the DREP to be written
    end = time.time() + 10
    mads, _ = cm_mads(rig, f0)
    while len(mads) < 5 and time.time() < end:
        time.sleep(0.5)
        mads, _ = cm_mads(rig, f0)
    client_ip = base.ROCED_IP if direction == 'fwd' else base.VM_IP
    server_ip = base.VM_IP if direction == 'fwd' else base.ROCED_IP
    seq = [(ip, a) for ip, a, _, _ in mads]
    t(seq == [(client_ip, 0x10), (server_ip, 0x13), (client_ip, 0x14), (client_ip, 0x15),
              (server_ip, 0x16)],
      f'{name}: REQ, REP, RTU from the client, DREQ from the client, DREP from the server: '
      f'{seq}')
    req = [m for m in mads if m[1] == 0x10]
    t(len(req) == 1 and int(req[0][2], 0) == 1 and int(req[0][3], 0) == 1,
      f"{name}: the REQ's responder resources and initiator depth are rping's 1: {req}")
    d = drops(delta)
    t(not d, f'{name}: roced dropped nothing: {d}')
    left = roced_leftovers(rig)
    t(not left, f'{name}: roced holds nothing of it after time wait: {short(left)}')
    log(f"interop: {name}: {'ok' if src == 0 and crc == 0 and c_ok and s_ok else 'FAILED'} "
        f"in {secs:.1f} s")
    return {'name': name, 'secs': secs, 'p': None, 'r': None, 'delta': delta, 'lat': False,
            'verify': 'ok' if c_ok and s_ok else 'FAILED'}


def roced_leftovers(rig, timeout=30):
    end = time.time() + timeout
    while True:
        s = rig.daemon.ctl('cm', 'show')
        x = {k: v for k, v in (('conns', s['conns']), ('orphans', s['orphans']),
                               ('listeners', s['listeners']),
                               ('qps', rig.daemon.ctl('qp', 'show')['qps']),
                               ('mrs', rig.daemon.ctl('mr', 'show')['mrs'])) if v}
        if not x or time.time() > end:
            return x
        time.sleep(0.5)


def extra_checks(rig, t):
    """The refusals, compared with stock rping's."""
    rig.vm(vm_rping(f'-c -a {base.ROCED_IP} -p 9999 -C 1', 'rej'), timeout=120)
    vrc, _, _, _, verr = vm_result(rig, 'rej')
    c = subprocess.run(rocectl(rig, 'rping', '-c', '-a', base.VM_IP, '-p', 9999, '-C', 1),
                       capture_output=True, text=True, timeout=120)
    line = 'cma event RDMA_CM_EVENT_REJECTED, error 8'
    t(line in verr and vrc == 255,
      f"stock rping to roced's port nobody listens on: REJ 8, status 255: {vrc} {verr}")
    # rping's CM thread exit()s on the REJ while its main thread, woken by the same event,
    # prints two more lines: stock rping prints them or not, a race; ours always does
    ours = c.stderr.splitlines()
    t(ours == [line, 'wait for CONNECTED state 4', 'connect error -1'] and verr and
      ours[:len(verr)] == verr and c.returncode == 255,
      f"rocectl rping to rxe's port nobody listens on: rping's lines and status: "
      f"{c.returncode} {c.stderr!r}")
    log(f'interop: REJ: rping says {verr}, status {vrc}; rocectl rping says '
        f'{c.stderr.splitlines()}, status {c.returncode}')
    rig.vm(vm_rping('-s -S 1', 'size'), timeout=60)
    vrc, _, _, vhead, verr = vm_result(rig, 'size')
    c = subprocess.run(rocectl(rig, 'rping', '-s', '-S', 1), capture_output=True, text=True,
                       timeout=30)
    vline = [x for x in verr + vhead.splitlines() if x.startswith('Invalid size')]
    cline = [x for x in c.stderr.splitlines() if x.startswith('Invalid size')]
    t(vline and vline == cline and vrc == 22 and c.returncode == 22,
      f'-S 1: the same message and status 22: rping {vline} {vrc}, rocectl {cline} '
      f'{c.returncode}')
    left = roced_leftovers(rig)
    t(not left, f'nothing left after the refusals: {short(left)}')


CASES = [('fwd', 64), ('rev', 64), ('fwd', 8000), ('rev', 8000)]
_main_cases = []


def run_case_all(rig, t, case):
    row = run_case(rig, t, case)
    _main_cases.append(case)
    if len(_main_cases) == len(CASES):
        extra_checks(rig, t)
    return row


if __name__ == '__main__':
    if shutil.which('tshark') is None:
        base.skip('tshark missing on the host (scripts/install-deps.sh installs it)')
    base.run_case = run_case_all
    base.CASES = CASES
    sys.exit(base.main())
