#!/usr/bin/python3
"""tagplay.py FLOW.json HOST: play the client side of a recorded perftest OOB flow against a real
perftest server, with the version message's tail replaced by the rocedp capability tag."""
import json, socket, struct, sys, time
flow = json.load(open(sys.argv[1]))
s = socket.create_connection((sys.argv[2], 18515))
tagged = b'6.06\0' + b'rdp1' + struct.pack('>I', 1) + b'\0' * 3
assert len(tagged) == 16
def rd(n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: raise SystemExit('EOF after %d of %d' % (len(b), n))
        b += c
    return b
for m in flow:
    data = bytes.fromhex(m['hex'])
    if m['dir'] == 'c->s':
        if m['len'] == 16: data = tagged
        s.sendall(data)
    elif m['len'] != 5:
        got = rd(m['len'])
        print('got %3d: %s' % (len(got), got[:40].hex()))
time.sleep(0.5)
s.close()
print('OK: whole exchange done')
