// CuratorPeer: one Apache Curator 5.4 client (Debian's jars), driven line by
// line by gocurator's interop tests (../*_test.go), which compile it with
// javac at test time. One command per line on stdin, exactly one answer line
// on stdout; a log of every command and answer goes to stderr.
//
//   connect <connectString>                      -> ok
//   localaddress                                 -> ok <CuratorFrameworkFactory.getLocalAddress()>
//   protected <nodeName>                         -> ok <true|false> <id|-> <normalized>  ProtectedUtils
//   mutex-acquire <path> <timeoutMs>             -> ok <lockNode> | timeout      InterProcessMutex
//   mutex-acquire-revocable <path> <timeoutMs>   -> ok <lockNode> | timeout      ... after makeRevocable
//   mutex-release <path>                         -> ok
//   participants-mutex <path>                    -> ok <node>,<node>,...         getParticipantNodes()
//   revoked <path>                               -> ok true|false                a revocation was requested
//   revoke <lockNode>                            -> ok                           Revoker.attemptRevoke
//   read-acquire|write-acquire <path> <timeoutMs> -> ok <lockNode> | timeout     InterProcessReadWriteLock
//   read-release|write-release <path>            -> ok
//   participants-read|participants-write <path>  -> ok <node>,...
//   sem-acquire <path> <max> <timeoutMs>         -> ok <leaseNodeName> | timeout InterProcessSemaphoreV2
//   sem-release <path> [<leaseNodeName>]         -> ok                           (default: the latest lease)
//   participants-sem <path>                      -> ok <name>,...
//   semmutex-acquire <path> <timeoutMs>          -> ok | timeout                 InterProcessSemaphoreMutex
//   semmutex-release <path>                      -> ok
//   count-get <path>                             -> ok <n>                       SharedCount (seed 0)
//   count-set <path> <n>                         -> ok
//   barrier-set|barrier-remove <path>            -> ok                           DistributedBarrier
//   barrier-wait <path> <timeoutMs>              -> ok | timeout
//   dbarrier-enter|dbarrier-leave <path> <n> <timeoutMs> -> ok | timeout         DistributedDoubleBarrier
//   session-id                                   -> ok <hex>                     the client's ZooKeeper session id
//   latch-start <path> <id>                      -> ok                           LeaderLatch(client, path, id).start()
//   latch-await <path> <timeoutMs>               -> ok <ourPath> | timeout       await(t, unit)
//   latch-has <path>                             -> ok true|false                hasLeadership()
//   latch-events <path>                          -> ok leader,not,...            what its listener heard
//   latch-close <path> [notify]                  -> ok                           close(SILENT | NOTIFY_LEADER)
//   latch-leader <path>                          -> ok <id> <isLeader>           getLeader()
//   latch-participants <path>                    -> ok <id>:<isLeader>,...       getParticipants()
//   selector-start <path> <id>                   -> ok                           LeaderSelector, autoRequeue, setId
//   selector-await <path> <timeoutMs>            -> ok | timeout                 until takeLeadership runs
//   selector-has <path>                          -> ok true|false                takeLeadership is running
//   selector-release <path>                      -> ok                           takeLeadership returns
//   selector-close <path>                        -> ok
//   node-create <path> <data>                    -> ok                           create().creatingParentsIfNeeded()
//   node-set <path> <data>                       -> ok                           setData()
//   node-delete <path>                           -> ok                           delete().deletingChildrenIfNeeded()
//   tree-read <path>                             -> ok <path>=<hex>:<mzxid>,...  getData/getChildren, recursively
//   churn <path> <n> <seed>                      -> ok <changes>                 n random creates, sets, deletes below path
//   cache-start <path>                           -> ok                           CuratorCache.build(client, path), until initialized
//   cache-read <path>                            -> ok <path>=<hex>,...          its contents (stream), sorted by path
//   cache-initialized <path>                     -> ok <n>                       how many initialized() it heard
//   cache-close <path>                           -> ok
//   bench-election <connect> <path> <n> <rounds> -> ok <ms>,<ms>,...             n LeaderLatches on n clients: start to first leader
//   bench-failover <connect> <path> <rounds>     -> ok <ms>,<ms>,...             leader's close to the next latch's isLeader
//   disc-...                                     curator-x-discovery: see DiscoveryCommands.java
//   group-...                                    GroupMember: see NodesCommands.java
//   queue-...                                    Curator's queues: see QueueCommands.java
//   ctr-...                                      recipes.atomic and recipes.shared: see CounterCommands.java
//   quit                                         (closes the client and exits; so does end of input)
//
// Failures answer "error <exception>: <message>". Every command runs on the
// main thread, in order: Curator's locks belong to the thread that took them,
// so a release must come from the thread that acquired. A command that
// blocks (an acquire waiting its turn) blocks the ones after it: the tests
// run one peer per concurrent Curator actor. A separate thread reads stdin
// and exits the JVM at end of input even while a command blocks, so a dead
// test process leaves no JVM behind.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.locks.*;
import org.apache.curator.framework.recipes.leader.*;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public class CuratorPeer {
    static CuratorFramework client;
    static final long T0 = System.nanoTime();

    // getLockPath() is protected in Curator 5.4: these subclasses expose the
    // lock node the calling thread holds.
    static class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework c, String path) { super(c, path); }
        String node() { return getLockPath(); }
    }

    static class WriteHalf extends InterProcessReadWriteLock.WriteLock {
        WriteHalf(CuratorFramework c, String path) { super(c, path, null); }
        String node() { return getLockPath(); }
    }

    static class ReadHalf extends InterProcessReadWriteLock.ReadLock {
        ReadHalf(CuratorFramework c, String path, WriteHalf w) { super(c, path, null, w); }
        String node() { return getLockPath(); }
    }

    static class RW {
        final WriteHalf write;
        final ReadHalf read;
        RW(String path) {
            write = new WriteHalf(client, path);
            read = new ReadHalf(client, path, write);
        }
    }

    static final Map<String, Mutex> mutexes = new HashMap<>();
    static final Map<String, RW> rws = new HashMap<>();
    static final Map<String, InterProcessSemaphoreV2> sems = new HashMap<>();
    static final Map<String, Deque<Lease>> leases = new HashMap<>();
    static final Map<String, InterProcessSemaphoreMutex> semMutexes = new HashMap<>();
    static final Map<String, DistributedDoubleBarrier> doubles = new HashMap<>();
    static final Set<String> revoked = ConcurrentHashMap.newKeySet();
    static final Map<String, LeaderLatch> latches = new HashMap<>();
    static final Map<String, List<String>> latchEvents = new ConcurrentHashMap<>();
    static final Map<String, Sel> selectors = new HashMap<>();
    static final Map<String, CuratorCache> caches = new HashMap<>();
    static final Map<String, AtomicInteger> cacheInits = new HashMap<>();

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        if (b != null) for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    static byte[] bytes(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    static void treeRead(String path, SortedMap<String, String> out) throws Exception {
        Stat st = new Stat();
        byte[] data;
        List<String> kids;
        try {
            data = client.getData().storingStatIn(st).forPath(path);
            kids = client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return;
        }
        out.put(path, hex(data) + ":" + st.getMzxid());
        for (String k : kids) treeRead(ZKPaths.makePath(path, k), out);
    }

    // churn: n random creates, sets and deletes at depths 1 to 3 below
    // path, over the names a, b, c (the Go side churns the same way).
    static String churn(String path, int n, long seed) throws Exception {
        Random r = new Random(seed);
        String[] names = {"a", "b", "c"};
        int done = 0;
        for (int i = 0; i < n; i++) {
            StringBuilder p = new StringBuilder(path);
            for (int d = 1 + r.nextInt(3); d > 0; d--) p.append('/').append(names[r.nextInt(names.length)]);
            byte[] data = bytes("java-" + i);
            try {
                switch (r.nextInt(3)) {
                    case 0: client.create().creatingParentsIfNeeded().forPath(p.toString(), data); break;
                    case 1: client.setData().forPath(p.toString(), data); break;
                    default: client.delete().forPath(p.toString()); break;
                }
                done++;
            } catch (KeeperException.NodeExistsException | KeeperException.NoNodeException | KeeperException.NotEmptyException e) {
                // the tree moved under us: part of the churn
            }
        }
        return "ok " + done;
    }

    // A LeaderSelector whose takeLeadership runs until released (or
    // interrupted: the adapter cancels it on SUSPENDED and LOST).
    static class Sel extends LeaderSelectorListenerAdapter {
        final LeaderSelector selector;
        final Semaphore release = new Semaphore(0);
        volatile boolean leading;
        final Object mon = new Object();
        Sel(String path, String id) {
            selector = new LeaderSelector(client, path, this);
            selector.setId(id);
            selector.autoRequeue();
        }
        public void takeLeadership(CuratorFramework c) throws Exception {
            synchronized (mon) { leading = true; mon.notifyAll(); }
            try {
                release.acquire();
            } finally {
                synchronized (mon) { leading = false; mon.notifyAll(); }
            }
        }
        boolean await(long ms) throws InterruptedException {
            long end = System.currentTimeMillis() + ms;
            synchronized (mon) {
                while (!leading) {
                    long left = end - System.currentTimeMillis();
                    if (left <= 0) return false;
                    mon.wait(left);
                }
                return true;
            }
        }
    }

    static CuratorFramework newClient(String connect) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect)
                .sessionTimeoutMs(10000).connectionTimeoutMs(10000)
                .retryPolicy(new ExponentialBackoffRetry(100, 5)).build();
        c.start();
        if (!c.blockUntilConnected(60, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
        return c;
    }

    // benchElection: n latches, each on a client of its own, started at
    // once; the time from the first start to the first isLeader.
    static String benchElection(String connect, String path, int n, int rounds) throws Exception {
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < n; i++) cs.add(newClient(connect));
        List<String> out = new ArrayList<>();
        try {
            for (int r = 0; r < rounds; r++) {
                String p = path + "/" + r;
                CountDownLatch first = new CountDownLatch(1);
                List<LeaderLatch> ls = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    LeaderLatch l = new LeaderLatch(cs.get(i), p, "p" + i);
                    l.addListener(new LeaderLatchListener() {
                        public void isLeader() { first.countDown(); }
                        public void notLeader() {}
                    });
                    ls.add(l);
                }
                long t0 = System.nanoTime();
                for (LeaderLatch l : ls) l.start();
                if (!first.await(60, TimeUnit.SECONDS)) throw new IllegalStateException("no leader in 60s");
                out.add(String.format(Locale.ROOT, "%.3f", (System.nanoTime() - t0) / 1e6));
                // everyone in line before the next round
                for (LeaderLatch l : ls) while (l.getOurPath() == null) Thread.sleep(1);
                for (LeaderLatch l : ls) l.close();
            }
        } finally {
            for (CuratorFramework c : cs) c.close();
        }
        return "ok " + String.join(",", out);
    }

    // benchFailover: two latches on two clients; the leader closes and the
    // time to the other's isLeader is measured; then they swap.
    static String benchFailover(String connect, String path, int rounds) throws Exception {
        CuratorFramework c1 = newClient(connect), c2 = newClient(connect);
        List<String> out = new ArrayList<>();
        try {
            LeaderLatch leader = new LeaderLatch(c1, path, "a");
            leader.start();
            leader.await();
            CuratorFramework[] cs = {c1, c2};
            for (int r = 0; r < rounds; r++) {
                CountDownLatch led = new CountDownLatch(1);
                LeaderLatch next = new LeaderLatch(cs[(r + 1) % 2], path, "n" + r);
                next.addListener(new LeaderLatchListener() {
                    public void isLeader() { led.countDown(); }
                    public void notLeader() {}
                });
                next.start();
                while (next.getOurPath() == null) Thread.sleep(1);
                while (next.getParticipants().size() < 2) Thread.sleep(1);
                long t0 = System.nanoTime();
                leader.close();
                if (!led.await(60, TimeUnit.SECONDS)) throw new IllegalStateException("no failover in 60s");
                out.add(String.format(Locale.ROOT, "%.3f", (System.nanoTime() - t0) / 1e6));
                leader = next;
            }
            leader.close();
        } finally {
            c1.close();
            c2.close();
        }
        return "ok " + String.join(",", out);
    }

    static void log(String s) {
        System.err.printf("[curator-peer %6.3fs] %s%n", (System.nanoTime() - T0) / 1e9, s);
        System.err.flush();
    }

    public static void main(String[] args) throws Exception {
        BlockingQueue<String> commands = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    commands.put(line);
                    if (line.trim().equals("quit")) break;
                }
            } catch (Exception e) {
                log("reading stdin: " + e);
            }
            // End of input or quit: let the main thread close the client,
            // but do not outlive the test process if it is stuck in a command.
            commands.add("quit");
            try {
                Thread.sleep(5000);
            } catch (InterruptedException ignore) {
            }
            log("still running 5s after quit: halting");
            Runtime.getRuntime().halt(3);
        }, "stdin");
        reader.setDaemon(true);
        reader.start();

        for (;;) {
            String line = commands.take();
            String[] a = line.trim().split("\\s+");
            if (a[0].equals("quit")) break;
            log("<- " + line);
            String out;
            try {
                out = run(a);
            } catch (Throwable e) {
                out = "error " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
            }
            log("-> " + out);
            System.out.println(out);
            System.out.flush();
        }
        log("quit");
        if (client != null) client.close();
        System.exit(0);
    }

    static long ms(String s) { return Long.parseLong(s); }

    static String joined(Collection<String> nodes) { return "ok " + String.join(",", nodes); }

    static Mutex mutex(String path) { return mutexes.computeIfAbsent(path, p -> new Mutex(client, p)); }

    static RW rw(String path) { return rws.computeIfAbsent(path, RW::new); }

    static String run(String[] a) throws Exception {
        switch (a[0]) {
            case "connect":
                client = CuratorFrameworkFactory.builder().connectString(a[1])
                        .sessionTimeoutMs(10000).connectionTimeoutMs(10000)
                        .retryPolicy(new ExponentialBackoffRetry(100, 5)).build();
                client.start();
                return client.blockUntilConnected(60, TimeUnit.SECONDS) ? "ok" : "error not connected in 60s";
            case "localaddress":
                return "ok " + new String(CuratorFrameworkFactory.getLocalAddress(), StandardCharsets.UTF_8);

            case "protected":
                return "ok " + ProtectedUtils.isProtectedZNode(a[1]) + " "
                        + ProtectedUtils.extractProtectedId(a[1]).orElse("-") + " " + ProtectedUtils.normalize(a[1]);

            case "mutex-acquire": {
                Mutex m = mutex(a[1]);
                return m.acquire(ms(a[2]), TimeUnit.MILLISECONDS) ? "ok " + m.node() : "timeout";
            }
            case "mutex-acquire-revocable": {
                Mutex m = mutex(a[1]);
                String path = a[1];
                m.makeRevocable(lock -> {
                    log("revocation requested: " + path);
                    revoked.add(path);
                });
                return m.acquire(ms(a[2]), TimeUnit.MILLISECONDS) ? "ok " + m.node() : "timeout";
            }
            case "mutex-release":
                mutex(a[1]).release();
                return "ok";
            case "participants-mutex":
                return joined(new InterProcessMutex(client, a[1]).getParticipantNodes());
            case "revoked":
                return "ok " + revoked.contains(a[1]);
            case "revoke":
                Revoker.attemptRevoke(client, a[1]);
                return "ok";

            case "read-acquire": {
                ReadHalf r = rw(a[1]).read;
                return r.acquire(ms(a[2]), TimeUnit.MILLISECONDS) ? "ok " + r.node() : "timeout";
            }
            case "write-acquire": {
                WriteHalf w = rw(a[1]).write;
                return w.acquire(ms(a[2]), TimeUnit.MILLISECONDS) ? "ok " + w.node() : "timeout";
            }
            case "read-release":
                rw(a[1]).read.release();
                return "ok";
            case "write-release":
                rw(a[1]).write.release();
                return "ok";
            case "participants-read":
                return joined(new InterProcessReadWriteLock(client, a[1]).readLock().getParticipantNodes());
            case "participants-write":
                return joined(new InterProcessReadWriteLock(client, a[1]).writeLock().getParticipantNodes());

            case "sem-acquire": {
                int max = Integer.parseInt(a[2]);
                InterProcessSemaphoreV2 s = sems.computeIfAbsent(a[1], p -> new InterProcessSemaphoreV2(client, p, max));
                Lease l = s.acquire(ms(a[3]), TimeUnit.MILLISECONDS);
                if (l == null) return "timeout";
                leases.computeIfAbsent(a[1], p -> new ArrayDeque<>()).push(l);
                return "ok " + l.getNodeName();
            }
            case "sem-release": {
                Deque<Lease> held = leases.getOrDefault(a[1], new ArrayDeque<>());
                Lease l = null;
                if (a.length > 2) {
                    for (Lease x : held) if (x.getNodeName().equals(a[2])) l = x;
                } else {
                    l = held.peek();
                }
                if (l == null) return "error no such lease";
                held.remove(l);
                l.close();
                return "ok";
            }
            case "participants-sem":
                return joined(new InterProcessSemaphoreV2(client, a[1], 1).getParticipantNodes());
            case "semmutex-acquire": {
                InterProcessSemaphoreMutex m = semMutexes.computeIfAbsent(a[1], p -> new InterProcessSemaphoreMutex(client, p));
                return m.acquire(ms(a[2]), TimeUnit.MILLISECONDS) ? "ok" : "timeout";
            }
            case "semmutex-release":
                semMutexes.get(a[1]).release();
                return "ok";

            case "count-get":
            case "count-set": {
                try (SharedCount c = new SharedCount(client, a[1], 0)) {
                    c.start();
                    if (a[0].equals("count-set")) {
                        c.setCount(Integer.parseInt(a[2]));
                        return "ok";
                    }
                    return "ok " + c.getCount();
                }
            }

            case "barrier-set":
                new DistributedBarrier(client, a[1]).setBarrier();
                return "ok";
            case "barrier-remove":
                new DistributedBarrier(client, a[1]).removeBarrier();
                return "ok";
            case "barrier-wait":
                return new DistributedBarrier(client, a[1]).waitOnBarrier(ms(a[2]), TimeUnit.MILLISECONDS) ? "ok" : "timeout";
            case "dbarrier-enter": {
                // A member is one DistributedDoubleBarrier (one UUID node):
                // a new one per enter, kept for the leave that follows.
                DistributedDoubleBarrier b = new DistributedDoubleBarrier(client, a[1], Integer.parseInt(a[2]));
                doubles.put(a[1], b);
                return b.enter(ms(a[3]), TimeUnit.MILLISECONDS) ? "ok" : "timeout";
            }
            case "dbarrier-leave": {
                DistributedDoubleBarrier b = doubles.remove(a[1]);
                if (b == null) return "error not entered";
                return b.leave(ms(a[3]), TimeUnit.MILLISECONDS) ? "ok" : "timeout";
            }
            case "session-id":
                return "ok " + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
            case "latch-start": {
                LeaderLatch l = new LeaderLatch(client, a[1], a[2]);
                String path = a[1];
                List<String> ev = Collections.synchronizedList(new ArrayList<>());
                latchEvents.put(path, ev);
                l.addListener(new LeaderLatchListener() {
                    public void isLeader() { ev.add("leader"); }
                    public void notLeader() { ev.add("not"); }
                });
                latches.put(path, l);
                l.start();
                return "ok";
            }
            case "latch-await": {
                LeaderLatch l = latches.get(a[1]);
                return l.await(ms(a[2]), TimeUnit.MILLISECONDS) ? "ok " + l.getOurPath() : "timeout";
            }
            case "latch-has":
                return "ok " + latches.get(a[1]).hasLeadership();
            case "latch-events":
                synchronized (latchEvents.get(a[1])) {
                    return "ok " + String.join(",", latchEvents.get(a[1]));
                }
            case "latch-close":
                latches.remove(a[1]).close(a.length > 2 && a[2].equals("notify") ? LeaderLatch.CloseMode.NOTIFY_LEADER : LeaderLatch.CloseMode.SILENT);
                return "ok";
            case "latch-leader": {
                Participant p = new LeaderLatch(client, a[1]).getLeader();
                return "ok " + p.getId() + " " + p.isLeader();
            }
            case "latch-participants": {
                List<String> ps = new ArrayList<>();
                for (Participant p : new LeaderLatch(client, a[1]).getParticipants()) ps.add(p.getId() + ":" + p.isLeader());
                return joined(ps);
            }
            case "selector-start": {
                Sel sel = new Sel(a[1], a[2]);
                selectors.put(a[1], sel);
                sel.selector.start();
                return "ok";
            }
            case "selector-await":
                return selectors.get(a[1]).await(ms(a[2])) ? "ok" : "timeout";
            case "selector-has":
                return "ok " + selectors.get(a[1]).leading;
            case "selector-release":
                selectors.get(a[1]).release.release();
                return "ok";
            case "selector-close":
                selectors.remove(a[1]).selector.close();
                return "ok";
            case "node-create":
                client.create().creatingParentsIfNeeded().forPath(a[1], bytes(a[2]));
                return "ok";
            case "node-set":
                client.setData().forPath(a[1], bytes(a[2]));
                return "ok";
            case "node-delete":
                client.delete().deletingChildrenIfNeeded().forPath(a[1]);
                return "ok";
            case "tree-read": {
                SortedMap<String, String> out = new TreeMap<>();
                treeRead(a[1], out);
                List<String> parts = new ArrayList<>();
                for (Map.Entry<String, String> e : out.entrySet()) parts.add(e.getKey() + "=" + e.getValue());
                return joined(parts);
            }
            case "churn":
                return churn(a[1], Integer.parseInt(a[2]), Long.parseLong(a[3]));
            case "cache-start": {
                CuratorCache c = CuratorCache.build(client, a[1]);
                CountDownLatch init = new CountDownLatch(1);
                AtomicInteger inits = new AtomicInteger();
                c.listenable().addListener(CuratorCacheListener.builder().forInitialized(() -> {
                    inits.incrementAndGet();
                    init.countDown();
                }).build());
                caches.put(a[1], c);
                cacheInits.put(a[1], inits);
                c.start();
                return init.await(60, TimeUnit.SECONDS) ? "ok" : "error not initialized in 60s";
            }
            case "cache-read": {
                List<String> parts = new ArrayList<>();
                caches.get(a[1]).stream().sorted().forEach(d -> parts.add(d.getPath() + "=" + hex(d.getData())));
                return joined(parts);
            }
            case "cache-initialized":
                return "ok " + cacheInits.get(a[1]).get();
            case "cache-close":
                caches.remove(a[1]).close();
                return "ok";
            case "bench-election":
                return benchElection(a[1], a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]));
            case "bench-failover":
                return benchFailover(a[1], a[2], Integer.parseInt(a[3]));
            default:
                if (a[0].startsWith("disc-")) return DiscoveryCommands.run(client, a);
                if (a[0].startsWith("group-")) return NodesCommands.run(client, a);
                if (a[0].startsWith("queue-")) return QueueCommands.run(client, a);
                if (a[0].startsWith("ctr-")) return CounterCommands.run(client, a);
                return "error unknown command " + a[0];
        }
    }
}
