#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Module rules over the #include lines (doc/architecture.md, "Modules").

Every C file and header of a module is checked, and so is every project header it reaches
through quoted includes (the chain is printed), so a rule cannot be dodged through another
module's header. System headers are not followed.

Usage: check_modules.py SOURCE_ROOT     (runs its own self-test first)
"""
import fnmatch
import os
import re
import sys
import tempfile

# The rule table. A pattern is matched (fnmatch) against the header as written in #include;
# 'module:DIR' stands for every header of that module.
RULES = [
    ('lib/wire', ['module:lib/transport'],
     'wire sits below transport'),
    ('lib/transport', ['rte_ethdev*.h', 'rte_eth_*.h', 'rte_lcore.h', 'rte_launch.h',
                       'module:lib/ctl', 'jansson.h'],
     'the transport runs without ports, lcores or the control socket'),
    ('lib/cc', ['rte_ethdev*.h', 'rte_eth_*.h', 'rte_lcore.h', 'rte_launch.h',
                'module:lib/ctl', 'jansson.h'],
     'congestion control runs on the caller\'s clock, without ports, lcores or the control '
     'socket'),
    ('lib/cm', ['rte_ethdev*.h', 'rte_eth_*.h', 'rte_lcore.h', 'rte_launch.h',
                'module:lib/ctl', 'module:lib/dataplane', 'jansson.h'],
     'the CM codec parses and builds MADs: no ports, lcores, workers or control socket'),
    ('app/rocectl', ['rte_*.h', '*/rte_*.h', 'cmdline*.h', 'module:lib/dataplane'],
     'rocectl only speaks the control protocol'),
]

# Where project headers live: quoted includes are resolved by name among these.
HEADER_ROOTS = ['lib', 'drivers', 'app']

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def sources(root, d):
    for dirpath, _, files in os.walk(os.path.join(root, d)):
        for f in sorted(files):
            if f.endswith(('.c', '.h')):
                yield os.path.join(dirpath, f)


def includes(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return INCLUDE.findall(f.read())


def check(root):
    """@return the violations, as lines."""
    headers = {}
    for d in HEADER_ROOTS:
        for p in sources(root, d):
            if p.endswith('.h'):
                headers.setdefault(os.path.basename(p), p)
    bad = []
    for mod, patterns, why in RULES:
        plain = [p for p in patterns if not p.startswith('module:')]
        banned = set()
        for p in patterns:
            if p.startswith('module:'):
                banned |= {os.path.basename(h) for h in sources(root, p[7:]) if h.endswith('.h')}
        for src in sources(root, mod):
            # Depth-first over quoted project headers; each reached header once per file.
            seen, stack = set(), [(src, [])]
            while stack:
                path, chain = stack.pop()
                for kind, name in includes(path):
                    base = os.path.basename(name)
                    hit = base in banned or any(fnmatch.fnmatch(name, p) for p in plain)
                    if hit:
                        via = ''.join(f'{c} -> ' for c in chain)
                        bad.append(f'{os.path.relpath(src, root)}: includes {via}{name} '
                                   f'({mod}: {why})')
                    # Past a banned header, what it includes is the same violation.
                    if hit or kind != '"' or base not in headers or base in seen:
                        continue
                    seen.add(base)
                    # The module's own headers are checked as sources already.
                    if not headers[base].startswith(os.path.join(root, mod) + os.sep):
                        stack.append((headers[base], chain + [base]))
    return bad


def self_test():
    """The rules catch a direct and an indirect violation per rule, and pass a clean tree."""
    files = {
        'lib/wire/ok.c': '#include <rte_mbuf.h>\n#include "roce_wire.h"\n',
        'lib/wire/roce_wire.h': '#include <stdint.h>\n',
        'lib/transport/roce_transport.h': '#include "roce_wire.h"\n',
        'lib/ctl/roce_ctl.h': '#include <jansson.h>\n',
        'lib/dataplane/roce_dataplane.h': '#include <rte_ether.h>\n',
        'lib/perf/roce_perf_oob.h': '#include <stdint.h>\n',
        'app/rocectl/ok.c': '#include "roce_ctl.h"\n#include "roce_perf_oob.h"\n',
    }
    bad_files = {
        'lib/wire/bad.c': '#include "roce_transport.h"\n',
        'lib/wire/bad2.c': '#  include "wire_helper_x.h"\n',
        'lib/net/wire_helper_x.h': '#include "roce_transport.h"\n',
        'lib/transport/bad.c': '#include <rte_ethdev.h>\n#include <rte_lcore.h>\n'
                               '#include "roce_ctl.h"\n',
        'lib/transport/bad2.c': '#include <jansson.h>\n',
        'app/rocectl/bad.c': '#include <rte_mbuf.h>\n#include "roce_dataplane.h"\n',
        'app/rocectl/bad2.c': '#include "roce_perf_x.h"\n',
        'lib/perf/roce_perf_x.h': '#include <rte_common.h>\n',
    }
    want = [
        'lib/wire/bad.c: includes roce_transport.h',
        'lib/wire/bad2.c: includes wire_helper_x.h -> roce_transport.h',
        'lib/transport/bad.c: includes rte_ethdev.h',
        'lib/transport/bad.c: includes rte_lcore.h',
        'lib/transport/bad.c: includes roce_ctl.h',
        'lib/transport/bad2.c: includes jansson.h',
        'app/rocectl/bad.c: includes rte_mbuf.h',
        'app/rocectl/bad.c: includes roce_dataplane.h',
        'app/rocectl/bad2.c: includes roce_perf_x.h -> rte_common.h',
    ]

    def tree(d, content):
        for rel, text in content.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), 'w') as f:
                f.write(text)

    ok = True
    with tempfile.TemporaryDirectory() as d:
        tree(d, files)
        got = check(d)
        if got:
            print('self-test: a clean tree fails:\n  ' + '\n  '.join(got), file=sys.stderr)
            ok = False
        tree(d, bad_files)
        got = check(d)
        for w in want:
            if not any(g.startswith(w + ' (') for g in got):
                print(f'self-test: not caught: {w}', file=sys.stderr)
                ok = False
        if len(got) != len(want):
            print('self-test: unexpected:\n  ' + '\n  '.join(
                g for g in got if not any(g.startswith(w + ' (') for w in want)),
                file=sys.stderr)
            ok = False
    return ok


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not self_test():
        return 1
    bad = check(os.path.abspath(sys.argv[1]))
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print(f'{len(bad)} include(s) break the module rules', file=sys.stderr)
        return 1
    print(f'module rules hold ({len(RULES)} rules)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
