#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the PFC frames of drivers/impair with tshark's MAC control dissector and scapy.

Runs `test_bneck --frames OUT.pcap OUT.jsonl`: frames from roce_pfc_build() and the ones a
lossless bottleneck makes (pause, pause of two priorities, refreshes, a resume of one while
the other stays paused, the last resume), with the vector and the eight pause times each must
decode to. tshark must see a MAC control frame, opcode 0x0101 (Class Based Flow Control), to
01:80:c2:00:00:01, 60 bytes, no malformed or expert item, the class-enable vector and every
class's pause time as built; scapy (scapy.contrib.mac_control) likewise.

Usage: check_pfc.py TEST_BNECK
Exit status: 0 when every frame matches, 1 on a mismatch, 77 (skipped) without tshark.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

FIELDS = ['frame.len', 'eth.dst', 'eth.type', 'macc.opcode', 'macc.cbfc.enbv',
          '_ws.malformed', '_ws.expert.severity'] + \
    [f'macc.cbfc.pause_time.c{i}' for i in range(8)]


def tshark(pcap):
    args = ['tshark', '-r', pcap, '-T', 'fields', '-E', 'separator=/t', '-E', 'occurrence=a']
    for f in FIELDS:
        args += ['-e', f]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [dict(zip(FIELDS, line.split('\t'))) for line in out.splitlines()]


def num(v):
    return int(v, 0) if v else None


def main():
    gen = sys.argv[1]
    if shutil.which('tshark') is None:
        print('tshark not installed: skipped')
        return 77
    failed = 0
    with tempfile.TemporaryDirectory(prefix='rocedp-pfc-') as d:
        pcap, js = os.path.join(d, 'pfc.pcap'), os.path.join(d, 'pfc.jsonl')
        subprocess.run([gen, '--frames', pcap, js], check=True, capture_output=True)
        want = [json.loads(line) for line in open(js)]
        got = tshark(pcap)
        if len(got) != len(want) or len(want) < 8:
            print(f'FAIL: {len(got)} frames decoded, {len(want)} written')
            return 1
        kinds = set()
        for i, (w, g) in enumerate(zip(want, got)):
            exp = {'frame.len': 60, 'eth.dst': '01:80:c2:00:00:01', 'eth.type': 0x8808,
                   'macc.opcode': 0x0101, 'macc.cbfc.enbv': w['vector']}
            exp.update({f'macc.cbfc.pause_time.c{c}': w['quanta'][c] for c in range(8)})
            for k, v in exp.items():
                have = g[k] if k == 'eth.dst' else num(g[k])
                if have != v:
                    print(f'FAIL tshark frame {i + 1}: {k} = {g[k]!r}, want {v!r}')
                    failed += 1
            if g['_ws.malformed'] or g['_ws.expert.severity']:
                print(f'FAIL tshark frame {i + 1}: malformed or expert item: {g}')
                failed += 1
            kinds.add((w['vector'], tuple(q != 0 for q in w['quanta'])))
        # scapy, independently of tshark.
        from scapy.all import rdpcap
        from scapy.contrib.mac_control import MACControlClassBasedFlowControl as Cbfc
        for i, (w, p) in enumerate(zip(want, rdpcap(pcap))):
            c = p.getlayer(Cbfc)
            if c is None:
                print(f'FAIL scapy frame {i + 1}: not decoded as PFC: {p.summary()}')
                failed += 1
                continue
            vec = sum(getattr(c, f'c{b}_enabled') << b for b in range(8))
            times = [getattr(c, f'c{b}_pause_time') for b in range(8)]
            if vec != w['vector'] or times != w['quanta'] or p.dst != '01:80:c2:00:00:01':
                print(f'FAIL scapy frame {i + 1}: vector {vec:#x} times {times}, want {w}')
                failed += 1
        print(f'{len(want)} PFC frames ({len(kinds)} kinds) decoded by tshark and scapy, '
              f'{failed} mismatches')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
