// The queue workload of the curator peer (../queue.go has the Go peers'):
// K producer and K consumer sessions on one DistributedQueue (QueueBuilder;
// --variant lockpath: with a lock path, at least once; nolock: without,
// at most once), putInBackground(false) so that a put returns once the item
// is there, as gocurator's; --ops items of 100 bytes, each starting with
// its sequence number (8 bytes, big-endian). The figure: items/s from the
// first put to the take that completes the set; the put rate; each item's
// put-to-take latency. After the last item the consumers are closed, and
// every item put must have been taken exactly once: anything else is a
// violation.
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;

final class QueueWorkloads {
    private QueueWorkloads() {}

    static final int ITEM_SIZE = 100;
    static final long DRAIN_WAIT_NANOS = 30_000_000_000L; // as queueDrainWait in ../queue.go

    static final QueueSerializer<byte[]> BYTES = new QueueSerializer<byte[]>() {
        public byte[] serialize(byte[] item) { return item; }
        public byte[] deserialize(byte[] bytes) { return bytes; }
    };

    static byte[] item(int seq) {
        byte[] b = new byte[ITEM_SIZE];
        ByteBuffer.wrap(b).putLong(seq);
        for (int i = 8; i < b.length; i++) b[i] = (byte) ('a' + i % 26);
        return b;
    }

    /** every item put and taken in one run. */
    static final class Ledger {
        long[] putAt = new long[1024], takenAt = new long[1024];
        int[] takes = new int[1024];
        int distinct, doubled, unknown, want = -1;
        long lastTake;
        final CountDownLatch done = new CountDownLatch(1);

        private void grow(int seq) {
            if (seq < putAt.length) return;
            int n = Math.max(seq + 1, 2 * putAt.length);
            putAt = Arrays.copyOf(putAt, n);
            takenAt = Arrays.copyOf(takenAt, n);
            takes = Arrays.copyOf(takes, n);
        }

        synchronized void put(int seq, long at) {
            grow(seq);
            putAt[seq] = at;
        }

        synchronized void take(byte[] v) {
            long now = System.nanoTime();
            Bench.progress.incrementAndGet();
            if (v.length != ITEM_SIZE) {
                unknown++;
                System.err.println("VIOLATION: queue: an item of " + v.length + " bytes, not one of ours");
                return;
            }
            long seq = ByteBuffer.wrap(v).getLong();
            if (seq < 0 || seq >= putAt.length || putAt[(int) seq] == 0) {
                unknown++;
                System.err.println("VIOLATION: queue: item " + seq + " taken, never put");
                return;
            }
            int s = (int) seq;
            if (++takes[s] > 1) {
                doubled++;
                System.err.println("VIOLATION: queue: item " + s + " taken " + takes[s] + " times");
                return;
            }
            takenAt[s] = now;
            lastTake = Math.max(lastTake, now);
            if (++distinct == want) done.countDown();
        }

        synchronized void expect(int n) {
            want = n;
            if (distinct == n) done.countDown();
        }

        synchronized int taken() { return distinct; }
    }

    static DistributedQueue<byte[]> queue(CuratorFramework c, String path, String lockPath, QueueConsumer<byte[]> consumer) throws Exception {
        QueueBuilder<byte[]> b = QueueBuilder.builder(c, consumer, BYTES, path).putInBackground(false);
        if (lockPath != null) b = b.lockPath(lockPath);
        DistributedQueue<byte[]> q = b.buildQueue();
        q.start();
        return q;
    }

    static final class Run { int items; long wall, putWall, cpu; long[] lat; long violations; }

    static Run run(List<CuratorFramework> prod, List<CuratorFramework> cons, String path, boolean lock, int ops, long minNanos) throws Exception {
        String qpath = path + "/queue", lpath = lock ? path + "/locks" : null;
        Ledger l = new Ledger();
        QueueConsumer<byte[]> consumer = new QueueConsumer<byte[]>() {
            public void consumeMessage(byte[] message) { l.take(message); }
            public void stateChanged(CuratorFramework client, ConnectionState newState) {}
        };
        List<DistributedQueue<byte[]>> consumers = new ArrayList<>(), producers = new ArrayList<>();
        for (CuratorFramework c : cons) consumers.add(queue(c, qpath, lpath, consumer));
        for (CuratorFramework c : prod) producers.add(queue(c, qpath, null, null));
        AtomicInteger next = new AtomicInteger(), made = new AtomicInteger();
        CountDownLatch gate = new CountDownLatch(1);
        long[] t0 = new long[1];
        List<Thread> threads = new ArrayList<>();
        for (DistributedQueue<byte[]> q : producers) {
            Thread t = new Thread(() -> {
                try {
                    gate.await();
                    for (int i = next.getAndIncrement(); i < ops || minNanos > 0 && System.nanoTime() - t0[0] < minNanos; i = next.getAndIncrement()) {
                        l.put(i, System.nanoTime());
                        q.put(item(i));
                        made.incrementAndGet();
                        Bench.progress.incrementAndGet();
                    }
                } catch (Throwable e) {
                    Bench.fail("put", e);
                }
            });
            t.start();
            threads.add(t);
        }
        long cpu0 = Bench.cpuNanos();
        t0[0] = System.nanoTime();
        gate.countDown();
        for (Thread t : threads) t.join();
        Run r = new Run();
        r.putWall = System.nanoTime() - t0[0];
        int n = made.get();
        l.expect(n);
        int last = l.taken();
        long since = System.nanoTime();
        while (!l.done.await(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            int got = l.taken();
            if (got != last) {
                last = got;
                since = System.nanoTime();
            } else if (System.nanoTime() - since > DRAIN_WAIT_NANOS) {
                System.err.println("VIOLATION: queue: " + (n - got) + " of " + n + " items never taken (none for 30s)");
                r.violations += n - got;
                break;
            }
        }
        r.cpu = Bench.cpuNanos() - cpu0;
        // an item counts as taken when its consumer is called, before its delete (with a
        // lock path): let the deletes finish before close() interrupts the consumer thread
        for (long end = System.nanoTime() + DRAIN_WAIT_NANOS; Bench.children(prod.get(0), qpath) > 0 && System.nanoTime() < end; ) {
            Thread.sleep(5);
        }
        for (DistributedQueue<byte[]> q : consumers) q.close(); // each finishes the item in hand
        for (DistributedQueue<byte[]> q : producers) q.close();
        // an item consumed but left in the queue would be taken again: a double in waiting
        int left = Bench.children(prod.get(0), qpath);
        if (left > 0) {
            System.err.println("VIOLATION: queue: " + left + " items left in the queue after all were taken and the consumers closed");
            r.violations += left;
        }
        synchronized (l) {
            r.violations += l.doubled + l.unknown;
            long[] lat = new long[n];
            int m = 0;
            for (int i = 0; i < n; i++) if (l.takes[i] > 0) lat[m++] = l.takenAt[i] - l.putAt[i];
            r.lat = Arrays.copyOf(lat, m);
            r.wall = l.lastTake - t0[0];
        }
        r.items = n;
        return r;
    }

    static Bench.Result queue(int k, int ops) throws Exception {
        boolean lock;
        switch (Bench.variant) {
            case "lockpath": lock = true; break;
            case "nolock": lock = false; break;
            default: throw new IllegalArgumentException("--variant " + Bench.variant + ": want lockpath or nolock");
        }
        List<CuratorFramework> prod = Workloads.clients(k), cons = Workloads.clients(k);
        Run warm = run(prod, cons, Bench.root + "/warm", lock, Bench.warmup, Bench.warmupNanos);
        Run t = run(prod, cons, Bench.root + "/items", lock, ops, 0);
        Bench.Result r = new Bench.Result(t.items, t.wall, t.cpu, t.lat);
        r.warmupOps = warm.items;
        r.warmupS = warm.wall / 1e9;
        r.putPerS = t.items / (t.putWall / 1e9);
        r.violations = warm.violations + t.violations;
        r.checked = t.items;
        for (CuratorFramework c : prod) c.close();
        for (CuratorFramework c : cons) c.close();
        return r;
    }
}
