// The curator peer's discovery workloads: what ../discovery.go does for
// the Go peer, with Curator 5.4's curator-x-discovery: a ServiceDiscovery
// at --root (payloads read as Maps, JsonInstanceSerializer(Map.class,
// false) as the interop tests), its ServiceCache and ServiceProvider
// (round-robin). The service is named as the workload; --clients is its
// number of instances, N. One session.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.details.ServiceCacheListener;

@SuppressWarnings({"rawtypes", "unchecked"})
final class DiscoveryWorkloads {
    /** callsPerLook of ../discovery.go. */
    static final int CALLS_PER_LOOK = 64;

    interface Call { void run(int i) throws Exception; }

    static ServiceDiscovery<Map> discovery(CuratorFramework c) throws Exception {
        ServiceDiscovery<Map> d = ServiceDiscoveryBuilder.builder(Map.class).client(c).basePath(Bench.root)
                .serializer(new JsonInstanceSerializer<>(Map.class, false)).build();
        d.start();
        return d;
    }

    /** discoveryquery, as discoveryQueryWL in ../discovery.go. */
    static Bench.Result query() throws Exception {
        CuratorFramework c = Bench.client();
        ServiceDiscovery<Map> d = discovery(c);
        String name = Bench.workload;
        int n = Bench.clients;
        Workloads.Body read = (w, i) -> {
            long s = System.nanoTime();
            Collection<ServiceInstance<Map>> all = d.queryForInstances(name);
            if (all.size() != n) throw new IllegalStateException(all.size() + " instances of " + name + " read, want " + n);
            return System.nanoTime() - s;
        };
        Workloads.Timed warm = Workloads.timed(1, Bench.warmup, Bench.warmupNanos, read);
        Workloads.Timed t = Workloads.timed(1, Bench.ops, 0, read);
        Bench.Result r = new Bench.Result(Bench.ops, t.wall, t.cpu, t.lat).warmedUp(warm);

        ServiceCache<Map> sc = d.serviceCacheBuilder().name(name).build();
        sc.start();
        double[] rate = callRate(i -> {
            int got = sc.getInstances().size();
            if (got != n) throw new IllegalStateException("the cache holds " + got + " instances of " + name + ", want " + n);
        });
        r.cacheCalls = (int) rate[0];
        r.cachePerS = rate[1];
        ServiceProvider<Map> p = d.serviceProviderBuilder().serviceName(name).build();
        p.start();
        rate = callRate(i -> {
            if (p.getInstance() == null) throw new IllegalStateException("the provider of " + name + " has no instance");
        });
        r.providerCalls = (int) rate[0];
        r.providerPerS = rate[1];
        r.vmhwmKB = Bench.procStatus("VmHWM");
        p.close();
        sc.close();
        d.close();
        c.close();
        return r;
    }

    /** calls for --warmup-time, then for --call-time, as callRate in ../discovery.go: {calls, per second}. */
    static double[] callRate(Call call) throws Exception {
        loop(Bench.warmupNanos, call);
        long[] t = loop(Bench.callNanos, call);
        return new double[] {t[0], t[0] / (t[1] / 1e9)};
    }

    /** calls for at least ns, looking at the clock every CALLS_PER_LOOK calls: {calls, ns}. */
    static long[] loop(long ns, Call call) throws Exception {
        long t0 = System.nanoTime();
        int i = 0;
        for (; i == 0 || i % CALLS_PER_LOOK != 0 || System.nanoTime() - t0 < ns; i++) {
            call.run(i);
            if (i % CALLS_PER_LOOK == 0) Bench.progress.incrementAndGet();
        }
        return new long[] {i, System.nanoTime() - t0};
    }

    /** the send time in an id SEQ-SENT of the writer's (lagID in ../discovery.go), -1 for another id. */
    static long sent(String id) {
        int dash = id.indexOf('-');
        if (dash < 0) return -1;
        try {
            Long.parseLong(id.substring(0, dash));
            return Long.parseLong(id.substring(dash + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** discoverylag, as discoveryLagWL in ../discovery.go. */
    static Bench.Result lag() throws Exception {
        CuratorFramework c = Bench.client();
        ServiceDiscovery<Map> d = discovery(c);
        String name = Bench.workload;
        ServiceCache<Map> sc = d.serviceCacheBuilder().name(name).build();
        Set<String> seen = ConcurrentHashMap.newKeySet();
        List<long[]> samples = new ArrayList<>(1 << 12); // {sent, lag}
        AtomicBoolean live = new AtomicBoolean(), stopped = new AtomicBoolean();
        BlockingQueue<String> ended = new ArrayBlockingQueue<>(1);
        // A ServiceCacheListener learns only that something changed: the
        // instances new since its last call are those it has not seen.
        sc.addListener(new ServiceCacheListener() {
            @Override public void cacheChanged() {
                long now = System.nanoTime(); // CLOCK_MONOTONIC on Linux, as monoNanos in ../cache.go
                if (!live.get() || stopped.get()) return;
                for (ServiceInstance<Map> i : sc.getInstances()) {
                    String id = i.getId();
                    if (!seen.add(id)) continue;
                    if (id.startsWith("end-")) {
                        ended.offer(id);
                        continue;
                    }
                    long sent = sent(id);
                    if (sent < 0) continue;
                    synchronized (samples) {
                        samples.add(new long[] {sent, now - sent});
                    }
                    Bench.progress.incrementAndGet();
                }
            }
            @Override public void stateChanged(CuratorFramework client, ConnectionState state) {}
        });
        sc.start(); // the initial load (the writer waits for the ready file)
        for (ServiceInstance<Map> i : sc.getInstances()) seen.add(i.getId());
        live.set(true);
        long t0 = System.nanoTime();
        Files.createFile(Path.of(Bench.gate, "ready-" + ProcessHandle.current().pid()));
        String[] m = ended.take().split("-");
        int changes = Integer.parseInt(m[1]);
        long from = Long.parseLong(m[2]);
        converge(c, sc, Bench.root + "/" + name);
        stopped.set(true);
        Bench.Result r = CacheWorkloads.lagResult(samples, from, System.nanoTime() - t0, changes);
        sc.close();
        d.close();
        c.close();
        return r;
    }

    /** waits until the cache holds the instances the server lists (listed at each look), as convergeIDs in ../discovery.go. */
    static void converge(CuratorFramework c, ServiceCache<Map> sc, String path) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L; // convergeWait
        while (true) {
            List<String> want = new ArrayList<>(c.getChildren().forPath(path));
            List<String> got = new ArrayList<>();
            for (ServiceInstance<Map> i : sc.getInstances()) got.add(i.getId());
            Collections.sort(want);
            Collections.sort(got);
            if (got.equals(want)) return;
            if (System.nanoTime() > deadline) throw new IllegalStateException("the cache still differs from the service 30s after the last registration: " + got.size() + " instances, the server " + want.size());
            Bench.sleep(10);
        }
    }
}
