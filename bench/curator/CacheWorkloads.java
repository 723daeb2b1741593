// The curator peer's cache workloads: what ../cache.go does for the Go
// peer, with Curator 5.4's CuratorCache (on this ZooKeeper client, one
// persistent recursive watch) or TreeCache (standard watches), as
// --variant says; the whole subtree, data cached. One session, one cache.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.TreeCache;

final class CacheWorkloads {
    /** the events the workloads need, as ../lib.go's cacheEvent. */
    static final int CREATED = 1, CHANGED = 2, DELETED = 3, INITIALIZED = 4;

    interface Listener { void event(int kind, String path, byte[] data); }

    /** one cache of --variant. */
    interface Cache {
        void start() throws Exception;
        byte[] data(String path); // null if not cached
        void close();
    }

    static Cache cache(CuratorFramework c, String path, Listener l) {
        switch (Bench.variant) {
            case "CuratorCache": {
                CuratorCache cc = CuratorCache.build(c, path);
                cc.listenable().addListener(new CuratorCacheListener() {
                    @Override public void event(Type type, ChildData old, ChildData data) {
                        switch (type) {
                            case NODE_CREATED: l.event(CREATED, data.getPath(), data.getData()); break;
                            case NODE_CHANGED: l.event(CHANGED, data.getPath(), data.getData()); break;
                            case NODE_DELETED: l.event(DELETED, old.getPath(), null); break;
                        }
                    }
                    @Override public void initialized() { l.event(INITIALIZED, null, null); }
                });
                return new Cache() {
                    public void start() { cc.start(); }
                    public byte[] data(String p) { return cc.get(p).map(ChildData::getData).orElse(null); }
                    public void close() { cc.close(); }
                };
            }
            case "TreeCache": {
                TreeCache tc = TreeCache.newBuilder(c, path).setCacheData(true).build();
                tc.getListenable().addListener((client, e) -> {
                    switch (e.getType()) {
                        case NODE_ADDED: l.event(CREATED, e.getData().getPath(), e.getData().getData()); break;
                        case NODE_UPDATED: l.event(CHANGED, e.getData().getPath(), e.getData().getData()); break;
                        case NODE_REMOVED: l.event(DELETED, e.getData().getPath(), null); break;
                        case INITIALIZED: l.event(INITIALIZED, null, null); break;
                        default: break; // connection events
                    }
                });
                return new Cache() {
                    public void start() throws Exception { tc.start(); }
                    public byte[] data(String p) {
                        ChildData d = tc.getCurrentData(p);
                        return d == null ? null : d.getData();
                    }
                    public void close() { tc.close(); }
                };
            }
            default:
                throw new IllegalArgumentException("--variant " + Bench.variant + ": want CuratorCache or TreeCache");
        }
    }

    /** the nodes of a tree of --tree's shape (10x10x100), the root included, as treePaths in ../cache.go. */
    static int treeSize() {
        int total = 1, level = 1;
        for (String f : Bench.tree.split("x")) {
            level *= Integer.parseInt(f);
            total += level;
        }
        return total;
    }

    /** cacheload, as cacheLoadWL in ../cache.go. */
    static Bench.Result load() throws Exception {
        int want = treeSize();
        CuratorFramework c = Bench.client();
        AtomicLong created = new AtomicLong();
        CountDownLatch initialized = new CountDownLatch(1);
        long base = Bench.procStatus("VmRSS");
        long cpu0 = Bench.cpuNanos(), t0 = System.nanoTime();
        Cache cache = cache(c, Bench.root, (kind, path, data) -> {
            if (kind == CREATED) {
                created.incrementAndGet();
                Bench.progress.incrementAndGet();
            } else if (kind == INITIALIZED) {
                initialized.countDown();
            }
        });
        cache.start();
        initialized.await();
        long wall = System.nanoTime() - t0, cpu = Bench.cpuNanos() - cpu0;
        int n = (int) created.get();
        Bench.Result r = new Bench.Result(n, wall, cpu, new long[0]);
        r.baseKB = base;
        cache.close();
        c.close();
        if (n != want) throw new IllegalStateException("the cache told " + n + " nodes created before it was initialized, the tree has " + want);
        return r;
    }

    /** cachelag, as cacheLagWL in ../cache.go. */
    static Bench.Result lag() throws Exception {
        CuratorFramework c = Bench.client();
        String end = Bench.root + "/end";
        List<long[]> samples = new ArrayList<>(1 << 14); // {sent, lag}
        AtomicBoolean live = new AtomicBoolean(), stopped = new AtomicBoolean();
        CountDownLatch initialized = new CountDownLatch(1);
        BlockingQueue<String> ended = new ArrayBlockingQueue<>(1);
        Cache cache = cache(c, Bench.root, (kind, path, data) -> {
            long now = System.nanoTime(); // CLOCK_MONOTONIC on Linux, as monoNanos in ../cache.go
            if (kind == INITIALIZED) {
                if (!live.getAndSet(true)) initialized.countDown();
                return;
            }
            if (!live.get() || stopped.get() || (kind != CREATED && kind != CHANGED)) return;
            String s = new String(data, StandardCharsets.US_ASCII);
            if (path.equals(end)) {
                if (s.startsWith("end ")) ended.offer(s);
                return;
            }
            long sent;
            try {
                sent = Long.parseLong(s);
            } catch (NumberFormatException e) {
                return; // an inner node
            }
            synchronized (samples) {
                samples.add(new long[] {sent, now - sent});
            }
            Bench.progress.incrementAndGet();
        });
        cache.start();
        initialized.await();
        long t0 = System.nanoTime();
        Files.createFile(Path.of(Bench.gate, "ready-" + ProcessHandle.current().pid()));
        String[] m = ended.take().split(" ");
        int changes = Integer.parseInt(m[1]);
        long from = Long.parseLong(m[2]);
        converge(c, cache);
        stopped.set(true);
        Bench.Result r = lagResult(samples, from, System.nanoTime() - t0, changes);
        cache.close();
        c.close();
        return r;
    }

    /**
     * the result of a lag workload (cachelag, discoverylag): the lags of
     * the samples ({sent, lag}) of the changes sent from from on (the timed
     * part), as timedLags in ../cache.go; a negative one fails the run.
     */
    static Bench.Result lagResult(List<long[]> samples, long from, long wall, int changes) {
        List<Long> lat = new ArrayList<>();
        synchronized (samples) {
            for (long[] x : samples) {
                if (x[1] < 0) throw new IllegalStateException("an event " + (-x[1]) + " ns before its change was sent: the clocks differ");
                if (x[0] >= from) lat.add(x[1]);
            }
        }
        long[] l = lat.stream().mapToLong(Long::longValue).toArray();
        Bench.Result r = new Bench.Result(l.length, wall, 0, l);
        r.changes = changes;
        return r;
    }

    /** waits until the cache holds the tree as the server has it (read once), as converge in ../cache.go. */
    static void converge(CuratorFramework c, Cache cache) throws Exception {
        Map<String, byte[]> want = new HashMap<>();
        List<String> todo = new ArrayList<>(List.of(Bench.root));
        while (!todo.isEmpty()) {
            String p = todo.remove(todo.size() - 1);
            want.put(p, c.getData().forPath(p));
            for (String k : c.getChildren().forPath(p)) todo.add(p + "/" + k);
        }
        long deadline = System.nanoTime() + 30_000_000_000L; // convergeWait
        while (true) {
            String differ = null;
            for (Map.Entry<String, byte[]> e : want.entrySet()) {
                if (!Arrays.equals(cache.data(e.getKey()), e.getValue())) {
                    differ = e.getKey();
                    break;
                }
            }
            if (differ == null) return;
            if (System.nanoTime() > deadline) throw new IllegalStateException("the cache still differs from the tree 30s after the last change, at " + differ);
            Bench.sleep(10);
        }
    }
}
