// CuratorPeer: an Apache Curator 5.4 client driven by gocurator's interop
// tests. One command per line on stdin, one answer line on stdout:
//   connect <connectString>
//   mutex-acquire|read-acquire|write-acquire <path> <timeoutMs>  -> ok <node> | timeout
//   mutex-release|read-release|write-release <path>              -> ok
//   participants <path>                                           -> ok <node,node,...>
//   sem-acquire <path> <max> <timeoutMs>                          -> ok <leaseNode> | timeout
//   sem-release <path>                                            -> ok
//   barrier-set|barrier-remove <path>                             -> ok
//   barrier-wait <path> <timeoutMs>                               -> ok | timeout
//   dbarrier-enter|dbarrier-leave <path> <n> <timeoutMs>          -> ok | timeout
//   quit
// Errors answer "error <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.*;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.locks.*;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorPeer {
    static CuratorFramework client;
    static final Map<String, InterProcessMutex> mutexes = new HashMap<>();
    static final Map<String, InterProcessReadWriteLock> rws = new HashMap<>();
    static final Map<String, InterProcessSemaphoreV2> sems = new HashMap<>();
    static final Map<String, Deque<Lease>> leases = new HashMap<>();
    static final Map<String, DistributedDoubleBarrier> dbs = new HashMap<>();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.trim().split(" ");
            String out;
            try {
                out = run(a);
            } catch (Exception e) {
                out = "error " + e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            if (out == null) break;
            System.out.println(out);
            System.out.flush();
        }
        if (client != null) client.close();
    }

    static InterProcessMutex lockOf(String kind, String path) {
        switch (kind) {
            case "mutex": return mutexes.computeIfAbsent(path, p -> new InterProcessMutex(client, p));
            case "read": return rws.computeIfAbsent(path, p -> new InterProcessReadWriteLock(client, p)).readLock();
            default: return rws.computeIfAbsent(path, p -> new InterProcessReadWriteLock(client, p)).writeLock();
        }
    }

    static String run(String[] a) throws Exception {
        String cmd = a[0];
        switch (cmd) {
            case "quit": return null;
            case "connect":
                client = CuratorFrameworkFactory.builder().connectString(a[1]).sessionTimeoutMs(10000)
                        .connectionTimeoutMs(10000).retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
                client.start();
                return client.blockUntilConnected(30, TimeUnit.SECONDS) ? "ok" : "error not connected";
            case "mutex-acquire": case "read-acquire": case "write-acquire": {
                InterProcessMutex m = lockOf(cmd.substring(0, cmd.indexOf('-')), a[1]);
                if (!m.acquire(Long.parseLong(a[2]), TimeUnit.MILLISECONDS)) return "timeout";
                return "ok";
            }
            case "mutex-release": case "read-release": case "write-release":
                lockOf(cmd.substring(0, cmd.indexOf('-')), a[1]).release();
                return "ok";
            case "participants":
                return "ok " + String.join(",", new InterProcessMutex(client, a[1]).getParticipantNodes());
            case "sem-acquire": {
                InterProcessSemaphoreV2 s = sems.computeIfAbsent(a[1], p -> new InterProcessSemaphoreV2(client, p, Integer.parseInt(a[2])));
                Lease l = s.acquire(Long.parseLong(a[3]), TimeUnit.MILLISECONDS);
                if (l == null) return "timeout";
                leases.computeIfAbsent(a[1], p -> new ArrayDeque<>()).push(l);
                return "ok " + l.getNodeName();
            }
            case "sem-release":
                leases.get(a[1]).pop().close();
                return "ok";
            case "barrier-set": new DistributedBarrier(client, a[1]).setBarrier(); return "ok";
            case "barrier-remove": new DistributedBarrier(client, a[1]).removeBarrier(); return "ok";
            case "barrier-wait":
                return new DistributedBarrier(client, a[1]).waitOnBarrier(Long.parseLong(a[2]), TimeUnit.MILLISECONDS) ? "ok" : "timeout";
            case "dbarrier-enter": {
                DistributedDoubleBarrier b = dbs.computeIfAbsent(a[1], p -> new DistributedDoubleBarrier(client, p, Integer.parseInt(a[2])));
                return b.enter(Long.parseLong(a[3]), TimeUnit.MILLISECONDS) ? "ok" : "timeout";
            }
            case "dbarrier-leave":
                return dbs.get(a[1]).leave(Long.parseLong(a[3]), TimeUnit.MILLISECONDS) ? "ok" : "timeout";
            default: return "error unknown command " + cmd;
        }
    }
}
