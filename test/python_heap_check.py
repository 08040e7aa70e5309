#!/usr/bin/env python3
# Checks a heapprof-analyze JSON report of test/python_heap.py against what the script
# printed (its "expect" and "chain" lines); one "ok NAME" or "not ok NAME: why" a line.
#   bytes   REPORT OUT [PHASE]   each function's live bytes (stacks through its Python
#                                frame) within its tolerance, at the allocating line, and
#                                the heaviest stack's Python frames those of sys._getframe;
#                                merged: no _PyEval_EvalFrameDefault frame left there
#   python  REPORT OUT           --python=python: the allocating native frame, then only
#                                Python frames
#   native  REPORT               --python=native: no Python frame, the evaluation loop there
#   diff    REPORT OUT           --base: phase 2 minus phase 1, growth and shrinkage apart
#   leaks   REPORT OUT           --leaks=all: leak_native definitely lost, the others
#                                still reachable
#   by      TABLE OUT            --by=function: each function's total
# Tolerance: a function's payload (sys.getsizeof of its bytearrays: the 56-byte object and
# the n + 1 byte buffer) is exact; around it are the list that holds them (8 bytes a
# pointer, over-allocated by up to 1/8 + 6, as CPython's list_resize does) and up to
# 1 KiB of interpreter objects (a list object, a frame object): 8 bytes a block + 1024.
import json, sys

PY = '[python]'


def tolerance(blocks):
	return 8 * blocks + 1024


def expects(out, phase):
	# NAME -> (bytes, blocks) as of the end of phase 1 or 2; chains (first seen)
	want, chains, p = {}, {}, 1
	for line in open(out):
		w = line.split()
		if line.startswith('ready'):
			if p == phase:
				break
			p += 1
		elif w and w[0] == 'expect':
			want[w[1]] = (int(w[2]), int(w[3]))
		elif w and w[0] == 'chain' and w[1] not in chains:
			chains[w[1]] = [tuple(f.rsplit(' ', 1)) for f in line.split(' ', 2)[2].strip().split(' | ')]
		elif w and w[0] == 'leaked':
			want[w[1]] = (int(w[2]), int(w[3]))
	return want, chains


def stacks(report):
	return json.load(open(report))['stacks']


def pyframes(s):
	return [f for f in s['frames'] if f['module'] == PY]


def through(ss, name):
	return [s for s in ss if any(f['function'] == name for f in pyframes(s))]


def innermost(s, name):
	f = next(f for f in pyframes(s) if f['function'] == name)
	return f['file'], f['line']


def say(ok, name, why):
	print(('ok %s' % name) if ok else ('not ok %s: %s' % (name, why)))


def check_bytes(report, out, phase=1):
	want, chains = expects(out, phase)
	ss = stacks(report)
	for name, (payload, blocks) in sorted(want.items()):
		if name == 'leak_native':
			continue
		mine = through(ss, name)
		got = sum(s['value'] for s in mine)
		tol = tolerance(blocks)
		ok, why = payload <= got <= payload + tol, '%d bytes, want %d..%d' % (got, payload, payload + tol)
		ch = chains.get(name)
		if ok and ch and payload:
			# the payload sits at the allocating line (file and line of the innermost frame)
			at = [s for s in mine if innermost(s, name) == (ch[0][0].split(' ', 1)[1], int(ch[0][1]))]
			at_bytes = sum(s['value'] for s in at)
			heavy = max(mine, key=lambda s: s['value'])
			py = pyframes(heavy)
			i = [f['function'] for f in py].index(name)
			seen = [('%s %s' % (f['function'], f['file']), str(f['line'])) for f in py[i:]]
			if at_bytes < payload:
				ok, why = False, '%d bytes at %s:%s, want %d' % (at_bytes, ch[0][0].split(' ', 1)[1], ch[0][1], payload)
			elif seen != ch:
				ok, why = False, 'frames %s, want %s' % (seen, ch)
			elif any(f['function'] == '_PyEval_EvalFrameDefault' for f in heavy['frames']):
				ok, why = False, '_PyEval_EvalFrameDefault left in %s' % [f['function'] for f in heavy['frames']]
		say(ok, name, why)


def check_python(report, out):
	want, _ = expects(out, 1)
	ss = stacks(report)
	for name in sorted(want):
		bad = [s for s in through(ss, name)
		       if s['frames'][0]['module'] == PY or any(f['module'] != PY for f in s['frames'][1:])]
		mine = through(ss, name)
		say(mine and not bad, name, 'no stack' if not mine else
		    'not one native frame then Python frames: %s' % [f['function'] for f in bad[0]['frames']])


def check_native(report):
	ss = stacks(report)
	py = [s for s in ss if pyframes(s)]
	ev = [s for s in ss if any(f['function'] == '_PyEval_EvalFrameDefault' for f in s['frames'])]
	say(not py and ev, 'native', '%d stacks with Python frames, %d with the evaluation loop' % (len(py), len(ev)))


def check_diff(report, out):
	old, _ = expects(out, 1)
	new, _ = expects(out, 2)
	ss = stacks(report)
	for name in ('Cache.fill', 'produce', 'helper'):
		delta = new[name][0] - old[name][0]
		mine = through(ss, name)
		got = sum(s['value'] for s in mine)
		tol = tolerance(max(new[name][1], old[name][1]))
		# a stack of the old dump not matched to the same one of the new would show
		# as a shrinkage and a growth side by side
		wrong = [s['value'] for s in mine if (s['value'] < 0) != (delta < 0) and s['value']]
		ok = (delta - tol <= got <= delta + tol if delta else got == 0) and not wrong
		say(ok, name, '%d bytes, want %d within %d; stacks of the wrong sign %s' % (got, delta, tol, wrong))


def check_leaks(report, out):
	want, _ = expects(out, 1)
	ss = stacks(report)
	for name, (payload, blocks) in sorted(want.items()):
		mine = through(ss, name)
		cls = 'definitely lost' if name == 'leak_native' else 'still reachable'
		got = sum(s['value'] for s in mine if s['leak_class'] == cls)
		other = sum(s['value'] for s in mine if s['leak_class'] != cls)
		hi = payload if name == 'leak_native' else payload + tolerance(blocks)
		say(payload <= got <= hi and not other, name,
		    '%s %d bytes (want %d..%d), %d bytes in other classes' % (cls, got, payload, hi, other))
	lost = [s for s in ss if s['leak_class'] == 'definitely lost']
	say(lost and all(through([s], 'leak_native') for s in lost), 'only leak_native lost',
	    'lost: %s' % [[f['function'] for f in s['frames']] for s in lost])


def check_by(table, out):
	want, _ = expects(out, 1)
	rows = {}
	for line in open(table):
		w = line.split()
		if len(w) >= 6 and w[0].isdigit():
			rows[' '.join(w[5:])] = int(w[2])
	for name, (payload, blocks) in sorted(want.items()):
		if name == 'leak_native':
			continue
		got = rows.get(name)
		say(got is not None and payload <= got <= payload + tolerance(blocks), name,
		    'total %s, want %d..%d' % (got, payload, payload + tolerance(blocks)))


if __name__ == '__main__':
	what, args = sys.argv[1], sys.argv[2:]
	if what == 'bytes':
		check_bytes(args[0], args[1], int(args[2]) if len(args) > 2 else 1)
	else:
		{'python': check_python, 'native': check_native, 'diff': check_diff,
		 'leaks': check_leaks, 'by': check_by}[what](*args)
