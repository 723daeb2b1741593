// The curator peer's workloads: what ../workloads.go, ../rwlock.go and
// ../waiters.go do for the Go peers, with InterProcessMutex,
// InterProcessSemaphoreV2(3) and InterProcessReadWriteLock. Each worker is
// a thread with its own CuratorFramework (session) and its own recipe
// object; the warm-up (at least --warmup acquisitions of the same shape and
// at least --warmup-time) runs on the same sessions on another path before
// the timed part, and CPU is measured around the timed part only. After it, the checking pass of ../workloads.go: --check
// acquisitions of the same shape on a third path, each holding
// --check-hold, not reported (at --hold 0 the holder counts alone would
// almost never see two holders at once).
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;

final class Workloads {
    static final int LEASES = 3;

    interface Release { void run() throws Exception; }
    interface Acquire { Release run() throws Exception; }
    interface Acquirer { Acquire make(CuratorFramework c, String path) throws Exception; }
    interface Body { long run(int worker, int i) throws Exception; } // returns the latency, ns

    static Acquire mutex(CuratorFramework c, String path) {
        InterProcessMutex m = new InterProcessMutex(c, path);
        return () -> { m.acquire(); return m::release; };
    }

    static Acquire semaphore(CuratorFramework c, String path) {
        InterProcessSemaphoreV2 s = new InterProcessSemaphoreV2(c, path, LEASES);
        return () -> { Lease l = s.acquire(); return l::close; }; // close() returns the lease
    }

    /**
     * who holds right now, checked against the limit: counted in this
     * process, or in the holder counts the processes of a processes job
     * share (--shared, one int per part: ../processes.go).
     */
    static final class Holders {
        final AtomicInteger cur = new AtomicInteger(), max = new AtomicInteger();
        final AtomicLong violations = new AtomicLong();
        final int limit;
        final MappedByteBuffer shared; // null: cur
        final int slot;
        Holders(int limit) { this(limit, null, 0); }
        Holders(int limit, MappedByteBuffer shared, int slot) { this.limit = limit; this.shared = shared; this.slot = slot; }
        private int add(int d) {
            return shared == null ? cur.addAndGet(d) : (int) SHARED.getAndAdd(shared, 4 * slot, d) + d;
        }
        void enter(String what) {
            int n = add(1);
            max.accumulateAndGet(n, Math::max);
            if (n > limit) {
                violations.incrementAndGet();
                System.err.println("VIOLATION: " + what + ": " + n + " holders, limit " + limit);
            }
        }
        void leave() { add(-1); }
    }

    /** atomic ints in a mapped file (a direct buffer, so atomic access is supported). */
    static final VarHandle SHARED = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    /** the parts of a run, in the order of ../processes.go's slots. */
    static final String[] PARTS = {"warm", "lock", "check"};

    /** a Holders per part: this process's own, or shared (--shared). */
    static Holders[] partHolders(int limit) throws IOException {
        MappedByteBuffer m = null;
        if (!Bench.shared.isEmpty()) {
            try (FileChannel ch = FileChannel.open(Path.of(Bench.shared), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                m = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4 * PARTS.length); // outlives the channel
            }
        }
        Holders[] hs = new Holders[PARTS.length];
        for (int i = 0; i < hs.length; i++) hs[i] = new Holders(limit, m, i);
        return hs;
    }

    /** a process of a processes job: ready, then wait for the others (../processes.go). */
    static void waitGate() throws Exception {
        if (Bench.gate.isEmpty()) return;
        Files.createFile(Path.of(Bench.gate, "ready-" + ProcessHandle.current().pid()));
        Path go = Path.of(Bench.gate, "go");
        while (!Files.exists(go)) Thread.sleep(1);
    }

    static final class Timed { long wall, cpu; long[] lat; int made; }

    /**
     * ops acquisitions over the workers, one thread each, started together,
     * and more until at least minNanos have passed (the warm-up; 0 for a
     * timed part); the latencies are those of the first ops.
     */
    static Timed timed(int workers, int ops, long minNanos, Body body) throws Exception {
        Timed t = new Timed();
        t.lat = new long[ops];
        AtomicInteger next = new AtomicInteger(), made = new AtomicInteger();
        CountDownLatch ready = new CountDownLatch(workers), gate = new CountDownLatch(1);
        long[] start = new long[1]; // set before the gate opens
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            final int worker = w;
            Thread th = new Thread(() -> {
                ready.countDown();
                int i = -1;
                try {
                    gate.await();
                    while ((i = next.getAndIncrement()) < ops || minNanos > 0 && System.nanoTime() - start[0] < minNanos) {
                        long d = body.run(worker, i);
                        if (i < ops) t.lat[i] = d;
                        made.incrementAndGet();
                        Bench.progress.incrementAndGet();
                    }
                } catch (Throwable e) {
                    Bench.fail("worker " + worker + ", acquisition " + i, e);
                }
            }, "worker-" + w);
            threads.add(th);
            th.start();
        }
        ready.await();
        long cpu0 = Bench.cpuNanos(), t0 = System.nanoTime();
        start[0] = t0;
        gate.countDown();
        for (Thread th : threads) th.join();
        t.wall = System.nanoTime() - t0;
        t.cpu = Bench.cpuNanos() - cpu0;
        t.made = made.get();
        return t;
    }

    static List<CuratorFramework> clients(int k) throws Exception {
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < k; i++) cs.add(Bench.client());
        return cs;
    }

    static void hold(long ns) { if (ns > 0) Bench.sleepNanos(ns); }

    static long checkHold() { return Math.max(Bench.checkHoldNanos, Bench.holdNanos); }

    /** uncontended, contended and semaphore. */
    static Bench.Result exclusive(int k, int ops, int limit, Acquirer acquirer) throws Exception {
        List<CuratorFramework> cs = clients(k);
        Holders[] hs = partHolders(limit);
        boolean pair = Bench.workload.equals("uncontended"); // its figure is the acquire+release pair
        Bench.Result r = null;
        Timed warmed = null;
        for (int p = 0; p < PARTS.length; p++) {
            String part = PARTS[p];
            Holders h = hs[p];
            // one worker never overlaps itself: uncontended has nothing to
            // check, unless other processes contend (--shared)
            if (part.equals("check") && ((k < 2 && Bench.shared.isEmpty()) || Bench.check <= 0)) break;
            if (part.equals("lock")) waitGate(); // a process of a processes job: they start together
            String path = Bench.root + "/" + part;
            long holdNs = part.equals("check") ? checkHold() : Bench.holdNanos;
            String what = part.equals("check") ? Bench.workload + " (checking pass)" : Bench.workload;
            Acquire[] acq = new Acquire[k];
            for (int w = 0; w < k; w++) acq[w] = acquirer.make(cs.get(w), path);
            int n = part.equals("warm") ? Bench.warmup : part.equals("lock") ? ops : Bench.check;
            Timed t = timed(k, n, part.equals("warm") ? Bench.warmupNanos : 0, (w, i) -> {
                long s = System.nanoTime();
                Release rel = acq[w].run();
                long d = System.nanoTime() - s;
                h.enter(what);
                hold(holdNs);
                h.leave();
                rel.run();
                return pair ? System.nanoTime() - s : d;
            });
            if (part.equals("warm")) warmed = t;
            if (part.equals("lock")) r = new Bench.Result(ops, t.wall, t.cpu, t.lat).warmedUp(warmed);
            if (part.equals("check")) r.checked = n;
        }
        for (CuratorFramework c : cs) c.close();
        r.limit = limit;
        for (Holders h : hs) {
            r.maxHolders = Math.max(r.maxHolders, h.max.get());
            r.violations += h.violations.get();
        }
        return r;
    }

    /** rwlock: every 10th acquisition (by index) a write, as in ../rwlock.go. */
    static Bench.Result rwlock(int k, int ops) throws Exception {
        List<CuratorFramework> cs = clients(k);
        AtomicInteger readers = new AtomicInteger(), writers = new AtomicInteger(), maxReaders = new AtomicInteger();
        AtomicLong violations = new AtomicLong(), writes = new AtomicLong();
        Bench.Result r = null;
        Timed warmed = null;
        for (String part : new String[] {"warm", "lock", "check"}) {
            if (part.equals("check") && Bench.check <= 0) break;
            String path = Bench.root + "/" + part;
            long holdNs = part.equals("check") ? checkHold() : Bench.holdNanos;
            String what = part.equals("check") ? "(checking pass) " : "";
            InterProcessReadWriteLock[] rws = new InterProcessReadWriteLock[k];
            for (int w = 0; w < k; w++) rws[w] = new InterProcessReadWriteLock(cs.get(w), path);
            if (part.equals("lock")) maxReaders.set(0);
            writes.set(0);
            int n = part.equals("warm") ? Bench.warmup : part.equals("lock") ? ops : Bench.check;
            Timed t = timed(k, n, part.equals("warm") ? Bench.warmupNanos : 0, (w, i) -> {
                boolean write = i % 10 == 0;
                InterProcessMutex half = write ? rws[w].writeLock() : rws[w].readLock();
                long s = System.nanoTime();
                half.acquire();
                long d = System.nanoTime() - s;
                if (write) {
                    writes.incrementAndGet();
                    int nw = writers.incrementAndGet(), nr = readers.get();
                    if (nw > 1 || nr > 0) {
                        violations.incrementAndGet();
                        System.err.println("VIOLATION: rwlock: " + what + "a writer with " + nw + " writers and " + nr + " readers");
                    }
                    hold(holdNs);
                    writers.decrementAndGet();
                } else {
                    maxReaders.accumulateAndGet(readers.incrementAndGet(), Math::max);
                    int nw = writers.get();
                    if (nw > 0) {
                        violations.incrementAndGet();
                        System.err.println("VIOLATION: rwlock: " + what + "a reader with " + nw + " writers");
                    }
                    hold(holdNs);
                    readers.decrementAndGet();
                }
                half.release();
                return d;
            });
            if (part.equals("warm")) warmed = t;
            if (part.equals("lock")) {
                r = new Bench.Result(ops, t.wall, t.cpu, t.lat).warmedUp(warmed);
                r.maxHolders = maxReaders.get();
                r.writes = (int) writes.get();
            }
            if (part.equals("check")) r.checked = n;
        }
        for (CuratorFramework c : cs) c.close();
        r.violations = violations.get();
        return r;
    }

    static final int WARMERS = 4; // waitersWarmers of ../waiters.go

    /** waiters: as ../waiters.go, W threads on ONE CuratorFramework, one InterProcessMutex each. */
    static Bench.Result waiters(int w) throws Exception {
        CuratorFramework c = Bench.client();
        // the warm-up: WARMERS lock objects on the one session take turns on another path
        InterProcessMutex[] warm = new InterProcessMutex[WARMERS];
        for (int i = 0; i < WARMERS; i++) warm[i] = new InterProcessMutex(c, Bench.root + "/warm");
        Timed warmed = timed(WARMERS, Bench.warmup, Bench.warmupNanos, (t, i) -> { warm[t].acquire(); warm[t].release(); return 0; });
        Holders h = new Holders(1);
        Queued q = queue(c, Bench.root + "/lock", w, h, 0, "waiters", true);
        Bench.Result r = new Bench.Result(q.handoffs, q.wall, q.cpu, q.lat).warmedUp(warmed);
        r.threads = (int) q.threads;
        r.queueS = q.queue / 1e9;
        r.watchesSeen = q.watches;
        int n = Math.min(w, Bench.check);
        if (n > 0) {
            queue(c, Bench.root + "/check", n, h, checkHold(), "waiters (checking pass)", false);
            r.checked = n;
        }
        c.close();
        r.maxHolders = h.max.get();
        r.limit = 1;
        r.violations = h.violations.get();
        return r;
    }

    /** what one queue of waiters measured. */
    static final class Queued { int handoffs, watches = -1; long wall, cpu, queue, threads; long[] lat; }

    /** one queue of w waiter threads on c behind a holder on path, as queue in ../waiters.go. */
    static Queued queue(CuratorFramework c, String path, int w, Holders h, long holdNs, String what, boolean watches) throws Exception {
        Queued q = new Queued();
        InterProcessMutex holder = new InterProcessMutex(c, path);
        holder.acquire();
        h.enter(what + " (holder)");
        AtomicLong lastRelease = new AtomicLong(), lastAcquire = new AtomicLong();
        AtomicInteger handoffs = new AtomicInteger(), done = new AtomicInteger();
        q.lat = new long[w];
        long q0 = System.nanoTime();
        for (int i = 0; i < w; i++) {
            final int waiter = i;
            Thread th = new Thread(() -> {
                try {
                    InterProcessMutex m = new InterProcessMutex(c, path);
                    m.acquire();
                    long now = System.nanoTime();
                    h.enter(what);
                    q.lat[handoffs.getAndIncrement()] = now - lastRelease.get();
                    lastAcquire.set(now);
                    hold(holdNs);
                    h.leave();
                    lastRelease.set(System.nanoTime());
                    m.release();
                    done.incrementAndGet();
                    Bench.progress.incrementAndGet();
                } catch (Throwable e) {
                    Bench.fail(what + ": waiter " + waiter, e);
                }
            }, "waiter-" + i);
            th.setDaemon(true);
            th.start();
        }
        // until every waiter is there: queued, or already through (a violation, counted)
        for (int last = -1, n; (n = Bench.children(c, path)) + done.get() < w + 1; Bench.sleep(20)) {
            if (n != last) { last = n; Bench.progress.incrementAndGet(); }
        }
        if (watches) {
            long deadline = System.nanoTime() + Bench.WATCH_WAIT_S * 1_000_000_000L;
            for (int last = -1; (q.watches = Bench.watchesUnder(path)) >= 0 && q.watches < w && System.nanoTime() < deadline; Bench.sleep(20)) {
                if (q.watches != last) { last = q.watches; Bench.progress.incrementAndGet(); }
            }
        }
        q.queue = System.nanoTime() - q0;
        q.threads = Bench.procStatus("Threads");

        long cpu0 = Bench.cpuNanos(), t0 = System.nanoTime();
        lastRelease.set(t0);
        h.leave();
        holder.release();
        while (done.get() < w) Bench.sleep(5);
        q.cpu = Bench.cpuNanos() - cpu0;
        q.wall = Math.max(lastAcquire.get() - t0, 1000);
        q.handoffs = handoffs.get();
        return q;
    }
}
