// DiscoveryCommands: the curator-x-discovery 5.4 commands of CuratorPeer
// (interop/discovery_test.go). Payloads are HashMaps, as k=v;k=v on the
// command line; JsonInstanceSerializer(Map.class, false) writes "enabled".
//
//   disc-register <base> <name> <id> <address> <port> <k=v;...|->  -> ok   registerService (DYNAMIC)
//   disc-update <base> <name> <id> <address> <port> <k=v;...|->    -> ok   updateService
//   disc-unregister <base> <name> <id>                -> ok                unregisterService
//   disc-names <base>                                 -> ok <name>,...     queryForNames
//   disc-instances <base> <name>                      -> ok <inst>,...     queryForInstances, sorted by id
//   disc-cache-start <base> <name>                    -> ok                ServiceCache start (initial load)
//   disc-cache <base> <name>                          -> ok <inst>,...     its getInstances, sorted by id
//   disc-provider <base> <name>                       -> ok <id>|none      a started ServiceProvider's getInstance
//   disc-reserialize <base> <name> <id>               -> ok <json>         queryForInstance, written again by Java
//
// <inst> is id|address|port|k=v;...|enabled.
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.*;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;

@SuppressWarnings({"rawtypes", "unchecked"})
class DiscoveryCommands {
    static final Map<String, ServiceDiscovery<Map>> discoveries = new HashMap<>();
    static final Map<String, ServiceCache<Map>> caches = new HashMap<>();
    static final Map<String, ServiceProvider<Map>> providers = new HashMap<>();
    static final JsonInstanceSerializer<Map> serializer = new JsonInstanceSerializer<>(Map.class, false);

    static ServiceDiscovery<Map> discovery(CuratorFramework client, String base) throws Exception {
        ServiceDiscovery<Map> d = discoveries.get(base);
        if (d == null) {
            d = ServiceDiscoveryBuilder.builder(Map.class).client(client).basePath(base).serializer(serializer).build();
            d.start();
            discoveries.put(base, d);
        }
        return d;
    }

    static Map payload(String s) {
        if (s.equals("-")) return null;
        Map<String, String> m = new HashMap<>();
        for (String kv : s.split(";")) {
            String[] p = kv.split("=", 2);
            m.put(p[0], p[1]);
        }
        return m;
    }

    static String show(ServiceInstance<Map> i) {
        StringBuilder p = new StringBuilder();
        if (i.getPayload() != null) {
            TreeMap<String, Object> sorted = new TreeMap<>(i.getPayload());
            for (Map.Entry<String, Object> e : sorted.entrySet()) {
                if (p.length() > 0) p.append(';');
                p.append(e.getKey()).append('=').append(e.getValue());
            }
        }
        return i.getId() + "|" + i.getAddress() + "|" + i.getPort() + "|" + p + "|" + i.isEnabled();
    }

    static String shown(Collection<ServiceInstance<Map>> all) {
        List<ServiceInstance<Map>> l = new ArrayList<>(all);
        l.sort(Comparator.comparing(ServiceInstance::getId));
        List<String> out = new ArrayList<>();
        for (ServiceInstance<Map> i : l) out.add(show(i));
        return "ok " + String.join(",", out);
    }

    static ServiceInstance<Map> instance(String[] a) throws Exception {
        return ServiceInstance.<Map>builder().name(a[2]).id(a[3]).address(a[4]).port(Integer.parseInt(a[5]))
                .payload(payload(a[6])).build();
    }

    static String run(CuratorFramework client, String[] a) throws Exception {
        switch (a[0]) {
            case "disc-register":
                discovery(client, a[1]).registerService(instance(a));
                return "ok";
            case "disc-update":
                discovery(client, a[1]).updateService(instance(a));
                return "ok";
            case "disc-unregister": {
                ServiceDiscovery<Map> d = discovery(client, a[1]);
                d.unregisterService(d.queryForInstance(a[2], a[3]));
                return "ok";
            }
            case "disc-names": {
                List<String> names = new ArrayList<>(discovery(client, a[1]).queryForNames());
                Collections.sort(names);
                return "ok " + String.join(",", names);
            }
            case "disc-instances":
                return shown(discovery(client, a[1]).queryForInstances(a[2]));
            case "disc-cache-start": {
                ServiceCache<Map> c = discovery(client, a[1]).serviceCacheBuilder().name(a[2]).build();
                c.start();
                caches.put(a[1] + " " + a[2], c);
                return "ok";
            }
            case "disc-cache":
                return shown(caches.get(a[1] + " " + a[2]).getInstances());
            case "disc-provider": {
                String key = a[1] + " " + a[2];
                ServiceProvider<Map> p = providers.get(key);
                if (p == null) {
                    p = discovery(client, a[1]).serviceProviderBuilder().serviceName(a[2]).build();
                    p.start();
                    providers.put(key, p);
                }
                ServiceInstance<Map> i = p.getInstance();
                return i == null ? "ok none" : "ok " + i.getId();
            }
            case "disc-reserialize": {
                ServiceInstance<Map> i = discovery(client, a[1]).queryForInstance(a[2], a[3]);
                return i == null ? "error no instance" : "ok " + new String(serializer.serialize(i), StandardCharsets.UTF_8);
            }
            default:
                return "error unknown command " + a[0];
        }
    }
}
