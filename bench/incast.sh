#!/usr/bin/env bash
# bench/incast.sh: incast through a bottleneck (test/integration/incast.py): N QPs of one
# sender daemon write to one receiver through a queue on the receiver's rx (drivers/impair
# bneck=RATE:BUFFER, RED/ECN marking KMIN:KMAX:PMAX, tail drop or the PFC lossless mode), for
# congestion control mlx5 / paper / off x lossy / lossless x go-back-N / selective repeat.
# Prints, per row: goodput, utilisation of the bottleneck, Jain's fairness (the worst 1 s
# window), queue p50/p99/max, drops, RED marks, CNPs/s, PFC pauses sent, retransmissions and
# QPs that ran out of retries. The two daemons' workers run on different CPUs (the loop of
# marks, CNPs and DCQCN's timers is only as fast as both run); a loaded machine moves every
# figure.
#
# usage: bench/incast.sh [SECONDS_PER_ROW]      (default 4)
# Environment: ROCE_BUILD_DIR (default build), ROCE_BENCH_N (QPs, default "8 64"),
#              ROCE_BENCH_RATE (bottleneck bit/s, default 10000000000: the issue's 10 Gb/s),
#              ROCE_BENCH_BUFFER (bytes, default 1048576; lossless rows take at least 4 MiB),
#              ROCE_BENCH_RED (default 100000:400000:0.1; a fourth field deq marks
#              frames as they leave), ROCE_BENCH_LOSSLESS (XOFF:XON, default 524288:262144),
#              ROCE_BENCH_JSON (a file for every row as JSON lines),
#              ROCE_BENCH_CC (profiles, default "mlx5 paper off"), ROCE_BENCH_MODES (default
#              "lossy lossless"), ROCE_BENCH_MAX_RATE (the senders' rp_max_rate in Mb/s, as a
#              NIC's line rate bounds DCQCN; default 0: memif's reported 100 Gb/s),
#              ROCE_BENCH_CC_SET (more `cc set` arguments for both daemons after the
#              profile, e.g. "pace_burst=4 rp_rate_reduce_monitor_period=0").
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ROCE_BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
secs=${1:-4}
ninja -C "$build" app/roced/roced app/rocectl >/dev/null
ROCE_TOP=$top exec /usr/bin/python3 - "$build" "$secs" <<'EOF'
import json, os, sys
top = os.environ.get('ROCE_TOP') or os.getcwd()
sys.path.insert(0, os.path.join(top, 'test/integration'))
from incast import ApartPair, Incast, fmt  # noqa: E402

build, secs = sys.argv[1], float(sys.argv[2])
ns = [int(x) for x in os.environ.get('ROCE_BENCH_N', '8 64').split()]
rate = int(os.environ.get('ROCE_BENCH_RATE', '10000000000'))
buf = int(os.environ.get('ROCE_BENCH_BUFFER', '1048576'))
red = tuple(float(x) if '.' in x else int(x) if x.isdigit() else x
            for x in os.environ.get('ROCE_BENCH_RED', '100000:400000:0.1').split(':'))
lossless = tuple(int(x) for x in
                 os.environ.get('ROCE_BENCH_LOSSLESS', '524288:262144').split(':'))
out = open(os.environ['ROCE_BENCH_JSON'], 'w') if os.environ.get('ROCE_BENCH_JSON') else None
ccs = os.environ.get('ROCE_BENCH_CC', 'mlx5 paper off').split()
modes = [m == 'lossless' for m in os.environ.get('ROCE_BENCH_MODES', 'lossy lossless').split()]
max_rate = int(os.environ.get('ROCE_BENCH_MAX_RATE', '0'))
cc_set = os.environ.get('ROCE_BENCH_CC_SET', '').split()
print(f'incast: bottleneck {rate / 1e6:.0f} Mb/s, buffer {buf} B, RED {red}, '
      f'{secs:g} s per row, rp_max_rate {max_rate or "line"}'
      f'{", cc set " + " ".join(cc_set) if cc_set else ""}', flush=True)
hdr = ('   N cc    xport lossless  goodput Mb/s   util  jain  q p50/p99/max B        drops  '
       'marks  CNP/s  pauses   retx failed')
print(hdr, flush=True)
with ApartPair(build) as p:
    for n in ns:
        for cc in ccs:
            for ll in modes:
                for sr in (False, True):
                    # Lossless: a buffer whose headroom above XOFF holds what is in flight
                    # (the memif ring included) and an ACK timeout for a deep queue, as
                    # test_pfc.py has them; PFC on priority 0, where the data goes.
                    r = Incast(p, n=n, rate=rate, buffer=max(buf, 4 << 20) if ll else buf,
                               red=red, cc=cc, sr=sr, secs=secs, timeout=18 if ll else 16,
                               lossless=lossless + (1,) if ll else None,
                               max_rate=max_rate, cc_set=cc_set).run()
                    q = f"{r['q_p50']}/{r['q_p99']}/{r['q_max']}"
                    drops = r['tail_dropped'] + r['red_dropped'] + r['headroom_dropped']
                    print(f"{n:4d} {cc:5s} {'SR ' if sr else 'GBN'}   {'yes' if ll else 'no ':3s}"
                          f"      {r['goodput'] / 1e6:12.1f} {r['util']:6.3f} "
                          f"{min(r['jain']) if r['jain'] else 0:5.3f}  {q:22s} {drops:7d} "
                          f"{r['red_marked']:6d} {r['cnp_tx'] / r['secs']:6.0f} "
                          f"{r['pause_tx']:7d} {r['retransmits']:6d} {sum(r['failed']):6d}",
                          flush=True)
                    if out:
                        out.write(json.dumps(r) + '\n')
EOF
