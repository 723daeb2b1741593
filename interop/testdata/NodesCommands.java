// NodesCommands: Curator 5.4's GroupMember, for CuratorPeer
// (interop/nodes_test.go).
//
//   group-start <path> <id> <payload>   -> ok                 new GroupMember(client, path, id, payload).start()
//   group-members <path>                -> ok <id>=<data>,...  getCurrentMembers(), sorted by id
//   group-close <path>                  -> ok                 close()
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.GroupMember;

class NodesCommands {
    static final Map<String, GroupMember> members = new HashMap<>();

    static String run(CuratorFramework client, String[] a) throws Exception {
        switch (a[0]) {
            case "group-start": {
                GroupMember m = new GroupMember(client, a[1], a[2], a[3].getBytes(StandardCharsets.UTF_8));
                m.start();
                members.put(a[1], m);
                return "ok";
            }
            case "group-members": {
                TreeMap<String, byte[]> sorted = new TreeMap<>(members.get(a[1]).getCurrentMembers());
                List<String> out = new ArrayList<>();
                for (Map.Entry<String, byte[]> e : sorted.entrySet())
                    out.add(e.getKey() + "=" + new String(e.getValue(), StandardCharsets.UTF_8));
                return "ok " + String.join(",", out);
            }
            case "group-close":
                members.remove(a[1]).close();
                return "ok";
            default:
                return "error unknown command " + a[0];
        }
    }
}
