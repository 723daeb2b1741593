// QueueCommands: the Curator 5.4 queue commands of CuratorPeer
// (interop/queue_test.go). Items are UTF-8 strings; puts are synchronous
// (putInBackground(false)).
//
//   queue-put <kind> <path> <item> [<arg>]     -> ok   producer-only queue's put: kind plain, priority
//                                                    (<arg> the priority), delay (<arg> epoch ms), id (<arg> the id)
//   queue-putmulti <kind> <path> <a,b,...> [<arg>] -> ok  putMulti (plain, priority, delay)
//   queue-consume <kind> <path> <lockPath|->   -> ok   a started consumer recording what it takes
//   queue-taken <path> <n>                     -> ok <item>@<epoch ms>,...  once it has taken n (60 s)
//   queue-close <path>                         -> ok   closes the consumer
//   queue-offer <path> <item>                  -> ok   SimpleDistributedQueue.offer
//   queue-take <path>                          -> ok <item>  SimpleDistributedQueue.poll(60 s)
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.*;
import org.apache.curator.framework.state.ConnectionState;

class QueueCommands {
    static final QueueSerializer<String> serializer = new QueueSerializer<String>() {
        public byte[] serialize(String item) { return item.getBytes(StandardCharsets.UTF_8); }
        public String deserialize(byte[] bytes) { return new String(bytes, StandardCharsets.UTF_8); }
    };
    static final Map<String, QueueBase<String>> consumers = new HashMap<>();
    static final Map<String, List<String>> taken = new HashMap<>();

    static QueueBuilder<String> builder(CuratorFramework client, QueueConsumer<String> consumer, String path) {
        return QueueBuilder.builder(client, consumer, serializer, path).putInBackground(false).finalFlushTime(0, TimeUnit.MILLISECONDS);
    }

    static QueueBase<String> build(QueueBuilder<String> b, String kind) {
        switch (kind) {
            case "plain": return b.buildQueue();
            case "priority": return b.buildPriorityQueue(1);
            case "delay": return b.buildDelayQueue();
            case "id": return b.buildIdQueue();
        }
        throw new IllegalArgumentException("kind " + kind);
    }

    static MultiItem<String> multi(String items) {
        Iterator<String> it = Arrays.asList(items.split(",")).iterator();
        return () -> it.hasNext() ? it.next() : null;
    }

    static String run(CuratorFramework client, String[] a) throws Exception {
        switch (a[0]) {
            case "queue-put":
            case "queue-putmulti": {
                QueueBase<String> q = build(builder(client, null, a[2]), a[1]);
                q.start();
                try {
                    boolean m = a[0].equals("queue-putmulti");
                    switch (a[1]) {
                        case "plain":
                            if (m) ((DistributedQueue<String>) q).putMulti(multi(a[3])); else ((DistributedQueue<String>) q).put(a[3]);
                            break;
                        case "priority":
                            if (m) ((DistributedPriorityQueue<String>) q).putMulti(multi(a[3]), Integer.parseInt(a[4]));
                            else ((DistributedPriorityQueue<String>) q).put(a[3], Integer.parseInt(a[4]));
                            break;
                        case "delay":
                            if (m) ((DistributedDelayQueue<String>) q).putMulti(multi(a[3]), Long.parseLong(a[4]));
                            else ((DistributedDelayQueue<String>) q).put(a[3], Long.parseLong(a[4]));
                            break;
                        case "id":
                            ((DistributedIdQueue<String>) q).put(a[3], a[4]);
                            break;
                    }
                } finally {
                    q.close();
                }
                return "ok";
            }
            case "queue-consume": {
                List<String> got = Collections.synchronizedList(new ArrayList<>());
                taken.put(a[2], got);
                QueueConsumer<String> consumer = new QueueConsumer<String>() {
                    public void consumeMessage(String item) {
                        synchronized (got) {
                            got.add(item + "@" + System.currentTimeMillis());
                            got.notifyAll();
                        }
                    }
                    public void stateChanged(CuratorFramework c, ConnectionState s) {}
                };
                QueueBuilder<String> b = builder(client, consumer, a[2]);
                if (!a[3].equals("-")) b = b.lockPath(a[3]);
                QueueBase<String> q = build(b, a[1]);
                q.start();
                consumers.put(a[2], q);
                return "ok";
            }
            case "queue-taken": {
                List<String> got = taken.get(a[1]);
                int n = Integer.parseInt(a[2]);
                long end = System.currentTimeMillis() + 60000;
                synchronized (got) {
                    while (got.size() < n && System.currentTimeMillis() < end) got.wait(100);
                    if (got.size() < n) return "error taken " + got;
                    return "ok " + String.join(",", got);
                }
            }
            case "queue-close":
                consumers.remove(a[1]).close();
                return "ok";
            case "queue-offer":
                new SimpleDistributedQueue(client, a[1]).offer(a[2].getBytes(StandardCharsets.UTF_8));
                return "ok";
            case "queue-take": {
                byte[] b = new SimpleDistributedQueue(client, a[1]).poll(60, TimeUnit.SECONDS);
                return b == null ? "error nothing in 60s" : "ok " + new String(b, StandardCharsets.UTF_8);
            }
        }
        return "error unknown command " + a[0];
    }
}
