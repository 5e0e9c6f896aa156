#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ground truth for one capture: what rocedump decodes must be what tshark decodes.

usage: check_capture.py ROCEDUMP TSHARK ICRC_CHECK FILE.pcap
       check_capture.py ROCEDUMP TSHARK ICRC_CHECK --generate GEN_SYNTHETIC
         (checks the capture GEN_SYNTHETIC OUT.pcap writes)

- rocedump --fields (the default classifier, one segment per frame) and rocedump --fields
  --impl scalar --seg 128 (headers in the first segment, payload and ICRC spread over
  segments) must both print exactly what tshark prints for the same fields, for every frame
  sent to UDP port 4791; the payload length column is checked against udp.length minus the
  headers the opcode carries (an IBA table written here, independent of lib/wire's), the pad
  and the ICRC. A frame the classifier rejects is missing from rocedump's output, so the diff
  catches it too.
- with --verify, rocedump also insists that every UDP/4791 frame classifies as ROCE, i.e. that
  our ICRC matches the stored one;
- icrc-check.py (../shared/rxe-vm, a zlib implementation independent of ours) agrees the
  stored ICRCs are right, which closes the loop: ours equals an independent computation.
"""
import os
import subprocess
import sys
import tempfile

TSHARK_FIELDS = [
	'frame.number',
	'infiniband.bth.opcode', 'infiniband.bth.destqp', 'infiniband.bth.psn',
	'infiniband.bth.a', 'infiniband.bth.padcnt', 'infiniband.bth.se', 'infiniband.bth.m',
	'infiniband.bth.p_key',
	'infiniband.reth.va', 'infiniband.reth.r_key', 'infiniband.reth.dmalen',
	'infiniband.atomiceth.swapdt', 'infiniband.atomiceth.cmpdt',
	'infiniband.aeth.syndrome', 'infiniband.aeth.msn',
	'infiniband.atomicacketh.origremdt', 'infiniband.immdt', 'infiniband.ieth',
	'infiniband.deth.q_key', 'infiniband.deth.srcqp',
	'infiniband.invariant.crc', 'udp.length',
	# Not compared; tshark 4.0 does not know the CNP (opcode 129) and shows the 16 reserved
	# bytes and the ICRC as vendor data, where the ICRC is taken from instead.
	'infiniband.vendor',
]
PADCNT = TSHARK_FIELDS.index('infiniband.bth.padcnt')
CRC = TSHARK_FIELDS.index('infiniband.invariant.crc')
OPCODE_CNP = 0x81

# Extension header bytes after the BTH, by operation (IBA vol. 1 table 38 and 9.3): RETH 16,
# AETH 4, AtomicETH 28, AtomicAckETH 8, ImmDt 4, IETH 4, DETH 8.
RC_UC_EXT = {
	0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,        # SEND
	0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0A: 16, 0x0B: 20,     # RDMA WRITE
	0x0C: 16, 0x0D: 4, 0x0E: 0, 0x0F: 4, 0x10: 4,               # READ request, responses
	0x11: 4, 0x12: 12, 0x13: 28, 0x14: 28,                      # ACK, atomic
	0x16: 4, 0x17: 4,                                           # SEND with invalidate
}
EXT_LEN = {op: n for op, n in RC_UC_EXT.items()}
EXT_LEN.update({0x20 | op: n for op, n in RC_UC_EXT.items() if op <= 0x0B})
EXT_LEN.update({0x64: 8, 0x65: 12, 0x81: 16})                   # UD SEND, CNP
BTH_LEN, UDP_LEN, ICRC_LEN = 12, 8, 4


def run(cmd):
	return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc):
	out, err = proc.communicate()
	return proc.returncode, out, err


def once(value):
	"""tshark 4.0 adds ImmDt and IETH twice ('deadbeef,deadbeef'): keep one of equal values."""
	parts = value.split(',')
	return parts[0] if len(set(parts)) == 1 else value


def expected(tshark_out):
	"""tshark's lines, with udp.length turned into the payload length."""
	lines = []
	for line in tshark_out.splitlines():
		cols = [once(c) for c in line.split('\t')]
		vendor = cols.pop()
		opcode, udp_len = int(cols[1]), int(cols[-1])
		if opcode == OPCODE_CNP and cols[CRC] == '' and len(vendor) >= 8:
			cols[CRC] = '0x' + vendor[-8:]
		ext = EXT_LEN.get(opcode)
		if ext is None:
			cols[-1] = f'unknown-opcode-{opcode}'
		else:
			hdrs = UDP_LEN + BTH_LEN + ext + int(cols[PADCNT]) + ICRC_LEN
			cols[-1] = str(udp_len - hdrs)
		lines.append('\t'.join(cols))
	return lines


def compare(name, want, got):
	if want == got:
		return True
	print(f'FAIL {name}: output differs from tshark ({len(want)} vs {len(got)} lines)')
	print('columns: ' + ' '.join(TSHARK_FIELDS[:-2]) + ' payload-length')
	shown = 0
	for i in range(max(len(want), len(got))):
		w = want[i] if i < len(want) else '(none)'
		g = got[i] if i < len(got) else '(none)'
		if w != g and shown < 10:
			print(f'  tshark:   {w}\n  rocedump: {g}')
			shown += 1
	return False


def main():
	rocedump, tshark, icrc_check = sys.argv[1:4]
	if sys.argv[4] == '--generate':
		tmp = tempfile.TemporaryDirectory()
		pcap = os.path.join(tmp.name, 'synthetic.pcap')
		gen = subprocess.run([sys.argv[5], pcap], capture_output=True, text=True)
		if gen.returncode != 0:
			print(f'FAIL {sys.argv[5]}: exit status {gen.returncode}')
			print(gen.stdout + gen.stderr)
			return 1
		print(gen.stdout.strip())
	else:
		pcap = sys.argv[4]
	tshark_cmd = [
		tshark, '-n', '-r', pcap, '-d', 'udp.port==4791,infiniband',
		'--disable-protocol', 'rpcordma', '-Y', 'udp.dstport==4791 && !icmp && !icmpv6',
		'-T', 'fields', '-E', 'separator=/t']
	for f in TSHARK_FIELDS:
		tshark_cmd += ['-e', f]
	# Everything at once: most of each run is EAL and tshark start-up.
	seg = ['--impl', 'scalar', '--seg', '128']
	procs = {
		'tshark': run(tshark_cmd),
		'rocedump --fields --verify': run([rocedump, '--fields', '--verify', pcap]),
		'rocedump --fields --verify ' + ' '.join(seg):
			run([rocedump, '--fields', '--verify'] + seg + [pcap]),
		'icrc-check.py': run(['/usr/bin/python3', icrc_check, pcap]),
	}
	res = {name: finish(p) for name, p in procs.items()}
	ok = True
	for name, (rc, out, err) in res.items():
		if rc != 0:
			print(f'FAIL {name}: exit status {rc}\n{out[-2000:]}{err[-2000:]}')
			ok = False
	if not ok:
		return 1
	want = expected(res['tshark'][1])
	if not want:
		print(f'FAIL tshark found no UDP/4791 frame in {pcap}')
		return 1
	for name in (n for n in procs if n.startswith('rocedump')):
		ok = compare(name, want, res[name][1].splitlines()) and ok
		print(f'{name}: {res[name][2].strip()}')
	checked = res['icrc-check.py'][1].strip()
	print(checked)
	if f': {len(want)} ICRC ok, 0 bad' not in checked:
		print(f'FAIL icrc-check.py did not check the same {len(want)} frames')
		ok = False
	if ok:
		print(f'{len(want)} RoCE frames decode as tshark decodes them')
	return 0 if ok else 1


if __name__ == '__main__':
	sys.exit(main())
