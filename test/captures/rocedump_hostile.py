#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocedump on hostile input: bad files give one error line and exit status 2, bad usage
gives 2, damaged frames are decoded (or rejected) without a crash. pcapng files decode as
their classic pcap twins in both byte orders, around blocks rocedump does not know; damaged
pcapng blocks are named; frames cut by a snap length are decoded, marked truncated, never
called malformed.

usage: rocedump_hostile.py ROCEDUMP    (captures from $ROCE_CAPTURES, default ../shared/captures)
"""
import glob
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapng_build as ng  # noqa: E402

ROCEDUMP = sys.argv[1]
CAPTURES = os.environ.get('ROCE_CAPTURES', '../shared/captures')
failures = 0
checks = 0


def check(cond, what):
	global failures, checks
	checks += 1
	if not cond:
		failures += 1
		print(f'FAIL {what}')


def rocedump(*args):
	return subprocess.run([ROCEDUMP, *args], capture_output=True, text=True, timeout=60)


def pcap(records, magic=0xA1B2C3D4, linktype=1, endian='<'):
	"""A classic pcap file; records are bytes, or (caplen, origlen, bytes) to lie."""
	out = [struct.pack(endian + 'IHHiIII', magic, 2, 4, 0, 0, 65535, linktype)]
	for i, r in enumerate(records):
		caplen, origlen, data = (len(r), len(r), r) if isinstance(r, bytes) else r
		out += [struct.pack(endian + 'IIII', i, 0, caplen, origlen), data]
	return b''.join(out)


def read_frames(path):
	data = open(path, 'rb').read()
	off, frames = 24, []
	while off + 16 <= len(data):
		caplen = struct.unpack('<I', data[off + 8:off + 12])[0]
		frames.append(data[off + 16:off + 16 + caplen])
		off += 16 + caplen
	return frames


def expect_error(name, path, words, *opts):
	"""Exit status 2, one line on stderr that names the problem, no crash."""
	r = rocedump(*opts, path)
	lines = r.stderr.strip().splitlines()
	check(r.returncode == 2, f'{name}: status {r.returncode}, want 2 ({r.stderr.strip()})')
	check(len(lines) == 1 and all(w in lines[0] for w in words),
		f'{name}: want one stderr line with {words}, got {lines}')


def file_errors(tmp, frame):
	def write(name, data):
		path = os.path.join(tmp, name)
		with open(path, 'wb') as f:
			f.write(data)
		return path

	not_pcap = ['not a classic pcap or pcapng']
	two = pcap([frame, frame])
	expect_error('missing file', os.path.join(tmp, 'nope.pcap'), ['No such file'])
	expect_error('directory', tmp, not_pcap)
	expect_error('empty file', write('empty.pcap', b''), not_pcap)
	expect_error('text file', write('text.pcap', b'hello, world\n' * 10), not_pcap)
	expect_error('wifi link type', write('wifi.pcap', pcap([frame], linktype=105)),
		['link type 105'])
	expect_error('cut file header', write('cuthdr.pcap', pcap([])[:20]), not_pcap)
	expect_error('cut record header', write('cutrec.pcap', two[:-len(frame) - 7]),
		['record 2', 'damaged'])
	expect_error('cut record data', write('cutdata.pcap', pcap([frame])[:-1]),
		['record 1', 'damaged'])
	expect_error('record of 70000 bytes', write('huge.pcap', pcap([(70000, 70000, frame)])),
		['record 1', 'damaged'])
	# Frames before the damage are still decoded.
	r = rocedump('--fields', write('late.pcap', pcap([frame, frame, (9, 9, b'')])))
	n = len(r.stdout.splitlines())
	check(r.returncode == 2 and n == 2,
		f'damaged third record: status {r.returncode}, {n} lines')
	# Every file is opened before any is decoded: a missing second file fails at once.
	good = write('good.pcap', pcap([frame]))
	r = rocedump('--table', good, os.path.join(tmp, 'nope.pcap'))
	check(r.returncode == 2, f'good then missing file: status {r.returncode}')


def pcapng_errors(tmp, frame):
	"""Damaged pcapng: the section header at open, any other block when it is reached."""
	def write(name, data):
		path = os.path.join(tmp, name)
		with open(path, 'wb') as f:
			f.write(data)
		return path

	good = ng.shb() + ng.idb() + ng.epb(frame)
	hdr = ['damaged pcapng section header']
	expect_error('pcapng bad byte-order magic', write('bom.pcapng', ng.block(ng.SHB,
		b'\x11\x22\x33\x44' + bytes(12))), hdr + ['byte-order magic'])
	expect_error('pcapng version 2', write('v2.pcapng', ng.shb(major=2) + good[28:]),
		hdr + ['major version'])
	expect_error('pcapng cut section header', write('cutshb.pcapng', good[:10]), hdr)
	expect_error('pcapng section header of 13 bytes', write('shb13.pcapng',
		ng.shb(length=13)), hdr + ['multiple of 4'])
	blk = ['record 1', 'damaged block at byte 48']
	cases = [
		('trailer', ng.epb(frame, trailer=999), ['start and end differ']),
		('caplen past block', ng.epb(frame, caplen=len(frame) + 64), ['longer than its block']),
		('undeclared interface', ng.epb(frame, iface=1), ['did not describe']),
		('length 8', ng.block(ng.EPB, b'', length=8), ['below 12']),
		('cut block', ng.epb(frame)[:-6], ['file ends inside a block']),
		('cut block header', ng.epb(frame)[:5], ['file ends inside a block header']),
		('70000-byte packet', ng.epb(bytes(70000)), ['longer than 65535']),
		('option overrun', ng.block(ng.EPB, ng.epb(frame)[8:-4] +
			struct.pack('<HH', 2, 3000)), ['option runs past']),
		('block over 256 KiB', ng.epb(bytes(300000), caplen=60), ['256 KiB']),
		('unknown block cut short', ng.block(0x1234, bytes(64))[:-10], ['file ends']),
	]
	for name, bad, words in cases:
		path = write('bad.pcapng', ng.shb() + ng.idb() + bad)
		expect_error(f'pcapng {name}', path, blk + words)
	# The damage is met where it is: the frames before it are decoded.
	r = rocedump('--fields', write('late.pcapng', good + ng.epb(frame) +
		ng.epb(frame, trailer=4)))
	check(r.returncode == 2 and len(r.stdout.splitlines()) == 2 and
		'record 3' in r.stderr, f'pcapng damaged third record: {r.returncode} {r.stderr}')
	# Interface options out of range are damage, unknown ones are not.
	expect_error('pcapng tsresol 20', write('res.pcapng', ng.shb() + ng.idb(tsresol=20) +
		ng.epb(frame)), ['record 1', 'timestamp resolution'])
	r = rocedump('--fields', write('opt.pcapng', ng.shb() + ng.block(ng.IDB,
		struct.pack('<HHI', 1, 0, 0) + ng.opts([(0x7777, b'xyz'), (2, b'eth\0junk')])) +
		ng.epb(frame)))
	check(r.returncode == 0 and len(r.stdout.splitlines()) == 1,
		f'pcapng unknown interface option: {r.returncode} {r.stderr}')
	# 257 interfaces in one section: refused; a new section starts the count again.
	many = ng.shb() + ng.idb() * 257 + ng.epb(frame)
	expect_error('pcapng 257 interfaces', write('many.pcapng', many), ['256 interfaces'])
	r = rocedump('--fields', write('sections.pcapng', (ng.shb() + ng.idb() * 200 +
		ng.epb(frame, iface=199)) * 2))
	check(r.returncode == 0 and len(r.stdout.splitlines()) == 2,
		f'pcapng interfaces per section: {r.returncode} {r.stderr}')


def pcapng_reads(tmp, frames):
	"""pcapng in both byte orders, several sections, unknown blocks, Simple and obsolete
	Packet Blocks, other link types: decoded as the classic pcap of the same frames."""
	def run(name, data, *opts):
		path = os.path.join(tmp, name)
		with open(path, 'wb') as f:
			f.write(data)
		return rocedump(*opts, path)

	want = run('twin.pcap', pcap(frames), '--fields', '--verify')
	check(want.returncode == 0 and want.stdout, f'classic twin: {want.returncode}')
	half = len(frames) // 2
	files = {
		'le': ng.simple_file(frames),
		'be': ng.simple_file(frames, e='>'),
		# Sections of both byte orders one after the other.
		'sections': ng.simple_file(frames[:half]) + ng.simple_file(frames[half:], e='>'),
		'opb': ng.shb('>') + ng.idb('>') + b''.join(ng.opb(f, '>') for f in frames),
		'spb': ng.shb() + ng.idb(snaplen=65535) + b''.join(ng.spb(f) for f in frames),
		'flags': ng.simple_file(frames, flags=2, extra=False),
	}
	for name, data in files.items():
		r = run(f'{name}.pcapng', data, '--fields', '--verify')
		check(r.returncode == 0 and r.stdout == want.stdout,
			f'pcapng {name}: status {r.returncode}, decoded as the pcap: '
			f'{r.stdout == want.stdout} {r.stderr[-300:]}')
	r = run('dir.pcapng', ng.simple_file(frames[:2], flags=1) + ng.simple_file(frames[:1],
		flags=2))
	lines = r.stdout.splitlines()
	check(r.returncode == 0 and lines[1].endswith('[rx]') and lines[3].endswith('[tx]'),
		f'pcapng directions: {lines}')
	# A Simple Packet Block longer than the interface's snap length is cut to it.
	r = run('spbcut.pcapng', ng.shb() + ng.idb(snaplen=60) + ng.spb(frames[0]))
	check(r.returncode == 0 and f'60 of {len(frames[0])} bytes' in r.stdout,
		f'pcapng SPB snap length: {r.stdout}')
	# Interfaces of another link type: their records are numbered and passed over.
	mixed = ng.shb() + ng.idb(linktype=113) + ng.idb() + ng.epb(frames[0], iface=0) + \
		b''.join(ng.epb(f, iface=1) for f in frames)
	r = run('mixed.pcapng', mixed, '--fields')
	check(r.returncode == 0 and [ln.split('\t', 1)[1] for ln in r.stdout.splitlines()] ==
		[ln.split('\t', 1)[1] for ln in want.stdout.splitlines()] and
		r.stdout.split('\t', 1)[0] != want.stdout.split('\t', 1)[0],
		'pcapng with a non-Ethernet interface: RoCE rows differ')
	r = run('mixed.pcapng', mixed)
	check(r.returncode == 0 and 'LINK   link type 113 of interface 0' in r.stdout,
		f'pcapng non-Ethernet record line: {r.stdout[:300]}')
	# Timestamp resolutions: 2^-n and decimal, with an offset; nothing to see but no crash.
	for res in (0, 3, 9, 12, 19, 0x80 | 10, 0x80 | 63):
		r = run('res.pcapng', ng.shb() + ng.idb(tsresol=res, tsoffset=-5) +
			ng.epb(frames[0], ts=(1 << 64) - 1), '-q')
		check(r.returncode == 0, f'pcapng tsresol {res:#x}: {r.returncode} {r.stderr}')


def hdr_need(frame):
	"""Bytes of a RoCEv2 frame up to the end of its extension headers (IPv4/IPv6, one VLAN
	tag at most), from a table of header lengths per opcode class; None when not RoCE."""
	l3, et = 14, frame[12:14]
	if et == b'\x81\x00':
		l3, et = 18, frame[16:18]
	l4 = {b'\x08\x00': l3 + 20, b'\x86\xdd': l3 + 40}.get(et)
	if l4 is None or len(frame) < l4 + 9 or frame[l4 + 2:l4 + 4] != b'\x12\xb7':
		return None
	return l4 + 8


def truncated(tmp, frames):
	"""Every RoCE frame of the captures cut by a snap length: decoded as the whole frame is,
	marked truncated, when its headers were captured; TRUNC when the cut falls inside them;
	never DROP (the old behaviour: IP4_LEN, 'bad IPv4')."""
	whole = os.path.join(tmp, 'whole.pcap')
	with open(whole, 'wb') as f:
		f.write(pcap(frames))
	full = rocedump(whole).stdout.splitlines()[1:]
	roce = [i for i, ln in enumerate(full) if ln.split()[1] == 'ROCE']
	check(len(roce) > 10, f'only {len(roce)} RoCE frames to cut')
	recs, expect = [], []
	for i in roce:
		f = frames[i]
		# The opcode's BTH and extension headers, as the decoder of the whole frame saw them:
		# the first payload byte is at len - pad - ICRC - payload.
		cols = full[i].split()
		payload = int(cols[6])
		pad = (f[hdr_need(f) + 1] >> 4) & 3
		need = len(f) - 4 - pad - payload
		for cut, kind in ((need, 'ROCE'), (need + (len(f) - need) // 2, 'ROCE'),
				(need - 1, 'TRUNC'), (hdr_need(f) + 11, 'TRUNC'), (hdr_need(f) - 3, 'TRUNC'),
				(20, 'TRUNC')):
			if 0 < cut < len(f):
				recs.append((cut, len(f), f[:cut]))
				expect.append((kind, full[i]))
	path = os.path.join(tmp, 'cut.pcapng')
	with open(path, 'wb') as f:
		f.write(ng.shb() + ng.idb() + b''.join(ng.epb(d, origlen=o) for _, o, d in recs))
	r = rocedump(path)
	lines = r.stdout.splitlines()[1:]
	check(r.returncode == 0 and len(lines) == len(recs), f'cut frames: {r.returncode}')
	bad = 0
	for (kind, whole_line), ln, (cut, orig, _) in zip(expect, lines, recs):
		c, w = ln.split(), whole_line.split()
		ok = c[1] == kind and 'DROP' not in ln
		if kind == 'ROCE':
			# Same opcode, QP, PSN, AckReq and payload as the whole frame, then the mark.
			ok = ok and c[2:7] == w[2:7] and f'(truncated: {cut} of {orig} bytes' in ln
		elif cut >= hdr_need(frames[0]) + 12 and len(c) > 3 and c[2].startswith('RC_'):
			ok = ok and c[2:5] == w[2:5]
		if not ok and bad < 5:
			print(f'  cut at {cut} of {orig}: {ln!r}\n  whole: {whole_line!r}')
		bad += not ok
	check(bad == 0, f'cut frames: {bad} of {len(recs)} decoded wrongly')
	r = rocedump('--verify', '-q', path)
	check(r.returncode == 0 and f'{len(recs)} truncated' in r.stderr,
		f'cut frames --verify: {r.returncode} {r.stderr}')
	r = rocedump('--fields', path)
	rows = r.stdout.splitlines()
	check(r.returncode == 0 and len(rows) == sum(k == 'ROCE' for k, _ in expect) and
		all(row.split('\t')[-2] == '' for row in rows),
		f'cut frames --fields: {len(rows)} rows, ICRC columns {[x.split()[-2:] for x in rows[:3]]}')


def usage_errors(frame_file):
	bad = (['--seg', '0'], ['--seg', '65408'], ['--seg', 'ten'], ['--seg', '-5'],
		['--impl', 'sse'], ['--fields', '--table'], ['--table', '-q'], ['--bogus'], [])
	for args in bad:
		r = rocedump(*args, *([frame_file] if args else []))
		check(r.returncode == 2 and r.stderr.strip() != '',
			f'usage {args}: status {r.returncode}, stderr {r.stderr.strip()!r}')
	r = rocedump('--help')
	check(r.returncode == 0 and 'EXIT STATUS' in r.stdout and r.stderr == '',
		f'--help: status {r.returncode}')
	r = rocedump('--list-impls')
	check(r.returncode == 0 and 'scalar' in r.stdout.split(), f'--list-impls: {r.stdout!r}')


def byte_orders(tmp, frames):
	"""Big-endian and nanosecond files decode like the usual little-endian microsecond one."""
	outs = []
	kinds = (('le', 0xA1B2C3D4, '<'), ('be', 0xA1B2C3D4, '>'), ('ns', 0xA1B23C4D, '<'),
		('bens', 0xA1B23C4D, '>'))
	for name, magic, endian in kinds:
		path = os.path.join(tmp, f'order-{name}.pcap')
		with open(path, 'wb') as f:
			f.write(pcap(frames, magic=magic, endian=endian))
		r = rocedump('--fields', '--verify', path)
		check(r.returncode == 0, f'{name} byte order: status {r.returncode} {r.stderr}')
		outs.append(r.stdout)
	check(all(o == outs[0] and o for o in outs), 'byte orders decode differently')


ETHERTYPES = [b'\x08\x00', b'\x86\xdd', b'\x81\x00', b'\x08\x06']


def mangle(rng, frames):
	"""Damaged frames: bit flips, random header fields, truncation, garbage, tiny frames."""
	out = []
	for i in range(3000):
		f = bytearray(rng.choice(frames))
		kind = i % 6
		if kind == 0:
			for _ in range(rng.randint(1, 4)):
				f[rng.randrange(len(f))] ^= 1 << rng.randrange(8)
		elif kind == 1:
			# A length, IHL, version or port field: the first 64 bytes hold them all.
			f[rng.randrange(min(64, len(f)))] = rng.randrange(256)
		elif kind == 2:
			cut = rng.randrange(len(f))
			out.append((cut, len(f), bytes(f[:cut])))  # cut short by a snap length
			continue
		elif kind == 3:
			f = f[:rng.randrange(len(f) + 1)]  # shorter than its headers say
		elif kind == 4:
			f = bytearray(rng.randbytes(rng.randrange(200)))
			if len(f) >= 14 and rng.random() < 0.5:
				f[12:14] = rng.choice(ETHERTYPES)
		else:
			f = f[:rng.randrange(20)]
		out.append(bytes(f))
	return out


def mangled(tmp, frames):
	rng = random.Random(4791)
	recs = mangle(rng, frames)
	path = os.path.join(tmp, 'mangled.pcap')
	with open(path, 'wb') as f:
		f.write(pcap(recs))
	runs = ([], ['--fields'], ['--table'], ['--verify', '-q'], ['--seg', '1', '-q'],
		['--seg', '7', '--impl', 'scalar'], ['--seg', '61', '--verify', '--table'])
	for opts in runs:
		r = rocedump(*opts, path)
		check(r.returncode in (0, 1),
			f'mangled frames {opts}: status {r.returncode} {r.stderr[-500:]}')
		n = len(r.stdout.splitlines())
		if not opts:
			check(n == len(recs) + 1,
				f'mangled frames: {n} lines for {len(recs)} frames')
		if '--verify' in opts:
			check(r.returncode == 1, f'mangled frames {opts}: --verify did not fail')


def main():
	if not os.path.isdir(CAPTURES):
		print(f'no captures at {CAPTURES}: skipped')
		return 77
	caps = sorted(glob.glob(os.path.join(CAPTURES, '*.pcap')) +
		glob.glob(os.path.join(CAPTURES, 'errors', '*.pcap')))
	if not caps:
		print(f'no captures in {CAPTURES}')
		return 1
	frames = [f for c in caps[:6] for f in read_frames(c)]
	with tempfile.TemporaryDirectory() as tmp:
		file_errors(tmp, frames[0])
		one = os.path.join(tmp, 'one.pcap')
		with open(one, 'wb') as f:
			f.write(pcap(frames[:1]))
		usage_errors(one)
		byte_orders(tmp, frames[:40])
		pcapng_errors(tmp, frames[0])
		pcapng_reads(tmp, frames[:40])
		truncated(tmp, frames)
		mangled(tmp, frames)
	print(f'rocedump_hostile: {checks} checks, {failures} failed')
	return 1 if failures else 0


if __name__ == '__main__':
	sys.exit(main())
