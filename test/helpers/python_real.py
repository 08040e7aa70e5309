# A real program's mix of Python memory (t3023, bench/python_cost.sh): json-loads N small
# documents into a dict index (build_index), fills an in-memory sqlite table
# (fill_table) and compiles 500 regular expressions (compile_patterns). Most of its
# objects are 512 bytes or less: CPython serves them from its own allocator (pymalloc).
# Usage: python_real.py [N [wait]]: N documents (30000); with "wait", print "ready" and
# sleep to be dumped, else exit.
import json, re, sqlite3, sys, time


def make_docs(n):
    return ['{"id": %d, "name": "user%d", "tags": ["a%d", "b", "c"], "score": %d.5, '
            '"active": true, "meta": {"k": %d, "v": "x%dy"}}' % (i, i, i % 50, i, i % 7, i)
            for i in range(n)]


def build_index(docs):
    index = {}
    for d in docs:
        o = json.loads(d)
        index[o["id"]] = o
    return index


def fill_table(n):
    db = sqlite3.connect(":memory:")
    db.execute("create table t (id integer primary key, name text, body text)")
    db.executemany("insert into t values (?, ?, ?)",
                   ((i, "n%d" % i, "body %d " % i * 8) for i in range(n)))
    db.commit()
    return db


def compile_patterns(n):
    return [re.compile(r"(?P<a>\w+)-%d-(?P<b>[a-z]{2,%d})\s*(x|y|z)+$" % (i, 3 + i % 20))
            for i in range(n)]


n = int(sys.argv[1]) if len(sys.argv) > 1 else 30000
docs = make_docs(n)
index = build_index(docs)
del docs
db = fill_table(2 * n // 3)
pats = compile_patterns(500)
if len(sys.argv) > 2 and sys.argv[2] == "wait":
    print("ready", flush=True)
    time.sleep(600)
