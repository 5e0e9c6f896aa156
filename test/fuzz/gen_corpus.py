#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Make the seed corpora of the fuzz targets (corpus/<target>/), a few dozen small files.

fuzz_classify: one byte choosing the mbuf layout and one asking for checksums to be made right
(see fuzz_classify.c), then a frame: the first
frame of each opcode in the shared rxe captures, the builders' frames over IPv6 and VLAN from
test/builders/gen_frames, and a few frames that are not RoCE.
fuzz_pcap: small pcap files cut from a shared capture in each byte order and timestamp
resolution, and damaged ones (truncated, oversized record, other link type).
fuzz_pcapng: pcapng files of the same frames (both byte orders, several sections, unknown
blocks, Simple and obsolete Packet Blocks, timestamp resolutions) and damaged ones.
fuzz_ud: record lists (see fuzz_ud.c) for each way a datagram can end: taken by the UD QP or a
QP1, each named drop, a buffer too short, a send over the MTU, QP state changes, IPv6, and
the payload of the rxe UD capture.
fuzz_cm: the MADs of the rxe rdma_cm captures (rping, ib_write_bw -R), one per file, and a few
refused ones (short, another class or class version, an unknown attribute, a REJ ARI length
over 72).
fuzz_pfc: records of [time step][length][frame] (see fuzz_pfc.c): PFC pauses, refreshes and
resumes, a storm, 802.3x PAUSE, and frames of each rejected kind.

Run from the source root after building, and commit the result:
	/usr/bin/python3 test/fuzz/gen_corpus.py ../shared/captures build/test/builders/gen_frames
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'captures'))
import pcapng_build as ng  # noqa: E402
MAX_FRAME = 1100
# Layout bytes, cycled over the seeds: segment length, exact buffers, NO_ICRC, burst length.
SELECTORS = [0x00, 0x40, 0x80, 0xC0, 0x50, 0x9A, 0xDB, 0x4C, 0x11, 0xE0, 0x8E, 0x2F]


def read_pcap(path):
	"""Records of a little-endian microsecond pcap: (sec, usec, bytes)."""
	with open(path, 'rb') as f:
		data = f.read()
	magic, = struct.unpack_from('<I', data, 0)
	assert magic == 0xA1B2C3D4, f"{path}: not a little-endian usec pcap"
	recs, off = [], 24
	while off + 16 <= len(data):
		sec, usec, caplen, _ = struct.unpack_from('<IIII', data, off)
		recs.append((sec, usec, data[off + 16:off + 16 + caplen]))
		off += 16 + caplen
	return recs


def pcap_bytes(recs, endian='<', nsec=False, linktype=1):
	magic = 0xA1B23C4D if nsec else 0xA1B2C3D4
	out = struct.pack(endian + 'IHHiIII', magic, 2, 4, 0, 0, 65535, linktype)
	for sec, usec, frame in recs:
		frac = usec * 1000 if nsec else usec
		out += struct.pack(endian + 'IIII', sec, frac, len(frame), len(frame)) + frame
	return out


def opcode_of(frame):
	"""BTH opcode of an untagged or tagged IPv4/IPv6 RoCEv2 frame, else None."""
	l3, et = 14, frame[12:14]
	if et == b'\x81\x00':
		l3, et = 18, frame[16:18]
	l4 = {b'\x08\x00': l3 + 20, b'\x86\xdd': l3 + 40}.get(et)
	if l4 is None or len(frame) < l4 + 9 or frame[l4 + 2:l4 + 4] != b'\x12\xb7':
		return None
	return frame[l4 + 8], et == b'\x86\xdd', l3 == 18


def capture_seeds(captures):
	"""The first frame of each opcode across the shared captures."""
	names = sorted(f for f in os.listdir(captures) if f.endswith('.pcap'))
	names += ['errors/roce_ecn_ce_marked_write.pcap', 'errors/roce_err_read_bad_rkey.pcap']
	seen, seeds = set(), []
	for name in names:
		path = os.path.join(captures, name)
		if not os.path.exists(path):
			continue
		for i, (_, _, frame) in enumerate(read_pcap(path)):
			key = opcode_of(frame)
			if key is None or key in seen or len(frame) > MAX_FRAME:
				continue
			seen.add(key)
			seeds.append((f"cap-{os.path.basename(name)[:-5]}-{i + 1}", frame))
	return seeds, seen


def builder_seeds(gen, seen):
	"""Builder frames of kinds the captures lack (IPv6, VLAN, UC, UD, CNP)."""
	with tempfile.TemporaryDirectory() as tmp:
		pcap = os.path.join(tmp, 'f.pcap')
		subprocess.run([gen, pcap, os.path.join(tmp, 'f.jsonl')], check=True,
			stdout=subprocess.DEVNULL)
		recs = read_pcap(pcap)
	seeds, kinds = [], set()
	for i, (_, _, frame) in enumerate(recs):
		op, ipv6, vlan = opcode_of(frame)
		kind = (op & 0xE0, op in (0x11, 0x12, 0x81) or op >= 0x64, ipv6, vlan)
		if (op, ipv6, vlan) in seen or kind in kinds or len(frame) > MAX_FRAME:
			continue
		kinds.add(kind)
		seeds.append((f"gen-{op:02x}-{i + 1}", frame))
	return seeds, recs


def other_seeds():
	"""Frames the classifier must not take for RoCE."""
	mac = bytes.fromhex('020000000002' '020000000001')
	ip4 = bytes.fromhex('45000054000040004001' '0000' '0a630002' '0a630001')
	s = sum(struct.unpack('!10H', ip4))
	s = (s & 0xffff) + (s >> 16)
	ip4 = ip4[:10] + struct.pack('!H', ~s & 0xffff) + ip4[12:]
	icmp = bytes.fromhex('0800f7ff00000000') + bytes(56)
	arp = bytes.fromhex('0001080006040001') + mac[6:] + bytes([10, 99, 0, 2]) + bytes(6) + \
		bytes([10, 99, 0, 1])
	ip6 = bytes.fromhex('6000000000203aff') + bytes(15) + b'\x01' + bytes(15) + b'\x02'
	ns = bytes.fromhex('8700000000000000') + bytes(24)
	return [
		('other-arp', mac + b'\x08\x06' + arp),
		('other-icmp', mac + b'\x08\x00' + ip4 + icmp),
		('other-vlan-icmpv6', mac + b'\x81\x00\x00\x64\x86\xdd' + ip6 + ns),
		('other-qinq', mac + b'\x88\xa8\x00\x05\x81\x00\x00\x64\x08\x00' + ip4 + icmp),
	]


def short_length_seeds(frame):
	"""A RoCE frame whose IP and UDP lengths agree but leave less than a UDP header or a
	BTH: the rest is trailer. Random mutation rarely changes both fields together."""
	seeds = []
	for l4_len in (4, 20):
		f = bytearray(frame)
		f[16:18] = (20 + l4_len).to_bytes(2, 'big')
		f[38:40] = l4_len.to_bytes(2, 'big')
		seeds.append((f"short-lengths-{l4_len}", bytes(f)))
	return seeds


def write_classify(out, seeds):
	shutil.rmtree(out, ignore_errors=True)
	os.makedirs(out)
	for i, (name, frame) in enumerate(seeds):
		# Short-length seeds go to the vector loop (pool, burst of 4), checksum fixed.
		sel = [SELECTORS[i % len(SELECTORS)], i % 4]
		if name.startswith('short'):
			sel = [0x40, 1]
		with open(os.path.join(out, name), 'wb') as f:
			f.write(bytes(sel) + frame)


def write_pcap(out, captures, gen_recs):
	recs = read_pcap(os.path.join(captures, 'roce_rc_send_ibv_rc_pingpong.pcap'))[:3]
	small = pcap_bytes(recs)
	seeds = {
		'le-usec.pcap': small,
		'be-usec.pcap': pcap_bytes(recs, endian='>'),
		'le-nsec.pcap': pcap_bytes(recs, nsec=True),
		'be-nsec.pcap': pcap_bytes(recs, endian='>', nsec=True),
		'builders.pcap': pcap_bytes(gen_recs[:6]),
		'header-only.pcap': pcap_bytes([]),
		'empty-record.pcap': pcap_bytes([(1, 2, b'')]),
		'truncated-data.pcap': small[:-10],
		'truncated-header.pcap': small[:24 + 7],
		'oversize-record.pcap': pcap_bytes([]) + struct.pack('<IIII', 0, 0, 70000, 70000),
		'linktype-sll.pcap': pcap_bytes(recs[:1], linktype=113),
		'bad-magic.pcap': b'\x0a\x0d\x0d\x0a' + small[4:64],
	}
	shutil.rmtree(out, ignore_errors=True)
	os.makedirs(out)
	for name, data in seeds.items():
		with open(os.path.join(out, name), 'wb') as f:
			f.write(data)


def write_pcapng(out, captures):
	frames = [f for _, _, f in read_pcap(os.path.join(captures,
		'roce_rc_send_ibv_rc_pingpong.pcap'))[:3]]
	one = ng.simple_file(frames)
	seeds = {
		'le.pcapng': one,
		'be.pcapng': ng.simple_file(frames, e='>'),
		'sections.pcapng': ng.simple_file(frames[:1]) + ng.simple_file(frames[1:], e='>'),
		'flags.pcapng': ng.simple_file(frames, flags=1, extra=False),
		'opb.pcapng': ng.shb() + ng.idb(tsresol=0x80 | 20) + ng.opb(frames[0], ts=1 << 40),
		'spb.pcapng': ng.shb('>') + ng.idb('>', snaplen=64) + ng.spb(frames[0], '>'),
		'tsoffset.pcapng': ng.shb() + ng.idb(tsresol=3, tsoffset=-7) + ng.epb(frames[0],
			ts=5000),
		'two-ifaces.pcapng': ng.shb() + ng.idb(linktype=113) + ng.idb(name='x' * 40) +
			ng.epb(frames[0], iface=1) + ng.epb(frames[1], iface=0),
		'cut.pcapng': one[:-9],
		'trailer.pcapng': ng.shb() + ng.idb() + ng.epb(frames[0], trailer=8),
		'bad-iface.pcapng': ng.shb() + ng.idb() + ng.epb(frames[0], iface=3),
		'big-caplen.pcapng': ng.shb() + ng.idb() + ng.epb(frames[0], caplen=70000),
		'shb-only.pcapng': ng.shb(options=[(1, b'comment')]),
		'bad-bom.pcapng': ng.block(ng.SHB, b'\x01\x02\x03\x04' + bytes(12)),
	}
	shutil.rmtree(out, ignore_errors=True)
	os.makedirs(out)
	for name, data in seeds.items():
		with open(os.path.join(out, name), 'wb') as f:
			f.write(data)


def ud_datagram(target, op=0, qsel=0, flags=0, src=0x46, qkey=0, payload=bytes(64)):
	return bytes([0, target, op, qsel, flags]) + src.to_bytes(3, 'big') + \
		qkey.to_bytes(4, 'big') + len(payload).to_bytes(2, 'big') + payload


def ud_recv(qp, *lens):
	return bytes([1, qp, len(lens)]) + b''.join(n.to_bytes(2, 'big') for n in lens)


def ud_send(op=0, length=64, qkey=0x1234, dqpn=0, flags=4):
	return bytes([2, op]) + length.to_bytes(2, 'big') + qkey.to_bytes(4, 'big') + \
		dqpn.to_bytes(3, 'big') + bytes([flags])


def ud_modify(qp, state, qkey=0x1234, mtu=2):
	return bytes([3, qp, state]) + qkey.to_bytes(4, 'big') + bytes([mtu])


def write_ud(out, captures):
	pay = bytes(range(64))
	cap = os.path.join(captures, 'roce_ud_send_64B.pcap')
	if os.path.exists(cap):
		pay = read_pcap(cap)[0][2][62:126]
	seeds = {
		'taken': ud_recv(0, 2048) + ud_datagram(0, payload=pay),
		'taken-imm-ipv6': ud_recv(0, 1000) + ud_datagram(0, op=1, flags=1),
		'qp1-port2': ud_recv(2, 296) + ud_datagram(1, qsel=1, flags=0x08, payload=bytes(256)),
		'qp1-port1-wrong-qkey': ud_recv(1, 296) + ud_datagram(1, qsel=3, qkey=0x80010001),
		'qp1-no-port': ud_datagram(1, qsel=1, flags=0x18),
		'wrong-qkey': ud_recv(0, 2048) + ud_datagram(0, qsel=3, qkey=0x1235),
		'controlled-qkey': ud_recv(0, 2048) + ud_datagram(0, qsel=2),
		'bad-pkey-ce': ud_recv(0, 2048) + ud_datagram(0, flags=0x06),
		'no-recv': ud_datagram(0),
		'too-long': ud_recv(0, 4096) + ud_datagram(0, payload=bytes(1100)),
		'short-buffer': ud_recv(0, 50, 20) + ud_recv(0, 2048) + ud_datagram(0),
		'rc-qp': ud_datagram(2) + ud_datagram(2, op=0x80 | 0x02),
		'other-opcodes': ud_recv(0, 2048) + ud_datagram(0, op=0x80) + ud_datagram(0, op=0x82) +
			ud_datagram(0, op=0xC0),
		'loopback': ud_recv(0, 2048) + ud_send() + ud_recv(1, 296) +
			ud_send(dqpn=1, flags=0x08),
		'send-over-mtu': ud_recv(0, 4096) + ud_send(length=2000) + ud_modify(0, 0) +
			ud_modify(0, 1) + ud_modify(0, 2) + ud_modify(0, 0x43),
		'states': ud_modify(0, 6) + ud_recv(0, 100) + ud_modify(0, 0) + ud_modify(0, 0x11) +
			ud_recv(0, 2048) + ud_datagram(0) + ud_modify(0, 0x22, mtu=4) +
			ud_datagram(0, payload=bytes(2000)),
		'time': ud_recv(0, 2048) + bytes([4, 50]) + ud_datagram(0),
	}
	shutil.rmtree(out, ignore_errors=True)
	os.makedirs(out)
	for name, data in seeds.items():
		with open(os.path.join(out, name), 'wb') as f:
			f.write(data)


def pfc_frame(vector, quanta, opcode=0x0101, dst=b'\x01\x80\xc2\x00\x00\x01', pad=26):
	"""An 802.1Qbb frame (60 bytes with the default padding)."""
	times = b''.join(struct.pack('>H', q if vector >> i & 1 else 0) for i, q in enumerate(quanta))
	return (dst + b'\x02\x00\x00\x00\x00\x07' + b'\x88\x08' + struct.pack('>H', opcode) +
		bytes([0, vector]) + times + bytes(pad))


def write_pfc(out):
	def rec(step, frame):
		return bytes([step, len(frame)]) + frame
	big = [65535] * 8
	seeds = {
		'pause-resume': rec(0, pfc_frame(0x08, big)) + rec(0x83, pfc_frame(0x08, [0] * 8)),
		'two-prios': rec(1, pfc_frame(0x28, [0, 0, 0, 1000, 0, 50, 0, 0])) +
			rec(20, pfc_frame(0x20, [0] * 8)),
		'storm': b''.join(rec(0x81, pfc_frame(0x01, big)) for _ in range(20)),
		'link-pause': rec(0, pfc_frame(0x01, big, opcode=0x0001)),
		'bad-opcode': rec(0, pfc_frame(0x01, big, opcode=0x0102)),
		'bad-dst': rec(0, pfc_frame(0x01, big, dst=b'\x02' * 6)),
		'zero-vector': rec(0, pfc_frame(0, big)),
		'short': rec(0, pfc_frame(0x01, big, pad=0)),
		'with-fcs': rec(0, pfc_frame(0xff, list(range(1, 9)), pad=30)),
		'not-ctrl': rec(0, bytes(12) + b'\x08\x00' + bytes(46)),
	}
	shutil.rmtree(out, ignore_errors=True)
	os.makedirs(out)
	for name, data in seeds.items():
		with open(os.path.join(out, name), 'wb') as f:
			f.write(data)


CM_CAPTURES = ['roce_rdma_cm_rping.pcap', 'roce_rdma_cm_ib_write_bw_R.pcap']


def write_cm(out, captures):
	"""The MADs of UD SEND Only packets to QP1 (opcode 0x64, ETH/IPv4/UDP/BTH/DETH)."""
	shutil.rmtree(out, ignore_errors=True)
	os.makedirs(out)
	mads = []
	for name in CM_CAPTURES:
		for _, _, f in read_pcap(os.path.join(captures, name)):
			if len(f) == 42 + 12 + 8 + 256 + 4 and f[42] == 0x64 and f[46:50] == b'\0\0\0\1':
				mads.append(f[62:62 + 256])
	assert len(mads) == 15, f"fuzz_cm: {len(mads)} MADs in the rdma_cm captures"
	req = mads[0]
	rej = bytearray(256)
	rej[0:4] = b'\x01\x07\x02\x03'
	rej[16:18] = b'\x00\x12'
	bad = {
		'short': req[:200],
		'class-sa': req[:1] + b'\x03' + req[2:],
		'class-version-1': req[:2] + b'\x01' + req[3:],
		'attr-class-port-info': req[:16] + b'\x00\x01' + req[18:],
		'rej-ari-73': bytes(rej[:24 + 9]) + bytes([73 << 1]) + bytes(rej[24 + 10:]),
	}
	for i, m in enumerate(mads):
		with open(os.path.join(out, f'mad-{i:02d}'), 'wb') as f:
			f.write(m)
	for k, m in bad.items():
		with open(os.path.join(out, k), 'wb') as f:
			f.write(m)


def main():
	if len(sys.argv) != 3:
		print(__doc__)
		return 2
	captures, gen = sys.argv[1], sys.argv[2]
	caps, seen = capture_seeds(captures)
	built, gen_recs = builder_seeds(gen, seen)
	seeds = caps + built + other_seeds() + short_length_seeds(caps[0][1])
	write_classify(os.path.join(HERE, 'corpus', 'fuzz_classify'), seeds)
	write_pcap(os.path.join(HERE, 'corpus', 'fuzz_pcap'), captures, gen_recs)
	write_pcapng(os.path.join(HERE, 'corpus', 'fuzz_pcapng'), captures)
	write_ud(os.path.join(HERE, 'corpus', 'fuzz_ud'), captures)
	write_pfc(os.path.join(HERE, 'corpus', 'fuzz_pfc'))
	write_cm(os.path.join(HERE, 'corpus', 'fuzz_cm'), captures)
	print(f"gen_corpus: {len(seeds)} fuzz_classify seeds ({len(caps)} captured, "
		f"{len(built)} built), fuzz_pcap, fuzz_pcapng and fuzz_ud seeds written")
	return 0


if __name__ == '__main__':
	sys.exit(main())
