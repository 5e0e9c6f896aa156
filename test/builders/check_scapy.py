#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the lib/wire builders with scapy's RoCE decoder (scapy.contrib.roce).

Runs gen_frames into a temporary directory, decodes every frame with scapy and compares the
fields with the values gen_frames says it built.

scapy 2.5 decodes the BTH on UDP 4791, the AETH of RC ACKs and the CNP padding; everything
else after the BTH (RETH, AtomicETH, AtomicAckETH, ImmDt, IETH, DETH, the AETH of READ
responses and atomic ACKs) is read here from the bytes scapy leaves as payload, following IBA
table 38. The ICRC is recomputed by scapy's own BTH.compute_icrc() for IPv4; scapy has none
for IPv6 (it returns 0), so there it is the CRC-32 of a pseudo-packet built with scapy with the
variant fields set to ones (annex A17.3.3).

Usage: check_scapy.py GEN_FRAMES
Exit status: 0 when every frame matches, 1 on a mismatch, 77 (skipped) without scapy.
"""

import json
import logging
import os
import struct
import subprocess
import sys
import tempfile
import zlib

try:
	from scapy.all import IP, UDP, Dot1Q, Ether, IPv6, raw, rdpcap
	from scapy.contrib.roce import AETH, BTH, CNPPadding
	from scapy.utils import checksum
	import scapy.config
except ImportError as e:
	print(f"check_scapy: scapy unavailable ({e}): skipped")
	sys.exit(77)

scapy.config.conf.verb = 0
# compute_icrc() warns on every IPv6 frame; that gap is known and handled below.
logging.getLogger('scapy.runtime').setLevel(logging.ERROR)

# Extension headers after the BTH, in wire order (IBA vol. 1 table 38; CNP: annex A17.9.3).
HDR_LEN = {'deth': 8, 'reth': 16, 'atmeth': 28, 'aeth': 4, 'atmack': 8, 'imm': 4, 'ieth': 4,
	'cnp': 16}
RC_OPS = {
	0x00: [], 0x01: [], 0x02: [], 0x03: ['imm'], 0x04: [], 0x05: ['imm'],
	0x06: ['reth'], 0x07: [], 0x08: [], 0x09: ['imm'], 0x0a: ['reth'], 0x0b: ['reth', 'imm'],
	0x0c: ['reth'], 0x0d: ['aeth'], 0x0e: [], 0x0f: ['aeth'], 0x10: ['aeth'], 0x11: ['aeth'],
	0x12: ['aeth', 'atmack'], 0x13: ['atmeth'], 0x14: ['atmeth'], 0x16: ['ieth'],
	0x17: ['ieth'],
}
OPS = dict(RC_OPS)
OPS.update({0x20 | op: RC_OPS[op] for op in range(0x0c)})
OPS.update({0x64: ['deth'], 0x65: ['deth', 'imm'], 0x81: ['cnp']})


def u32(b, off):
	return struct.unpack_from('!I', b, off)[0]


def u64(b, off):
	return struct.unpack_from('!Q', b, off)[0]


# Each header's fields as gen_frames names them in its JSON.
PARSERS = {
	'deth': lambda b: {'qkey': u32(b, 0), 'src_qp': u32(b, 4) & 0xffffff, 'resv': b[4]},
	'reth': lambda b: {'va': u64(b, 0), 'rkey': u32(b, 8), 'len': u32(b, 12)},
	'atmeth': lambda b: {'va': u64(b, 0), 'rkey': u32(b, 8), 'swap_add': u64(b, 12),
		'compare': u64(b, 20)},
	'aeth': lambda b: {'syndrome': b[0], 'msn': u32(b, 0) & 0xffffff},
	'atmack': lambda b: {'orig': u64(b, 0)},
	'imm': lambda b: u32(b, 0),
	'ieth': lambda b: u32(b, 0),
	'cnp': lambda b: 1 if b == bytes(16) else 0,
}


class Checker:
	def __init__(self):
		self.checks = 0
		self.errors = []
		self.frame = 0

	def eq(self, what, got, want):
		self.checks += 1
		if got != want:
			self.errors.append(
				f"frame {self.frame}: {what}: scapy {got!r}, built {want!r}")

	def l2(self, pkt, e):
		self.eq('ether dst', pkt[Ether].dst, '02:00:00:00:00:02')
		self.eq('ether src', pkt[Ether].src, '02:00:00:00:00:01')
		self.eq('vlan tag', Dot1Q in pkt, bool(e['vlan']))
		if Dot1Q in pkt:
			tag = pkt[Dot1Q]
			self.eq('vlan tci', tag.prio << 13 | tag.id << 12 | tag.vlan, e['vlan_tci'])

	def l3(self, pkt, e, l3_len):
		tos = e['dscp'] << 2 | e['ecn']
		if e['ipv6']:
			ip = pkt[IPv6]
			self.eq('ipv6 header', (ip.version, ip.tc, ip.fl, ip.plen, ip.nh, ip.hlim),
				(6, tos, e['flow_label'], l3_len - 40, 17, e['ttl']))
			self.eq('ipv6 addresses', (ip.src, ip.dst), (e['src_ip'], e['dst_ip']))
			return
		ip = pkt[IP]
		self.eq('ipv4 header', (ip.version, ip.ihl, ip.tos, ip.len, str(ip.flags), ip.frag,
			ip.ttl, ip.proto), (4, 5, tos, l3_len, 'DF', 0, e['ttl'], 17))
		self.eq('ipv4 addresses', (ip.src, ip.dst), (e['src_ip'], e['dst_ip']))
		self.eq('ipv4 checksum verifies', checksum(raw(ip)[:20]), 0)

	def bth(self, pkt, e):
		b = pkt[BTH]
		self.eq('bth', (b.opcode, b.solicited, b.migreq, b.padcount, b.version, b.pkey,
			b.fecn, b.becn, b.resv6, b.dqpn, b.ackreq, b.resv7, b.psn),
			(e['opcode'], e['se'], e['migreq'], e['pad'], 0, e['pkey'], e['fecn'],
			e['becn'], 0, e['qpn'], e['ackreq'], 0, e['psn']))
		# scapy reads the ICRC big-endian; it goes on the wire least significant byte first.
		self.eq('icrc bytes', struct.pack('!I', b.icrc), struct.pack('<I', e['icrc']))

	def extension_headers(self, pkt, e):
		"""What scapy decodes itself, then the rest from the bytes after the BTH."""
		if e['opcode'] == 0x11:
			self.eq('AETH (scapy)', (pkt[AETH].syndrome, pkt[AETH].msn),
				(e['aeth']['syndrome'], e['aeth']['msn']))
		if e['opcode'] == 0x81:
			pad = pkt[CNPPadding]
			self.eq('CNP padding (scapy)', (pad.reserved1, pad.reserved2), (0, 0))
		after = raw(pkt[BTH].payload)
		off = 0
		for h in OPS[e['opcode']]:
			got = PARSERS[h](after[off:off + HDR_LEN[h]])
			off += HDR_LEN[h]
			if h == 'deth':
				self.eq('DETH reserved byte', got.pop('resv'), 0)
			self.eq(h, got, e[h])
		pad = e['pad']
		self.eq('payload', after[off:len(after) - pad].hex(), e['payload'])
		self.eq('pad bytes', after[len(after) - pad:], bytes(pad))
		for h in set(HDR_LEN) - set(OPS[e['opcode']]):
			self.eq(f'no {h} expected', h in e, False)

	def icrc(self, pkt, e):
		scapy_icrc = pkt[BTH].compute_icrc(None)
		if e['ipv6']:
			# scapy 2.5 has no IPv6 ICRC; should a later one have it, check it too.
			if scapy_icrc != bytes(4):
				self.eq('ICRC (scapy, IPv6)', struct.unpack('<I', scapy_icrc)[0],
					e['icrc'])
		else:
			self.eq('ICRC (scapy)', struct.unpack('<I', scapy_icrc)[0], e['icrc'])
		self.eq('ICRC (masked pseudo-packet)', masked_icrc(pkt, e['ipv6']), e['icrc'])

	def frame_ok(self, pkt, e):
		self.frame = e['frame']
		data = raw(pkt)
		self.eq('frame length', len(data), e['frame_len'])
		l3 = 18 if e['vlan'] else 14
		self.l2(pkt, e)
		self.l3(pkt, e, len(data) - l3)
		udp = pkt[UDP]
		self.eq('udp', (udp.sport, udp.dport, udp.len, udp.chksum),
			(e['sport'], 4791, len(data) - l3 - (40 if e['ipv6'] else 20), 0))
		if BTH not in pkt:
			self.eq('BTH decoded', False, True)
			return
		self.bth(pkt, e)
		self.extension_headers(pkt, e)
		self.icrc(pkt, e)


def masked_icrc(pkt, ipv6):
	"""CRC-32 of 8 bytes of ones and the IP packet with its variant fields set to ones."""
	ip = (pkt[IPv6] if ipv6 else pkt[IP]).copy()
	if ipv6:
		ip.tc, ip.fl, ip.hlim = 0xff, 0xfffff, 0xff
	else:
		ip.tos, ip.ttl, ip.chksum = 0xff, 0xff, 0xffff
	ip[UDP].chksum = 0xffff
	ip[BTH].fecn, ip[BTH].becn, ip[BTH].resv6 = 1, 1, 0x3f
	return zlib.crc32(b'\xff' * 8 + raw(ip)[:-4]) & 0xffffffff


def main():
	if len(sys.argv) != 2:
		print(__doc__)
		return 2
	with tempfile.TemporaryDirectory(prefix='roce-builders-') as tmp:
		pcap = os.path.join(tmp, 'frames.pcap')
		jsonl = os.path.join(tmp, 'frames.jsonl')
		subprocess.run([sys.argv[1], pcap, jsonl], check=True, stdout=subprocess.DEVNULL)
		pkts = rdpcap(pcap)
		with open(jsonl) as f:
			expected = [json.loads(line) for line in f]
	c = Checker()
	c.eq('number of frames', len(pkts), len(expected))
	opcodes = set()
	for pkt, e in zip(pkts, expected):
		c.frame_ok(pkt, e)
		opcodes.add(e['opcode'])
	c.eq('opcodes covered', sorted(opcodes), sorted(OPS))
	for err in c.errors[:50]:
		print(err)
	print(f"check_scapy: {len(expected)} frames, {len(opcodes)} opcodes, {c.checks} checks, "
		f"{len(c.errors)} failed")
	return 1 if c.errors else 0


if __name__ == '__main__':
	sys.exit(main())
