#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocedump on hostile input: bad files give one error line and exit status 2, bad usage
gives 2, damaged frames are decoded (or rejected) without a crash.

usage: rocedump_hostile.py ROCEDUMP    (captures from $ROCE_CAPTURES, default ../shared/captures)
"""
import glob
import os
import random
import struct
import subprocess
import sys
import tempfile

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

	not_pcap = ['not a classic pcap']
	pcapng = bytes.fromhex('0a0d0d0a1c0000004d3c2b1a') + bytes(16)
	two = pcap([frame, frame])
	expect_error('missing file', os.path.join(tmp, 'nope.pcap'), ['No such file'])
	expect_error('directory', tmp, not_pcap)
	expect_error('empty file', write('empty.pcap', b''), not_pcap)
	expect_error('text file', write('text.pcap', b'hello, world\n' * 10), not_pcap)
	expect_error('pcapng', write('ng.pcap', pcapng), ['pcapng', 'editcap'])
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
		mangled(tmp, frames)
	print(f'rocedump_hostile: {checks} checks, {failures} failed')
	return 1 if failures else 0


if __name__ == '__main__':
	sys.exit(main())
