#!/usr/bin/python3
"""Every interop test against one Soft-RoCE VM: boots the rxe-vm harness's VM once (about 13 s
of emulated boot that each test would otherwise pay), runs the tests one after another with
ROCEDP_INTEROP_VM naming it (each takes the VM at its own IP MTU, then leaves none of its
tools running and the MTU as it found it), and stops the VM and removes its tap on every path.

Each test is the same script that runs alone with a VM of its own (test_rxe_*.py); its output
passes through. Ends with one line per test and exits 0 only when all passed; a test that
skips fails here, since the suite has already checked what the machine must have.

usage: test_rxe_suite.py BUILD_DIR [TEST...]   (TEST: perftest, perftest_cc, perftest_ud,
                                                pingpong, perftest_rcm, rping; default all)
Environment: as test_rxe_perftest.py.
"""
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.pop('ROCEDP_INTEROP_VM', None)
import test_rxe_perftest as base  # noqa: E402

# (name, script, arguments after the build directory), in the order meson ran them alone.
TESTS = [
    ('perftest', 'test_rxe_perftest.py', []),
    ('perftest_cc', 'test_rxe_perftest.py', ['--cc']),
    ('perftest_ud', 'test_rxe_perftest_ud.py', []),
    ('pingpong', 'test_rxe_pingpong.py', []),
    ('perftest_rcm', 'test_rxe_perftest_rcm.py', []),
    ('rping', 'test_rxe_rping.py', []),
]
VM, TAP, NET = 'rdps', 'tap-rdps', '10.99.13'
MTU = 9000
TEST_TIMEOUT = 900


class Owner:
    vm_up = tap_made = False


def run(build, name, script, args, env):
    t0 = time.time()
    base.log(f'=== interop suite: {name} ===')
    p = subprocess.Popen(['/usr/bin/python3', os.path.join(HERE, script), build] + args,
                         env=env, start_new_session=True)
    try:
        rc = p.wait(TEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        base.Rig.killpg(p, grace=30)
        rc = 'timeout'
    except base.Interrupted:
        # the test has its own handler: let it clean up first
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(120)
        raise
    return rc, time.time() - t0


def main():
    build, harness = base.environment(sys.argv[1:2])
    want = sys.argv[2:] or [t[0] for t in TESTS]
    unknown = set(want) - {t[0] for t in TESTS}
    if unknown:
        base.log(f'interop suite: no such test: {" ".join(sorted(unknown))}')
        return 2
    signal.signal(signal.SIGTERM, base.on_signal)
    signal.signal(signal.SIGINT, base.on_signal)
    vm_ip, host_ip, roced_ip = f'{NET}.1', f'{NET}.254', f'{NET}.2'
    owner, results = Owner(), []
    t_start = time.time()
    try:
        secs = base.boot_vm(harness, VM, TAP, host_ip, vm_ip, MTU, owner)
        base.log(f'interop suite: VM {VM} ({vm_ip}) on {TAP} ready in {secs:.1f} s')
        env = dict(os.environ, ROCEDP_INTEROP_VM=f'{VM} {TAP} {vm_ip} {host_ip} {roced_ip} '
                   f'{MTU}')
        for name, script, args in TESTS:
            if name in want:
                results.append((name,) + run(build, name, script, args, env))
    except (base.Failure, subprocess.TimeoutExpired, base.Interrupted) as e:
        results.append(('suite', f'{type(e).__name__}: {e}', time.time() - t_start))
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        base.drop_vm(harness, VM, TAP, owner)
    for name, rc, secs in results:
        base.log(f'interop suite: {name}: {"ok" if rc == 0 else f"FAILED ({rc})"} in '
                 f'{secs:.0f} s')
    failed = [r for r in results if r[1] != 0]
    base.log(f'interop suite: {len(results) - len(failed)} passed, {len(failed)} failed, '
             f'{time.time() - t_start:.0f} s in all')
    return 1 if failed or len(results) != len(want) else 0


if __name__ == '__main__':
    sys.exit(main())
