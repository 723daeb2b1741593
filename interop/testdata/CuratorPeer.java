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
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.locks.*;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.ExponentialBackoffRetry;

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
            default:
                return "error unknown command " + a[0];
        }
    }
}
