// The curator peer's workloads: what ../workloads.go, ../rwlock.go and
// ../waiters.go do for the Go peers, with InterProcessMutex,
// InterProcessSemaphoreV2(3) and InterProcessReadWriteLock. Each worker is
// a thread with its own CuratorFramework (session) and its own recipe
// object; --warmup acquisitions of the same shape run on the same sessions
// on another path before the timed part, and CPU is measured around the
// timed part only.
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

    /** who holds right now, checked against the limit. */
    static final class Holders {
        final AtomicInteger cur = new AtomicInteger(), max = new AtomicInteger();
        final AtomicLong violations = new AtomicLong();
        final int limit;
        Holders(int limit) { this.limit = limit; }
        void enter(String what) {
            int n = cur.incrementAndGet();
            max.accumulateAndGet(n, Math::max);
            if (n > limit) {
                violations.incrementAndGet();
                System.err.println("VIOLATION: " + what + ": " + n + " holders, limit " + limit);
            }
        }
        void leave() { cur.decrementAndGet(); }
    }

    static final class Timed { long wall, cpu; long[] lat; }

    /** ops acquisitions over the workers, one thread each, started together. */
    static Timed timed(int workers, int ops, Body body) throws Exception {
        Timed t = new Timed();
        t.lat = new long[ops];
        AtomicInteger next = new AtomicInteger();
        CountDownLatch ready = new CountDownLatch(workers), gate = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            final int worker = w;
            Thread th = new Thread(() -> {
                ready.countDown();
                int i = -1;
                try {
                    gate.await();
                    while ((i = next.getAndIncrement()) < ops) {
                        t.lat[i] = body.run(worker, i);
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
        gate.countDown();
        for (Thread th : threads) th.join();
        t.wall = System.nanoTime() - t0;
        t.cpu = Bench.cpuNanos() - cpu0;
        return t;
    }

    static List<CuratorFramework> clients(int k) throws Exception {
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < k; i++) cs.add(Bench.client());
        return cs;
    }

    static void hold() { if (Bench.holdMs > 0) Bench.sleep(Bench.holdMs); }

    /** uncontended, contended and semaphore. */
    static Bench.Result exclusive(int k, int ops, int limit, Acquirer acquirer) throws Exception {
        List<CuratorFramework> cs = clients(k);
        Holders h = new Holders(limit);
        boolean pair = Bench.workload.equals("uncontended"); // its figure is the acquire+release pair
        Timed t = null;
        for (String path : new String[] {Bench.root + "/warm", Bench.root + "/lock"}) {
            Acquire[] acq = new Acquire[k];
            for (int w = 0; w < k; w++) acq[w] = acquirer.make(cs.get(w), path);
            t = timed(k, path.endsWith("/warm") ? Bench.warmup : ops, (w, i) -> {
                long s = System.nanoTime();
                Release r = acq[w].run();
                long d = System.nanoTime() - s;
                h.enter(Bench.workload);
                hold();
                h.leave();
                r.run();
                return pair ? System.nanoTime() - s : d;
            });
        }
        for (CuratorFramework c : cs) c.close();
        Bench.Result r = new Bench.Result(ops, t.wall, t.cpu, t.lat);
        r.maxHolders = h.max.get();
        r.limit = limit;
        r.violations = h.violations.get();
        return r;
    }

    /** rwlock: every 10th acquisition (by index) a write, as in ../rwlock.go. */
    static Bench.Result rwlock(int k, int ops) throws Exception {
        List<CuratorFramework> cs = clients(k);
        AtomicInteger readers = new AtomicInteger(), writers = new AtomicInteger(), maxReaders = new AtomicInteger();
        AtomicLong violations = new AtomicLong(), writes = new AtomicLong();
        Timed t = null;
        for (String path : new String[] {Bench.root + "/warm", Bench.root + "/lock"}) {
            InterProcessReadWriteLock[] rws = new InterProcessReadWriteLock[k];
            for (int w = 0; w < k; w++) rws[w] = new InterProcessReadWriteLock(cs.get(w), path);
            maxReaders.set(0);
            writes.set(0);
            t = timed(k, path.endsWith("/warm") ? Bench.warmup : ops, (w, i) -> {
                boolean write = i % 10 == 0;
                InterProcessMutex half = write ? rws[w].writeLock() : rws[w].readLock();
                long s = System.nanoTime();
                half.acquire();
                long d = System.nanoTime() - s;
                if (write) {
                    writes.incrementAndGet();
                    int n = writers.incrementAndGet(), r = readers.get();
                    if (n > 1 || r > 0) {
                        violations.incrementAndGet();
                        System.err.println("VIOLATION: rwlock: a writer with " + n + " writers and " + r + " readers");
                    }
                    hold();
                    writers.decrementAndGet();
                } else {
                    maxReaders.accumulateAndGet(readers.incrementAndGet(), Math::max);
                    int n = writers.get();
                    if (n > 0) {
                        violations.incrementAndGet();
                        System.err.println("VIOLATION: rwlock: a reader with " + n + " writers");
                    }
                    hold();
                    readers.decrementAndGet();
                }
                half.release();
                return d;
            });
        }
        for (CuratorFramework c : cs) c.close();
        Bench.Result r = new Bench.Result(ops, t.wall, t.cpu, t.lat);
        r.maxHolders = maxReaders.get();
        r.violations = violations.get();
        r.writes = (int) writes.get();
        return r;
    }

    /** waiters: as ../waiters.go, W threads on ONE CuratorFramework, one InterProcessMutex each. */
    static Bench.Result waiters(int w) throws Exception {
        CuratorFramework c = Bench.client();
        InterProcessMutex warm = new InterProcessMutex(c, Bench.root + "/warm");
        for (int i = 0; i < Bench.warmup; i++) { warm.acquire(); warm.release(); }
        String path = Bench.root + "/lock";
        InterProcessMutex holder = new InterProcessMutex(c, path);
        holder.acquire();
        Holders h = new Holders(1);
        h.enter("waiters (holder)");
        AtomicLong lastRelease = new AtomicLong(), lastAcquire = new AtomicLong();
        AtomicInteger handoffs = new AtomicInteger(), done = new AtomicInteger();
        long[] lat = new long[w];
        long q0 = System.nanoTime();
        for (int i = 0; i < w; i++) {
            final int waiter = i;
            Thread th = new Thread(() -> {
                try {
                    InterProcessMutex m = new InterProcessMutex(c, path);
                    m.acquire();
                    long now = System.nanoTime();
                    h.enter("waiters");
                    lat[handoffs.getAndIncrement()] = now - lastRelease.get();
                    lastAcquire.set(now);
                    h.leave();
                    lastRelease.set(System.nanoTime());
                    m.release();
                    done.incrementAndGet();
                    Bench.progress.incrementAndGet();
                } catch (Throwable e) {
                    Bench.fail("waiter " + waiter, e);
                }
            }, "waiter-" + i);
            th.setDaemon(true);
            th.start();
        }
        for (int last = -1, n; (n = Bench.children(c, path)) < w + 1; Bench.sleep(20)) {
            if (n != last) { last = n; Bench.progress.incrementAndGet(); }
        }
        int watches = -1;
        long deadline = System.nanoTime() + 60_000_000_000L;
        for (int last = -1; (watches = Bench.watchesUnder(path)) >= 0 && watches < w && System.nanoTime() < deadline; Bench.sleep(20)) {
            if (watches != last) { last = watches; Bench.progress.incrementAndGet(); }
        }
        long queue = System.nanoTime() - q0;
        long threads = Bench.procStatus("Threads");

        long cpu0 = Bench.cpuNanos(), t0 = System.nanoTime();
        lastRelease.set(t0);
        h.leave();
        holder.release();
        while (done.get() < w) Bench.sleep(5);
        long cpu = Bench.cpuNanos() - cpu0;
        long wall = Math.max(lastAcquire.get() - t0, 1000);
        c.close();
        Bench.Result r = new Bench.Result(handoffs.get(), wall, cpu, lat);
        r.maxHolders = h.max.get();
        r.limit = 1;
        r.violations = h.violations.get();
        r.threads = (int) threads;
        r.queueS = queue / 1e9;
        r.watchesSeen = watches;
        return r;
    }
}
