#!/usr/bin/python3
"""The kazoo peer of gocurator's bench (../queue.go): the queue workload
alone, with kazoo's recipes (Debian's python3-kazoo), one JSON line of
results on stdout (the fields of ../result.go), exit status 0, 1 on an
error, 3 on a violation, 4 if nothing progressed for --stall. The harness
runs it as

  python3 kazoo_queue.py --peer kazoo --workload queue --clients 4 --variant lockpath \
      --connect 127.0.0.1:2181 --root /r --ops 400 --warmup 50 --warmup-time 1000ms \
      --stall 120000ms --session-timeout 30000ms ...

K producer clients and K consumer clients (each a KazooClient: a session
and its threads; all share one interpreter). lockpath: LockingQueue (a
consumer gets, locking, then consumes: the entry and the lock deleted in
one transaction), at least once; nolock: Queue (get reads and deletes
before returning), at most once. A Queue consumer that finds the queue
empty sets a child watch and looks again before it waits (a wake-up at
most 100 ms late if the watch is missed); a LockingQueue consumer waits
in get(timeout=0.1). Both use the client's default retry, as the Go and
Java peers use theirs.
"""
import json
import os
import resource
import struct
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.recipe.queue import LockingQueue, Queue

ITEM_SIZE = 100
DRAIN_WAIT_S = 30.0  # as queueDrainWait in ../queue.go

IMPL = "kazoo"
try:
    from importlib.metadata import version as _v
    IMPL = "kazoo " + _v("kazoo").replace(".dev0", "") + " (Python %d.%d)" % sys.version_info[:2]
except Exception:  # pragma: no cover
    pass

A = {}
progress = [0]


def dur_s(v):
    if v.endswith("us"):
        return int(v[:-2]) / 1e6
    if v.endswith("ms"):
        return int(v[:-2]) / 1e3
    usage("durations are given in us or ms, got " + v)


def usage(msg):
    print("kazoo_queue.py: " + msg, file=sys.stderr, flush=True)
    os._exit(2)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr, flush=True)
    os._exit(1)


def mono():
    return time.monotonic_ns()


def stall_guard(stall_s):
    def guard():
        last, since = progress[0], time.monotonic()
        while True:
            time.sleep(min(stall_s / 10, 1.0))
            p = progress[0]
            if p != last:
                last, since = p, time.monotonic()
            elif time.monotonic() - since > stall_s:
                print("STALL: no progress for %.0fs (kazoo queue)" % stall_s, file=sys.stderr, flush=True)
                os._exit(4)
    threading.Thread(target=guard, daemon=True).start()


def client():
    c = KazooClient(hosts=A["connect"], timeout=A["session"])
    c.start(timeout=30)
    progress[0] += 1
    return c


def item(seq):
    return struct.pack(">Q", seq) + bytes(ord("a") + i % 26 for i in range(8, ITEM_SIZE))


class Ledger:
    def __init__(self):
        self.mu = threading.Lock()
        self.put_at, self.taken_at, self.takes = {}, {}, {}
        self.distinct = self.doubled = self.unknown = 0
        self.last_take = 0
        self.want = -1
        self.done = threading.Event()

    def put(self, seq, at):
        with self.mu:
            self.put_at[seq] = at

    def take(self, v):
        now = mono()
        with self.mu:
            progress[0] += 1
            if len(v) != ITEM_SIZE:
                self.unknown += 1
                print("VIOLATION: queue: an item of %d bytes, not one of ours" % len(v), file=sys.stderr, flush=True)
                return
            seq = struct.unpack(">Q", v[:8])[0]
            if seq not in self.put_at:
                self.unknown += 1
                print("VIOLATION: queue: item %d taken, never put" % seq, file=sys.stderr, flush=True)
                return
            n = self.takes.get(seq, 0) + 1
            self.takes[seq] = n
            if n > 1:
                self.doubled += 1
                print("VIOLATION: queue: item %d taken %d times" % (seq, n), file=sys.stderr, flush=True)
                return
            self.taken_at[seq] = now
            self.last_take = max(self.last_take, now)
            self.distinct += 1
            if self.distinct == self.want:
                self.done.set()

    def expect(self, n):
        with self.mu:
            self.want = n
            if self.distinct == n:
                self.done.set()


def consume_locking(c, path, ledger, stop):
    q = LockingQueue(c, path)
    while not stop.is_set():
        v = q.get(timeout=0.1)
        if v is None:
            continue
        ledger.take(v)
        if not q.consume():
            fail("LockingQueue.consume: the lock was not ours any more")


def consume_plain(c, path, ledger, stop):
    q = Queue(c, path)
    changed = threading.Event()
    while not stop.is_set():
        v = q.get()
        if v is None:
            changed.clear()
            try:
                c.get_children(path, watch=lambda e: changed.set())
            except Exception:
                pass
            v = q.get()
            if v is None:
                changed.wait(0.1)
                continue
        ledger.take(v)


def run(prod, cons, path, lock, ops, min_s):
    qpath = path + "/queue"
    ledger, stop = Ledger(), threading.Event()
    errors = []

    def guarded(fn, *args):
        try:
            fn(*args)
        except Exception as e:  # a failed worker: nothing sensible left to measure
            errors.append(e)
            fail("%s: %r" % (fn.__name__, e))

    target = consume_locking if lock else consume_plain
    consumers = [threading.Thread(target=guarded, args=(target, c, qpath, ledger, stop)) for c in cons]
    for t in consumers:
        t.start()
    queues = [LockingQueue(c, qpath) if lock else Queue(c, qpath) for c in prod]
    nxt = [0]
    nmu = threading.Lock()
    made = [0]
    gate = threading.Event()
    t0 = [0]

    def produce(q):
        gate.wait()
        while True:
            with nmu:
                i = nxt[0]
                nxt[0] += 1
            if not (i < ops or min_s > 0 and (mono() - t0[0]) / 1e9 < min_s):
                return
            ledger.put(i, mono())
            q.put(item(i))
            with nmu:
                made[0] += 1
            progress[0] += 1

    producers = [threading.Thread(target=guarded, args=(produce, q)) for q in queues]
    for t in producers:
        t.start()
    cpu0 = cpu()
    t0[0] = mono()
    gate.set()
    for t in producers:
        t.join()
    put_wall = (mono() - t0[0]) / 1e9
    n = made[0]
    ledger.expect(n)
    violations = 0
    last, since = ledger.distinct, time.monotonic()
    while not ledger.done.wait(0.1):
        got = ledger.distinct
        if got != last:
            last, since = got, time.monotonic()
        elif time.monotonic() - since > DRAIN_WAIT_S:
            print("VIOLATION: queue: %d of %d items never taken (none for %.0fs)" % (n - got, n, DRAIN_WAIT_S), file=sys.stderr, flush=True)
            violations += n - got
            break
    cpu_s = cpu() - cpu0
    # an item counts as taken when get returns it, before consume deletes it
    # (LockingQueue): let the deletes finish before the consumers stop
    entries = qpath + "/entries" if lock else qpath
    end = time.monotonic() + DRAIN_WAIT_S
    while time.monotonic() < end:
        try:
            if not prod[0].get_children(entries):
                break
        except NoNodeError:
            break
        time.sleep(0.005)
    stop.set()
    for t in consumers:  # each finishes the item in hand: a double shows now
        t.join()
    # an item consumed but left in the queue would be taken again: a double in waiting
    try:
        left = len(prod[0].get_children(entries))
    except NoNodeError:
        left = 0
    if left:
        print("VIOLATION: queue: %d items left in the queue after all were taken and the consumers closed" % left, file=sys.stderr, flush=True)
        violations += left
    with ledger.mu:
        violations += ledger.doubled + ledger.unknown
        lat = sorted(ledger.taken_at[s] - ledger.put_at[s] for s in ledger.taken_at)
        wall = (ledger.last_take - t0[0]) / 1e9
    return dict(items=n, wall=wall, put_wall=put_wall, cpu=cpu_s, lat=lat, violations=violations)


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def pct(s, p):
    if not s:
        return 0.0
    i = max(0, min(len(s) - 1, -(-int(p * len(s)) // 100) - 1))
    return s[i] / 1e6


def vmhwm():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def main():
    args = sys.argv[1:]
    if len(args) % 2:
        usage("odd number of arguments")
    for i in range(0, len(args), 2):
        A[args[i].lstrip("-")] = args[i + 1]
    if A.get("workload") != "queue":
        usage("the kazoo peer runs the queue workload alone, not %r" % A.get("workload"))
    variant = A.get("variant", "")
    if variant not in ("lockpath", "nolock"):
        usage("--variant %r: want lockpath or nolock" % variant)
    A["session"] = dur_s(A.get("session-timeout", "30000ms"))
    stall_guard(dur_s(A.get("stall", "120000ms")))
    k, ops = int(A["clients"]), int(A["ops"])
    root = A["root"]
    prod = [client() for _ in range(k)]
    cons = [client() for _ in range(k)]
    lock = variant == "lockpath"
    warm = run(prod, cons, root + "/warm", lock, int(A.get("warmup", "0")), dur_s(A.get("warmup-time", "0ms")))
    t = run(prod, cons, root + "/items", lock, ops, 0)
    for c in prod + cons:
        c.stop()
        c.close()
    n = t["items"]
    r = {
        "peer": "kazoo", "impl": IMPL, "workload": "queue", "clients": k, "variant": variant,
        "ops": n, "wall_s": round(t["wall"], 3), "ops_per_s": round(n / t["wall"], 3),
        "put_per_s": round(n / t["put_wall"], 3),
        "p50_ms": round(pct(t["lat"], 50), 3), "p99_ms": round(pct(t["lat"], 99), 3),
        "cpu_ms_per_op": round(t["cpu"] * 1000 / max(n, 1), 3),
        "violations": warm["violations"] + t["violations"], "checked": n,
        "warmup_ops": warm["items"], "warmup_s": round(warm["wall"], 3),
        "vmhwm_kb": vmhwm(), "exit": 0,
    }
    print(json.dumps(r, separators=(",", ":")), flush=True)
    if r["violations"]:
        print("FAIL: %d violations" % r["violations"], file=sys.stderr, flush=True)
        os._exit(3)
    os._exit(0)


if __name__ == "__main__":
    main()
