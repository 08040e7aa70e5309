"""Load for bench/attach.sh: CLIENTS threads send requests to a server until the file
STOP exists and check every answer; prints a line per request, as it ends:
"START_MS END_MS ok|wrong|error" (wall-clock ms, the clock of date +%s%N).
  python3 attach_load.py c PORT STOP [CLIENTS]     bench/attach_server.c's protocol
  python3 attach_load.py http PORT STOP [CLIENTS]  GET / from python3 -m http.server"""
import os, random, socket, sys, threading, time, urllib.request

mode, port, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3]
clients = int(sys.argv[4]) if len(sys.argv) > 4 else 4


def expected(n, seed):
    # request_blocks() in attach_server.c, computed here
    s, total = seed | 1, 0
    m = (1 << 64) - 1
    for i in range(n):
        s ^= (s << 13) & m; s ^= s >> 7; s ^= (s << 17) & m
        size = 8 + s % 2000
        total += sum(size & 0xff for _ in range(0, size, 97)) + size
        if i % 4 == 0:
            s ^= (s << 13) & m; s ^= s >> 7; s ^= (s << 17) & m
    return total


lock = threading.Lock()


def log(t0, status):
    t1 = time.time()
    with lock:
        print(f"{t0 * 1e3:.3f} {t1 * 1e3:.3f} {status}", flush=True)


def c_client(k):
    rnd = random.Random(k)
    sock = socket.create_connection(("127.0.0.1", port))
    f = sock.makefile("rw")
    while not os.path.exists(stop):
        n, seed = rnd.randrange(1, 200), rnd.randrange(1, 1 << 40)
        t = time.time()
        f.write(f"{n} {seed}\n"); f.flush()
        line = f.readline()
        if not line:
            log(t, "error")
            return
        log(t, "ok" if int(line) == expected(n, seed) else "wrong")


def http_client(k):
    url = f"http://127.0.0.1:{port}/"
    first = None
    while not os.path.exists(stop):
        t = time.time()
        try:
            body = urllib.request.urlopen(url, timeout=10).read()
        except Exception:
            log(t, "error")
            continue
        first = first or body
        log(t, "ok" if body == first else "wrong")


threads = [threading.Thread(target=c_client if mode == "c" else http_client, args=(k,))
           for k in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
