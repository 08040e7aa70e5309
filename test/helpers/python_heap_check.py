#!/usr/bin/env python3
# Checks a heapprof-analyze JSON report of test/helpers/python_heap.py against what the script
# printed (its "expect", "chain" and "leaked" lines); one "ok NAME [# figures]" or
# "not ok NAME: why" a line.
#   bytes   REPORT OUT [PHASE]   each function's live bytes (stacks through its Python
#                                frame) within its tolerance, at the allocating file and
#                                line, and the heaviest stack's Python frames those of
#                                sys._getframe; merged: no _PyEval_EvalFrameDefault left
#   python  REPORT OUT           --python=python: the native frame that called the
#                                allocator (with what is inlined at its pc), then only
#                                Python frames
#   native  REPORT               --python=native (or an interpreter heapprof does not
#                                know): no Python frame, the evaluation loop's frames there
#   diff    REPORT OUT           --base: phase 2 minus phase 1 (of one run or two), the
#                                stacks of both matched
#   leaks   REPORT OUT           --leaks=all: every function's bytes over the classes;
#                                definitely lost: only leak_native's blocks, none reachable
#   by      TABLE OUT            --by=function: each function's total
# Tolerance: a function's payload (sys.getsizeof of its bytearrays: the 56-byte object and
# the n + 1 byte buffer) is exact; around it are the list that holds them (8 bytes a
# pointer, over-allocated by up to 1/8 + 6, as CPython's list_resize does) and up to
# 1 KiB of interpreter objects (a list object, a frame object): 8 bytes a block + 1024.
import json, sys

PY = '[python]'
EVAL = ('_PyEval_EvalFrameDefault', 'PyEval_EvalFrameEx')	# the latter up to 3.5


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
		elif w and w[0] in ('expect', 'leaked'):
			want[w[1]] = (int(w[2]), int(w[3]))
		elif w and w[0] == 'chain' and w[1] not in chains:
			chains[w[1]] = [tuple(f.rsplit(' ', 1)) for f in line.split(' ', 2)[2].strip().split(' | ')]
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


def say(ok, name, why, figures=None):
	if ok:
		print('ok %s%s' % (name, ' # ' + figures if figures else ''))
	else:
		print('not ok %s: %s' % (name, why))


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
			where = (ch[0][0].split(' ', 1)[1], int(ch[0][1]))
			at = sum(s['value'] for s in mine if innermost(s, name) == where)
			heavy = max(mine, key=lambda s: s['value'])
			py = pyframes(heavy)
			i = [f['function'] for f in py].index(name)
			seen = [('%s %s' % (f['function'], f['file']), str(f['line'])) for f in py[i:]]
			if at < payload:
				ok, why = False, '%d bytes at %s:%d, want %d' % (at, where[0], where[1], payload)
			elif seen != ch:
				ok, why = False, 'frames %s, want %s' % (seen, ch)
			elif any(f['function'] in EVAL for f in heavy['frames']):
				ok, why = False, 'an evaluation loop frame left in %s' % [f['function'] for f in heavy['frames']]
		say(ok, name, why, '%d bytes: payload %d + %d' % (got, payload, got - payload))


def native_then_python(frames):
	# one native pc (the functions inlined at it are frames of their own), then Python
	n = next((i for i, f in enumerate(frames) if f['module'] == PY), len(frames))
	return (n >= 1 and len({f['pc'] for f in frames[:n]}) == 1 and
		all(f['module'] == PY for f in frames[n:]))


def check_python(report, out):
	want, _ = expects(out, 1)
	ss = stacks(report)
	for name in sorted(want):
		mine = through(ss, name)
		bad = [s for s in mine if not native_then_python(s['frames'])]
		why = 'no stack' if not mine else 'not one native pc then Python frames: %s' % (
			[(f['function'], f['pc']) for f in bad[0]['frames']] if bad else '')
		say(mine and not bad, name, why)


def check_native(report):
	ss = stacks(report)
	py = [s for s in ss if pyframes(s)]
	ev = [s for s in ss if any(f['function'] in EVAL for f in s['frames'])]
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
		# a stack of OLD not matched to the same one of NEW shows as a shrinkage and a
		# growth side by side; the list holding the payload may move to another stack
		wrong = sum(abs(s['value']) for s in mine if s['value'] and (s['value'] < 0) != (delta < 0))
		ok = delta - tol <= got <= delta + tol and wrong <= tol
		say(ok, name, '%d bytes, want %d within %d; %d bytes in stacks of the other sign' %
		    (got, delta, tol, wrong), '%d bytes: %d + %d, %d the other way' % (got, delta, got - delta, wrong))


def check_leaks(report, out):
	# Which class an object's blocks fall in is the classifier's business (pointers to
	# CPython's GC objects point past their PyGC_Head: possibly lost, as memcheck says);
	# here each function keeps its bytes across the classes, and what is definitely lost
	# is leak_native's 777-byte blocks, under that Python frame.
	want, _ = expects(out, 1)
	ss = stacks(report)
	for name, (payload, blocks) in sorted(want.items()):
		got = sum(s['value'] for s in through(ss, name))
		hi = payload + (0 if name == 'leak_native' else tolerance(blocks))
		say(payload <= got <= hi, name, '%d bytes in all classes, want %d..%d' % (got, payload, hi))
	# The scan is conservative: 3.12's ctypes leaves an address inside one of them on
	# the finished thread's stack, which glibc keeps for the next thread (possibly lost).
	lost = [s for s in ss if s['leak_class'] == 'definitely lost']
	kept = sum(s['value'] for s in through(ss, 'leak_native') if s['leak_class'] == 'still reachable')
	say(lost and not kept and
	    all(through([s], 'leak_native') and s['sizes'] == [{'size': 777, 'count': s['blocks']}] for s in lost),
	    'leak_native definitely lost',
	    'lost: %s; %d bytes of leak_native still reachable' %
	    ([(s['value'], [f['function'] for f in s['frames']]) for s in lost], kept),
	    '%d of %d bytes' % (sum(s['value'] for s in lost), want['leak_native'][0]))


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
