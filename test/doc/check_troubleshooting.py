#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every error line the programs can print is in doc/troubleshooting.md.

The rule: a user-facing error string is the format string (a C string literal; adjacent
literals joined, a macro between them resolved from a #define of a literal in that file, PRIu64
and kin taken as conversions; each branch of a ?: on its own) given as the format argument of
one of these calls in app/, lib/ and drivers/:

    die(FMT, ...)                          roced's startup errors (exit 2)
    fprintf(stderr, FMT, ...)              any program's error output
    usage_error(FMT, ...)                  rocedump's usage errors
    roce_ctl_error(reply, err, FMT, ...)   a control request's error, printed by rocectl
    ctl_error_reply(id, err, FMT)          the control protocol's own errors
    ctl_log(srv, ROCE_CTL_LOG_ERR or _WARNING, FMT, ...)   control socket complaints
    ROCE_LOG / PORT_LOG (ERR, WARNING or CRIT, FMT, ...)   log lines at warning or worse
    RTE_LOG(ERR or WARNING, TYPE, FMT, ...)
    ROCE_PERF_LOG(FMT, ...), perf_sess_err(s, FMT, ...)    rocectl perf's session errors
    snprintf(err, len, FMT, ...), snprintf(msg, len, FMT, ...)
                                           an error line built in a buffer named err or msg,
                                           printed by one of the above
    dp_fail(dp, FMT, ...)                  why the dataplane could not be created
    fail(err, errlen, FMT, ...)            an impairment spec refused (drivers/impair)

A format whose text outside its conversions has no word of three letters or more ("%s: %s")
says nothing on its own and is not required. Each line of a format (split at \\n) is a pattern:
its text, any white space matching any white space, each conversion matching any text. The
pattern must match inside one code span (`...`) or one line of a code block of the page, so the
page quotes messages as printed, with the variable parts filled in or named in capitals.

Usage: check_troubleshooting.py SOURCE_ROOT   (runs its own self-test first)
Exit 1 listing every missing string as FILE:LINE: "format".
"""
import os
import re
import sys
import tempfile

SOURCE_DIRS = ['app', 'lib', 'drivers']
PAGE = 'doc/troubleshooting.md'
LEVELS = r'(?:ERR|WARNING|CRIT|ALERT|EMERG)'

# (call name, how many arguments come before the format, a regex the arguments before it must
# match when joined by ",": None for any)
CALLS = [
    ('die', 0, None),
    ('fprintf', 1, r'stderr'),
    ('usage_error', 0, None),
    ('roce_ctl_error', 2, None),
    ('roce_ctl_verror', 2, None),
    ('ctl_error_reply', 2, None),
    ('ctl_log', 2, r'.*,ROCE_CTL_LOG_' + LEVELS),
    ('ROCE_LOG', 1, LEVELS),
    ('PORT_LOG', 1, LEVELS),
    ('RTE_LOG', 2, LEVELS + r',.*'),
    ('ROCE_PERF_LOG', 0, None),
    ('perf_sess_err', 1, None),
    ('snprintf', 2, r'(?:err|msg),.*'),
    ('dp_fail', 1, None),
    ('fail', 2, r'err,errlen'),
]

CALL_RE = re.compile(r'\b(' + '|'.join(c[0] for c in CALLS) + r')\s*\(')
TOKEN_RE = re.compile(r'''
    (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<chr>'(?:[^'\\\n]|\\.)*')
  | (?P<id>[A-Za-z_]\w*)
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<comma>,)
  | (?P<ws>\s+)
  | (?P<other>.)
''', re.X | re.S)
DEFINE_RE = re.compile(r'^\s*#\s*define\s+(\w+)\s+("(?:[^"\\\n]|\\.)*")\s*$', re.M)
# A printf conversion, or a placeholder the extraction put for a macro of unknown text.
CONV = r'%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|j|z|t|L)?[diouxXeEfgGcspa%]|\x00'


def strip_comments(text):
    """C comments out, strings and line numbers kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text[i] in '"\'':
            m = TOKEN_RE.match(text, i)
            s = m.group(0) if m and (m.group('str') or m.group('chr')) else text[i]
            out.append(s)
            i += len(s)
        else:
            out.append(text[i])
            i += 1
    return ''.join(out)


def unescape(lit):
    body = lit[1:-1]
    return re.sub(r'\\(x[0-9a-fA-F]+|[0-7]{1,3}|.)', lambda m: {
        'n': '\n', 't': '\t', '"': '"', "'": "'", '\\': '\\', 'r': '\r'}.get(
            m.group(1), '\x00' if m.group(1)[0] in 'x01234567' else m.group(1)), body)


def arguments(text, pos):
    """Split the call whose '(' is at @pos into its arguments, as token lists."""
    args, cur, depth = [], [], 0
    for m in TOKEN_RE.finditer(text, pos + 1):
        kind = m.lastgroup
        if kind == 'open':
            depth += 1
        elif kind == 'close':
            if depth == 0:
                args.append(cur)
                return args
            depth -= 1
        elif kind == 'comma' and depth == 0:
            args.append(cur)
            cur = []
            continue
        if kind != 'ws':
            cur.append((kind, m.group(0)))
    return args


def strings_of(tokens, defines):
    """The string literals of an argument: runs of adjacent literals (and macros) joined,
    each run one alternative."""
    runs, run = [], None
    for kind, tok in tokens + [('end', '')]:
        if kind == 'str':
            run = (run or '') + unescape(tok)
        elif kind == 'id' and run is not None or kind == 'id' and tok in defines:
            if tok in defines:
                run = (run or '') + unescape(defines[tok])
            elif tok.startswith('PRI'):
                run += 'd'
            else:
                run += '\x00'
        else:
            if run is not None:
                runs.append(run)
            run = None
    return runs


def formats(root):
    """Yield (file, line, format) for every error-reporting call."""
    for d in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding='utf-8', errors='replace') as fh:
                    text = strip_comments(fh.read())
                defines = dict(DEFINE_RE.findall(text))
                for m in CALL_RE.finditer(text):
                    # Definitions and declarations have no literal where the format goes.
                    name = m.group(1)
                    _, nb, want = next(c for c in CALLS if c[0] == name)
                    args = arguments(text, m.end() - 1)
                    if len(args) <= nb:
                        continue
                    lead = ','.join(''.join(t for _, t in a) for a in args[:nb])
                    if want is not None and not re.fullmatch(want, lead):
                        continue
                    line = text.count('\n', 0, m.start()) + 1
                    for s in strings_of(args[nb], defines):
                        yield os.path.relpath(path, root), line, s


def meaningful(line):
    return re.search(r'[A-Za-z]{3,}', re.sub(CONV, ' ', line)) is not None


def pattern(line):
    out, pos = [], 0
    for m in re.finditer(CONV, line):
        out.append(literal(line[pos:m.start()]))
        out.append('.*?' if m.group(0) != '%%' else '%')
        pos = m.end()
    out.append(literal(line[pos:]))
    return re.compile(''.join(out), re.S)


def literal(s):
    return r'\s+'.join(re.escape(p) for p in re.split(r'\s+', s)) if s.strip() else \
        (r'\s*' if s else '')


def page_quotes(text):
    """Code spans and code block lines of a markdown page, white space made single."""
    quotes = []
    blocks = re.split(r'^```[^\n]*\n', text, flags=re.M)
    for i, part in enumerate(blocks):
        if i % 2 == 1:
            quotes += [ln for ln in part.splitlines() if ln.strip()]
        else:
            quotes += re.findall(r'`([^`]+)`', part)
    return [' '.join(q.split()) for q in quotes]


def missing(root, page_path):
    with open(page_path, encoding='utf-8') as f:
        quotes = page_quotes(f.read())
    out, seen = [], set()
    for path, line, fmt in formats(root):
        for part in fmt.split('\n'):
            part = part.strip()
            if not meaningful(part) or part in seen:
                continue
            p = pattern(' '.join(part.split()))
            if not any(p.search(q) for q in quotes):
                seen.add(part)
                out.append(f'{path}:{line}: "{part}"')
    return out


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, 'app'))
        os.makedirs(os.path.join(root, 'doc'))
        with open(os.path.join(root, 'app', 'x.c'), 'w') as f:
            f.write('#define PROG "tool"\n'
                    'static void die(const char *fmt, ...);\n'
                    'int f(int a) {\n'
                    '\t/* die("in a comment") */\n'
                    '\tdie("control socket %s: no directory %s: create it", p, d);\n'
                    '\tfprintf(stderr, PROG ": bad %" PRIu64 " frames\\n", n);\n'
                    '\tfprintf(stdout, "not an error line at all\\n");\n'
                    '\tsnprintf(err, len, a ? "first branch %u" : "second branch", a);\n'
                    '\tsnprintf(buf, len, "not an error buffer");\n'
                    '\tROCE_LOG(INFO, "only information\\n");\n'
                    '\tROCE_LOG(WARNING, "a warning of %s\\n", x);\n'
                    '\tdie("%s: %s", a, b);\n'
                    '}\n')
        page = os.path.join(root, PAGE)
        with open(page, 'w') as f:
            f.write('`roced: control socket /run/x.sock: no directory /run: create it`\n'
                    '```\ntool: bad N frames\n```\n`first branch 3`\n`a warning of port 0`\n')
        got = missing(root, page)
        assert got == ['app/x.c:8: "second branch"'], got
        with open(page, 'a') as f:
            f.write('`second\nbranch`\n')
        got = missing(root, page)
        assert got == [], got
        with open(page, 'w') as f:
            f.write('`control socket`\n')
        got = missing(root, page)
        assert [g.split(':')[1] for g in got] == ['5', '6', '8', '8', '11'], got


def main():
    self_test()
    root = sys.argv[1]
    bad = missing(root, os.path.join(root, PAGE))
    if bad:
        print(f'{len(bad)} error strings of the sources are not in {PAGE}:')
        print('\n'.join(bad))
        return 1
    print(f'every error string of {", ".join(SOURCE_DIRS)} is in {PAGE}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
