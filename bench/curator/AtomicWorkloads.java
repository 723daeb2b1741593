// The atomic workload of the curator peer (../atomic.go has the Go
// peers'): K sessions, each its own DistributedAtomicLong on one counter,
// --ops increments in total; the same optimistic policy as the Go peers
// (BoundedExponentialBackoffRetry(1, 50, 29)); an increment that runs out
// of retries is made again, counted once. The counter must then hold
// exactly the timed increments: anything else is a violation.
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;

final class AtomicWorkloads {
    private AtomicWorkloads() {}

    static DistributedAtomicLong counter(CuratorFramework c, String path) {
        return new DistributedAtomicLong(c, path, new BoundedExponentialBackoffRetry(1, 50, 29));
    }

    static Workloads.Timed run(List<CuratorFramework> cs, String path, int n, long minNanos) throws Exception {
        DistributedAtomicLong[] counters = new DistributedAtomicLong[cs.size()];
        for (int w = 0; w < counters.length; w++) counters[w] = counter(cs.get(w), path);
        return Workloads.timed(counters.length, n, minNanos, (w, i) -> {
            long s = System.nanoTime();
            while (true) {
                AtomicValue<Long> r = counters[w].increment();
                if (r.succeeded()) return System.nanoTime() - s;
            }
        });
    }

    static Bench.Result atomic(int k, int ops) throws Exception {
        List<CuratorFramework> cs = Workloads.clients(k);
        Workloads.Timed warm = run(cs, Bench.root + "/warm", Bench.warmup, Bench.warmupNanos);
        Workloads.Timed t = run(cs, Bench.root + "/counter", ops, 0);
        Bench.Result r = new Bench.Result(ops, t.wall, t.cpu, t.lat).warmedUp(warm);
        long got = counter(cs.get(0), Bench.root + "/counter").get().postValue();
        if (got != t.made) {
            System.err.println("VIOLATION: atomic: the counter holds " + got + " after " + t.made + " increments");
            r.violations++;
        }
        r.checked = t.made;
        for (CuratorFramework c : cs) c.close();
        return r;
    }
}
