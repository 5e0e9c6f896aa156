#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the lib/wire builders with tshark's InfiniBand dissector.

Runs gen_frames into a temporary directory and decodes the pcap with
	tshark -r F -d udp.port==4791,infiniband --disable-protocol rpcordma
No frame may be malformed or carry an expert item of warning or error severity, and every
header field tshark shows must have the value gen_frames built.

One expert error is known and tolerated, and counted in the output: tshark calls a zero UDP
checksum over IPv6 illegal (RFC 8200 allows it only for tunnels, RFC 6936), and the builders
write zero, as Linux rxe does for IPv4 and IPv6 alike (the ICRC protects the packet).
Wireshark 4.0 does not know the CNP opcode (0x81): it shows the 16 reserved bytes and the ICRC
as vendor data, which is checked as such.

Usage: check_tshark.py GEN_FRAMES
Exit status: 0 when every frame matches, 1 on a mismatch, 77 (skipped) without tshark.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

TSHARK = ['tshark', '-d', 'udp.port==4791,infiniband', '--disable-protocol', 'rpcordma']
FIELDS = [
	'frame.number', 'frame.len', '_ws.malformed', '_ws.expert.severity', '_ws.expert.message',
	'vlan.id', 'vlan.priority', 'ip.dsfield.dscp', 'ip.dsfield.ecn', 'ip.ttl',
	'ipv6.tclass.dscp', 'ipv6.tclass.ecn', 'ipv6.flow', 'ipv6.hlim',
	'udp.srcport', 'udp.dstport', 'udp.length',
	'infiniband.bth.opcode', 'infiniband.bth.se', 'infiniband.bth.m', 'infiniband.bth.padcnt',
	'infiniband.bth.tver', 'infiniband.bth.p_key', 'infiniband.bth.destqp',
	'infiniband.bth.a', 'infiniband.bth.psn', 'infiniband.reserved',
	'infiniband.reth.va', 'infiniband.reth.r_key', 'infiniband.reth.dmalen',
	'infiniband.atomiceth.swapdt', 'infiniband.atomiceth.cmpdt',
	'infiniband.aeth.syndrome', 'infiniband.aeth.msn', 'infiniband.atomicacketh.origremdt',
	'infiniband.immdt', 'infiniband.ieth', 'infiniband.deth.q_key', 'infiniband.deth.srcqp',
	'infiniband.invariant.crc', 'infiniband.vendor',
]
# tshark BTH field -> gen_frames JSON key.
BTH_FIELDS = (('opcode', 'opcode'), ('se', 'se'), ('m', 'migreq'), ('padcnt', 'pad'),
	('p_key', 'pkey'), ('destqp', 'qpn'), ('a', 'ackreq'), ('psn', 'psn'))
PI_WARN = 0x00600000
UDP6_ZERO_CSUM = 'Illegal checksum value (0)'


def bswap32(v):
	return int.from_bytes(v.to_bytes(4, 'little'), 'big')


def decode(pcap):
	"""One dict per frame: field name -> list of its values."""
	args = TSHARK + ['-r', pcap, '-T', 'fields', '-E', 'separator=/t', '-E', 'occurrence=a',
		'-E', 'aggregator=|']
	for f in FIELDS:
		args += ['-e', f]
	out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
	frames = []
	for line in out.splitlines():
		cols = line.split('\t')
		frames.append({f: [v for v in c.split('|') if v] for f, c in zip(FIELDS, cols)})
	return frames


class Checker:
	def __init__(self):
		self.checks = 0
		self.errors = []
		self.frame = 0
		self.udp6_zero = 0

	def eq(self, what, got, want):
		self.checks += 1
		if got != want:
			self.errors.append(
				f"frame {self.frame}: {what}: tshark {got!r}, built {want!r}")

	def num(self, d, field, want, what=None):
		vals = d.get(field, [])
		self.eq(what or field, int(vals[0], 0) if vals else None, want)

	def expert(self, d, e):
		self.eq('malformed', d['_ws.malformed'], [])
		for sev, msg in zip(d['_ws.expert.severity'], d['_ws.expert.message']):
			if int(sev, 0) < PI_WARN:
				continue
			if e['ipv6'] and msg == UDP6_ZERO_CSUM:
				self.udp6_zero += 1
				continue
			self.eq('expert item', msg, None)

	def l2_l3(self, d, e, tos):
		if e['vlan']:
			self.num(d, 'vlan.id', e['vlan_tci'] & 0xfff)
			self.num(d, 'vlan.priority', e['vlan_tci'] >> 13)
		else:
			self.eq('vlan', d['vlan.id'], [])
		if e['ipv6']:
			self.num(d, 'ipv6.tclass.dscp', tos >> 2)
			self.num(d, 'ipv6.tclass.ecn', tos & 3)
			self.num(d, 'ipv6.flow', e['flow_label'])
			self.num(d, 'ipv6.hlim', e['ttl'])
		else:
			self.num(d, 'ip.dsfield.dscp', tos >> 2)
			self.num(d, 'ip.dsfield.ecn', tos & 3)
			self.num(d, 'ip.ttl', e['ttl'])
		l4 = (18 if e['vlan'] else 14) + (40 if e['ipv6'] else 20)
		self.num(d, 'udp.srcport', e['sport'])
		self.num(d, 'udp.dstport', 4791)
		self.num(d, 'udp.length', e['frame_len'] - l4)

	def bth(self, d, e):
		for field, key in BTH_FIELDS:
			self.num(d, 'infiniband.bth.' + field, e[key])
		self.num(d, 'infiniband.bth.tver', 0)
		# The byte after the P_Key: FECN, BECN, then six reserved bits.
		got = d['infiniband.reserved']
		self.eq('BTH FECN/BECN byte', got[0] if got else None,
			f"{e['fecn'] << 7 | e['becn'] << 6:02x}")

	def ext(self, d, e):
		if 'reth' in e or 'atmeth' in e:
			h = e.get('reth', e.get('atmeth'))
			self.num(d, 'infiniband.reth.va', h['va'])
			self.num(d, 'infiniband.reth.r_key', h['rkey'])
		if 'reth' in e:
			self.num(d, 'infiniband.reth.dmalen', e['reth']['len'])
		if 'atmeth' in e:
			self.num(d, 'infiniband.atomiceth.swapdt', e['atmeth']['swap_add'])
			self.num(d, 'infiniband.atomiceth.cmpdt', e['atmeth']['compare'])
		if 'aeth' in e:
			self.num(d, 'infiniband.aeth.syndrome', e['aeth']['syndrome'])
			self.num(d, 'infiniband.aeth.msn', e['aeth']['msn'])
		if 'atmack' in e:
			self.num(d, 'infiniband.atomicacketh.origremdt', e['atmack']['orig'])
		for field, key in (('immdt', 'imm'), ('ieth', 'ieth')):
			got = d['infiniband.' + field]
			want = f"{e[key]:08x}" if key in e else None
			self.eq(field, got[0] if got else None, want)
		if 'deth' in e:
			self.num(d, 'infiniband.deth.q_key', e['deth']['qkey'])
			self.num(d, 'infiniband.deth.srcqp', e['deth']['src_qp'])

	def frame_ok(self, d, e):
		self.frame = e['frame']
		self.num(d, 'frame.number', e['frame'])
		self.num(d, 'frame.len', e['frame_len'])
		self.expert(d, e)
		self.l2_l3(d, e, e['dscp'] << 2 | e['ecn'])
		self.bth(d, e)
		self.ext(d, e)
		if 'cnp' in e:
			icrc = e['icrc'].to_bytes(4, 'little').hex()
			vendor = d['infiniband.vendor']
			self.eq('CNP body and ICRC', vendor[-1] if vendor else None,
				'00' * 16 + icrc)
		else:
			# tshark shows the ICRC bytes as a big-endian number.
			self.num(d, 'infiniband.invariant.crc', bswap32(e['icrc']), 'ICRC')


def main():
	if len(sys.argv) != 2:
		print(__doc__)
		return 2
	if shutil.which('tshark') is None:
		print('check_tshark: tshark not found: skipped')
		return 77
	with tempfile.TemporaryDirectory(prefix='roce-builders-') as tmp:
		pcap = os.path.join(tmp, 'frames.pcap')
		jsonl = os.path.join(tmp, 'frames.jsonl')
		subprocess.run([sys.argv[1], pcap, jsonl], check=True, stdout=subprocess.DEVNULL)
		frames = decode(pcap)
		with open(jsonl) as f:
			expected = [json.loads(line) for line in f]
	c = Checker()
	c.eq('number of frames', len(frames), len(expected))
	for d, e in zip(frames, expected):
		c.frame_ok(d, e)
	for err in c.errors[:50]:
		print(err)
	print(f"check_tshark: {len(expected)} frames, {c.checks} checks, {len(c.errors)} failed; "
		f"tolerated: {c.udp6_zero} IPv6 frames with UDP checksum 0")
	return 1 if c.errors else 0


if __name__ == '__main__':
	sys.exit(main())
