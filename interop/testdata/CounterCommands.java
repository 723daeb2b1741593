// CounterCommands: the counter and shared-value commands of CuratorPeer
// (interop/counter_test.go), Curator 5.4's recipes.atomic and
// recipes.shared. Bytes are hex on the command line ("-" is empty).
//
//   ctr-incr <path> <threads> <each> [<lockPath>] -> ok <succeeded> <failed> <promotedTries>
//       <threads> threads each increment a DistributedAtomicLong <each> times
//       (BoundedExponentialBackoffRetry(1, 50, 29); with <lockPath>, RetryNTimes(0, 0)
//       promoted to that lock with RetryNTimes(50, 5) and a 60 s timeout)
//   ctr-long-get <path>                           -> ok <n>           DistributedAtomicLong.get
//   ctr-long-add <path> <delta>                   -> ok <pre> <post>  add, succeeded (else error)
//   ctr-int-get <path>                            -> ok <n>           DistributedAtomicInteger.get
//   ctr-int-add <path> <delta>                    -> ok <pre> <post>
//   ctr-long-cas <path> <expected> <new>          -> ok <succeeded> <pre>  compareAndSet
//   ctr-value-get <path>                          -> ok <hex>         DistributedAtomicValue.get
//   ctr-value-tryset <path> <hex>                 -> ok <succeeded> <preHex>
//   ctr-sv-start <path> <seedHex>                 -> ok               a started SharedValue, kept
//   ctr-sv-get <path>                             -> ok <hex> <version>  getVersionedValue
//   ctr-sv-set <path> <hex>                       -> ok               setValue
//   ctr-sv-tryset <path> <hex>                    -> ok true|false    trySetValue(getVersionedValue(), ...)
//   ctr-sv-await <path> <hex> <timeoutMs>         -> ok | timeout     until its listener heard <hex>
//   ctr-sv-close <path>                           -> ok
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.*;
import org.apache.curator.framework.recipes.shared.*;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;

class CounterCommands {
    static final Map<String, SharedValue> values = new HashMap<>();
    static final Map<String, Set<String>> heard = new ConcurrentHashMap<>();

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        if (b != null) for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    static byte[] unhex(String s) {
        if (s.equals("-")) return new byte[0];
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }

    static DistributedAtomicLong counter(CuratorFramework client, String path, String lockPath) {
        if (lockPath == null) {
            return new DistributedAtomicLong(client, path, new BoundedExponentialBackoffRetry(1, 50, 29));
        }
        PromotedToLock promoted = PromotedToLock.builder().lockPath(lockPath)
                .retryPolicy(new RetryNTimes(50, 5)).timeout(60, TimeUnit.SECONDS).build();
        return new DistributedAtomicLong(client, path, new RetryNTimes(0, 0), promoted);
    }

    static String incr(CuratorFramework client, String[] a) throws Exception {
        int threads = Integer.parseInt(a[2]), each = Integer.parseInt(a[3]);
        DistributedAtomicLong c = counter(client, a[1], a.length > 4 ? a[4] : null);
        AtomicLong ok = new AtomicLong(), failed = new AtomicLong(), promoted = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            fs.add(pool.submit(() -> {
                for (int i = 0; i < each; i++) {
                    AtomicValue<Long> r = c.increment();
                    if (r.succeeded()) ok.incrementAndGet(); else failed.incrementAndGet();
                    promoted.addAndGet(r.getStats().getPromotedLockTries());
                }
                return null;
            }));
        }
        try {
            for (Future<?> f : fs) f.get();
        } finally {
            pool.shutdownNow();
        }
        return "ok " + ok.get() + " " + failed.get() + " " + promoted.get();
    }

    static String run(CuratorFramework client, String[] a) throws Exception {
        switch (a[0]) {
            case "ctr-incr":
                return incr(client, a);
            case "ctr-long-get":
                return "ok " + counter(client, a[1], null).get().postValue();
            case "ctr-long-add": {
                AtomicValue<Long> r = counter(client, a[1], null).add(Long.parseLong(a[2]));
                return r.succeeded() ? "ok " + r.preValue() + " " + r.postValue() : "error not succeeded";
            }
            case "ctr-int-get":
                return "ok " + new DistributedAtomicInteger(client, a[1], new RetryNTimes(10, 10)).get().postValue();
            case "ctr-int-add": {
                AtomicValue<Integer> r = new DistributedAtomicInteger(client, a[1], new RetryNTimes(10, 10)).add(Integer.parseInt(a[2]));
                return r.succeeded() ? "ok " + r.preValue() + " " + r.postValue() : "error not succeeded";
            }
            case "ctr-long-cas": {
                AtomicValue<Long> r = counter(client, a[1], null).compareAndSet(Long.parseLong(a[2]), Long.parseLong(a[3]));
                return "ok " + r.succeeded() + " " + r.preValue();
            }
            case "ctr-value-get":
                return "ok " + hex(new DistributedAtomicValue(client, a[1], new RetryNTimes(10, 10)).get().postValue());
            case "ctr-value-tryset": {
                AtomicValue<byte[]> r = new DistributedAtomicValue(client, a[1], new RetryNTimes(10, 10)).trySet(unhex(a[2]));
                return "ok " + r.succeeded() + " " + hex(r.preValue());
            }
            case "ctr-sv-start": {
                SharedValue v = new SharedValue(client, a[1], unhex(a[2]));
                Set<String> h = ConcurrentHashMap.newKeySet();
                heard.put(a[1], h);
                v.getListenable().addListener(new SharedValueListener() {
                    public void valueHasChanged(SharedValueReader r, byte[] nv) { h.add(hex(nv)); }
                    public void stateChanged(CuratorFramework c, ConnectionState s) {}
                });
                v.start();
                values.put(a[1], v);
                return "ok";
            }
            case "ctr-sv-get": {
                VersionedValue<byte[]> vv = values.get(a[1]).getVersionedValue();
                return "ok " + hex(vv.getValue()) + " " + vv.getVersion();
            }
            case "ctr-sv-set":
                values.get(a[1]).setValue(unhex(a[2]));
                return "ok";
            case "ctr-sv-tryset": {
                SharedValue v = values.get(a[1]);
                return "ok " + v.trySetValue(v.getVersionedValue(), unhex(a[2]));
            }
            case "ctr-sv-await": {
                long end = System.currentTimeMillis() + Long.parseLong(a[3]);
                Set<String> h = heard.get(a[1]);
                while (!h.contains(a[2].equals("-") ? "" : a[2])) {
                    if (System.currentTimeMillis() > end) return "timeout";
                    Thread.sleep(10);
                }
                return "ok";
            }
            case "ctr-sv-close":
                values.remove(a[1]).close();
                return "ok";
        }
        return "error unknown command " + a[0];
    }
}
