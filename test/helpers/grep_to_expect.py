#!/usr/bin/env python3
"""Rewrite bare grep assertions of test scripts in place so that they say what failed:
'grep -q[xEFiw] PATTERN FILE' and 'CMD | grep -q PATTERN', used as an assertion (at the
start of a line, after && or a pipe, or after the opening quote of a case), become
'expect_grep [-x...] PATTERN [FILE]' (test/lib.sh); '! grep -q PATTERN FILE' becomes
expect_no_grep. Conditions (if, while, until, wait_for, a grep followed by ||) and any
grep with other options or more arguments are left as they are. Line for line, so the
change merges with other edits. Usage: grep_to_expect.py test/tNNNN-*.sh"""
import re
import sys

WORD = r'''(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'&|;()<>]+)+'''
GREP = re.compile(r'(?P<neg>!\s+)?grep(?P<opts>(?:\s+-[A-Za-z]+)+|\s+-q\s+--)\s+(?P<args>'
                  + WORD + r'(?:\s+' + WORD + r')?)(?=\s*(?:&&|\|\||\||;|\)|\}|$|\'$))')
CONDITIONS = ('if', 'while', 'until', 'elif', 'wait_for', '||', '!', 'then', 'do')


def flags_of(opts):
    """expect_grep's options for grep's, or None when grep had one it does not take"""
    flags, quiet = [], False
    for o in opts:
        if o == '--':
            continue
        for c in o[1:]:
            if c == 'q':
                quiet = True
            elif c in 'xEFiw':
                flags.append('-' + c)
            else:
                return None
    return flags if quiet else None


def convert(line):
    out, pos = [], 0
    for m in GREP.finditer(line):
        before = line[:m.start()].rstrip()
        flags = flags_of(m.group('opts').split())
        args = re.findall(WORD, m.group('args'))
        piped = before.endswith('|') and not before.endswith('||')
        prev = before.split()[-1] if before else ''
        if (flags is None or line[m.end():].lstrip().startswith('||') or prev in CONDITIONS
                or not (before == '' or piped or before.endswith(('&&', "'", '{')))
                or (piped and (m.group('neg') or len(args) != 1))
                or (not piped and len(args) != 2)):
            continue
        if args[0].lstrip('"\'').startswith('-'):
            flags.append('--')
        name = 'expect_no_grep' if m.group('neg') else 'expect_grep'
        out += [line[pos:m.start()], ' '.join([name] + flags + [m.group('args')])]
        pos = m.end()
    return ''.join(out) + line[pos:]


for path in sys.argv[1:]:
    lines = open(path).read().split('\n')
    open(path, 'w').write('\n'.join(convert(line) for line in lines))
