// The curator peer of gocurator's peer benchmark (../*.go): one workload of
// Apache Curator 5.4's recipes against a real ZooKeeper, one JSON line of
// results on stdout (the fields of ../result.go), exit status 0, 1 on an
// error, 3 if mutual exclusion, the semaphore bound or the read/write rule
// was broken, 4 if nothing progressed for --stall (the stall guard).
// The harness compiles it with javac at run time against Debian's jars and
// runs it as
//
//   java -cp DIR:JARS Bench --peer curator --workload contended --clients 4 \
//        --connect 127.0.0.1:2181 --root /r --n 1000 --ops 2000 --warmup 200 --warmup-time 5000ms \
//        --check 300 --hold 0us --check-hold 1000us --stall 60000ms --session-timeout 30000ms
//
// The workloads are in Workloads.java and do what ../workloads.go,
// ../rwlock.go and ../waiters.go do for the Go peers; the cache workloads
// (CuratorCache or TreeCache, --variant) in CacheWorkloads.java, as
// ../cache.go; the discovery workloads (curator-x-discovery) in
// DiscoveryWorkloads.java, as ../discovery.go; the atomic workload in
// AtomicWorkloads.java, the queue workload in QueueWorkloads.java, as
// ../atomic.go and ../queue.go.
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;

public class Bench {
    static String workload = "", connect = "", root = "", gate = "", shared = "", variant = "", tree = "";
    static int clients = 1, n = 1000, ops = 1000, warmup = 100, check = 0;
    static long holdNanos = 0, checkHoldNanos = 1_000_000, warmupNanos = 0, stallMs = 60000, sessionMs = 30000, callNanos = 0;

    /**
     * The longest waits inside a workload, as in ../workloads.go and
     * ../waiters.go: for a session, and for the waiters' watches. The
     * harness's --stall is well over both (../config.go), so that no wait
     * that ends by itself is taken for a stall.
     */
    static final int CONNECT_WAIT_S = 30, WATCH_WAIT_S = 30;

    /** what the workloads get done; the stall guard watches it. */
    static final AtomicLong progress = new AtomicLong();

    public static void main(String[] args) {
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--peer": break;
                case "--workload": workload = v; break;
                case "--clients": clients = Integer.parseInt(v); break;
                case "--connect": connect = v; break;
                case "--root": root = v; break;
                case "--n": n = Integer.parseInt(v); break;
                case "--ops": ops = Integer.parseInt(v); break;
                case "--warmup": warmup = Integer.parseInt(v); break;
                case "--warmup-time": warmupNanos = nanos(v); break;
                case "--check": check = Integer.parseInt(v); break;
                case "--hold": holdNanos = nanos(v); break;
                case "--check-hold": checkHoldNanos = nanos(v); break;
                case "--stall": stallMs = nanos(v) / 1_000_000; break;
                case "--session-timeout": sessionMs = nanos(v) / 1_000_000; break;
                case "--gate": gate = v; break;
                case "--shared": shared = v; break;
                case "--variant": variant = v; break;
                case "--tree": tree = v; break;
                case "--call-time": callNanos = nanos(v); break;
                default: usage("unknown flag " + args[i]);
            }
        }
        if (args.length % 2 != 0) usage("odd number of arguments");
        stallGuard();
        Result r;
        try {
            switch (workload) {
                case "uncontended": r = Workloads.exclusive(1, n, 1, Workloads::mutex); break;
                case "contended": r = Workloads.exclusive(clients, ops, 1, Workloads::mutex); break;
                case "semaphore": r = Workloads.exclusive(clients, ops, Workloads.LEASES, Workloads::semaphore); break;
                case "rwlock": r = Workloads.rwlock(clients, ops); break;
                case "waiters": r = Workloads.waiters(clients); break;
                case "cacheload": r = CacheWorkloads.load(); break;
                case "cachelag": r = CacheWorkloads.lag(); break;
                case "discoveryquery": r = DiscoveryWorkloads.query(); break;
                case "discoverylag": r = DiscoveryWorkloads.lag(); break;
                case "atomic": r = AtomicWorkloads.atomic(clients, ops); break;
                case "queue": r = QueueWorkloads.queue(clients, ops); break;
                default: usage("unknown workload " + workload); return;
            }
        } catch (Throwable e) {
            fail("workload " + workload, e);
            return;
        }
        System.out.println(r.json());
        System.out.flush();
        if (r.violations > 0) {
            System.err.println("FAIL: " + r.violations + " violations");
            Runtime.getRuntime().halt(3);
        }
        Runtime.getRuntime().halt(0); // Curator's and ZooKeeper's threads are closed; nothing to wait for
    }

    /** a duration given as 1500us or 60000ms, in ns. */
    static long nanos(String v) {
        if (v.endsWith("us")) return Long.parseLong(v.substring(0, v.length() - 2)) * 1_000L;
        if (v.endsWith("ms")) return Long.parseLong(v.substring(0, v.length() - 2)) * 1_000_000L;
        usage("durations are given in us or ms, got " + v);
        return 0;
    }

    static void usage(String msg) {
        System.err.println("Bench: " + msg);
        Runtime.getRuntime().halt(2);
    }

    /** ends the process on an error: a failed worker may hold what others wait for. */
    static void fail(String what, Throwable e) {
        System.err.println("FAIL: " + what + ": " + e);
        e.printStackTrace();
        System.err.flush();
        Runtime.getRuntime().halt(1);
    }

    static void stallGuard() {
        Thread t = new Thread(() -> {
            long last = progress.get(), since = System.nanoTime();
            while (true) {
                sleep(Math.min(stallMs / 10, 1000));
                long p = progress.get();
                if (p != last) {
                    last = p;
                    since = System.nanoTime();
                } else if (System.nanoTime() - since > stallMs * 1_000_000L) {
                    System.err.println("STALL: no progress for " + stallMs + "ms (curator " + workload + " " + clients + ")");
                    System.err.flush();
                    Runtime.getRuntime().halt(4);
                }
            }
        }, "stall-guard");
        t.setDaemon(true);
        t.start();
    }

    static void sleep(long ms) {
        try { Thread.sleep(ms); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
    }

    /** holds for ns (Thread.sleep has no finer grain than a millisecond). */
    static void sleepNanos(long ns) {
        for (long end = System.nanoTime() + ns, left = ns; left > 0; left = end - System.nanoTime()) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
        }
    }

    static CuratorFramework client() throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect)
                .sessionTimeoutMs((int) sessionMs).connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(1000, 3)).build();
        c.start();
        if (!c.blockUntilConnected(CONNECT_WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("no session with " + connect);
        progress.incrementAndGet();
        return c;
    }

    static int children(CuratorFramework c, String path) throws Exception {
        try {
            return c.getChildren().forPath(path).size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
    }

    /** user+system CPU of this process, ns. */
    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** a number field of /proc/self/status (VmHWM, Threads), -1 if absent. */
    static long procStatus(String field) {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                if (line.startsWith(field + ":")) return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]);
            }
        } catch (Exception e) {
            // not Linux: no figure
        }
        return -1;
    }

    /**
     * (path, session) data watches under path, from wchp, summed over every
     * server of the connect string (a session's watches live on the server
     * it is connected to), as watchesUnder in ../fourletter.go; -1 if a
     * server will not say.
     */
    static int watchesUnder(String path) {
        String hosts = connect.contains("/") ? connect.substring(0, connect.indexOf('/')) : connect;
        String chroot = connect.contains("/") ? connect.substring(connect.indexOf('/')) : "";
        String prefix = chroot + path + "/";
        int count = 0;
        for (String host : hosts.split(",")) {
            int colon = host.lastIndexOf(':');
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host.substring(0, colon), Integer.parseInt(host.substring(colon + 1))), 5000);
                s.setSoTimeout(10000);
                s.getOutputStream().write("wchp".getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                InputStream in = s.getInputStream();
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                in.transferTo(out);
                String text = out.toString(StandardCharsets.US_ASCII);
                if (text.contains("not in the whitelist")) return -1;
                boolean under = false;
                for (String line : text.split("\n")) {
                    String t = line.trim();
                    if (t.startsWith("/")) under = t.startsWith(prefix);
                    else if (under && t.startsWith("0x")) count++;
                }
            } catch (Exception e) {
                System.err.println("note: wchp on " + host + ": " + e);
                return -1;
            }
        }
        return count;
    }

    /** the JSON line: the fields of ../result.go. */
    static final class Result {
        String impl = "curator";
        int ops, maxHolders, limit, writes, threads, watchesSeen, checked, warmupOps, changes, cacheCalls, providerCalls;
        long violations, vmhwmKB, baseKB;
        double wallS, opsPerS, p50Ms, p99Ms, cpuMsPerOp, queueS, warmupS, cachePerS, providerPerS, putPerS;

        Result(int ops, long wallNanos, long cpuNanos, long[] lat) {
            this.ops = ops;
            wallS = wallNanos / 1e9;
            opsPerS = ops / wallS;
            cpuMsPerOp = cpuNanos / 1e6 / Math.max(ops, 1);
            long[] s = lat.clone();
            Arrays.sort(s);
            p50Ms = pct(s, 50);
            p99Ms = pct(s, 99);
            vmhwmKB = procStatus("VmHWM");
        }

        Result warmedUp(Workloads.Timed t) {
            warmupOps = t.made;
            warmupS = t.wall / 1e9;
            return this;
        }

        static double pct(long[] sorted, double p) {
            if (sorted.length == 0) return 0;
            int i = Math.max(0, Math.min(sorted.length - 1, (int) Math.ceil(p / 100 * sorted.length) - 1));
            return sorted[i] / 1e6;
        }

        static String num(double d) { return String.format(Locale.ROOT, "%.3f", d); }

        String json() {
            return "{\"peer\":\"curator\",\"impl\":\"" + impl + "\",\"workload\":\"" + workload + "\",\"clients\":" + clients
                    + ",\"variant\":\"" + variant + "\",\"base_kb\":" + baseKB + ",\"changes\":" + changes
                    + ",\"ops\":" + ops + ",\"wall_s\":" + num(wallS) + ",\"ops_per_s\":" + num(opsPerS)
                    + ",\"p50_ms\":" + num(p50Ms) + ",\"p99_ms\":" + num(p99Ms) + ",\"cpu_ms_per_op\":" + num(cpuMsPerOp)
                    + ",\"max_holders\":" + maxHolders + ",\"limit\":" + limit + ",\"violations\":" + violations
                    + ",\"writes\":" + writes + ",\"warmup_ops\":" + warmupOps + ",\"warmup_s\":" + num(warmupS) + ",\"checked\":" + checked + ",\"vmhwm_kb\":" + vmhwmKB + ",\"threads\":" + threads
                    + ",\"queue_s\":" + num(queueS) + ",\"watches_seen\":" + watchesSeen
                    + ",\"cache_calls\":" + cacheCalls + ",\"cache_per_s\":" + num(cachePerS)
                    + ",\"provider_calls\":" + providerCalls + ",\"provider_per_s\":" + num(providerPerS)
                    + ",\"put_per_s\":" + num(putPerS) + ",\"exit\":0}";
        }
    }
}
