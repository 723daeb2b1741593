package inspect

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/layout"
)

func contender(i int, kind string, seq int) string {
	return fmt.Sprintf("_c_%s-%s%010d", uuid(i), kind, seq)
}

func take(t *testing.T, f *fake, path string, o Options) *Snapshot {
	t.Helper()
	s, err := Take(context.Background(), f, path, o)
	if err != nil {
		t.Fatalf("Take(%s): %v", path, err)
	}
	return s
}

// only returns the one recipe of the snapshot at path.
func only(t *testing.T, s *Snapshot, path string) Recipe {
	t.Helper()
	var found []Recipe
	for _, r := range s.Recipes {
		if r.Path == path {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("recipes at %s: %+v, want one (all: %v)", path, found, kinds(s))
	}
	return found[0]
}

func kinds(s *Snapshot) []string {
	var out []string
	for _, r := range s.Recipes {
		out = append(out, r.Path+"="+string(r.Kind))
	}
	return out
}

func names(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func TestMutexQueueBySequence(t *testing.T) {
	f := newFake()
	now := time.Now().UnixMilli()
	// UUIDs sort in the opposite order of the sequences: the queue must
	// follow the sequences.
	n0, n1, n2 := contender(9, "lock-", 0), contender(5, "lock-", 1), contender(1, "lock-", 2)
	f.add("/app/m/"+n1, "10.0.0.2", 0x22, now-2000)
	f.add("/app/m/"+n0, "10.0.0.1", 0x11, now-3000)
	f.add("/app/m/"+n2, string([]byte{1, 2}), 0x33, now-1000)
	s := take(t, f, "/app", Options{})
	if len(s.Recipes) != 1 {
		t.Fatalf("recipes %v; /app only holds /app/m, which is one mutex", kinds(s))
	}
	r := only(t, s, "/app/m")
	if r.Kind != KindMutex || r.Label != "mutex (or LeaderSelector)" {
		t.Errorf("kind %s %q", r.Kind, r.Label)
	}
	if got := names(r.Holders); !slices.Equal(got, []string{n0}) {
		t.Errorf("holders %v, want %v", got, n0)
	}
	if got := names(r.Waiters); !slices.Equal(got, []string{n1, n2}) {
		t.Errorf("waiters %v, want [%s %s]", got, n1, n2)
	}
	h := r.Holders[0]
	if h.Session != "0x11" || h.Data != "10.0.0.1" || h.DataEncoding != "text" || h.Sequence != "0000000000" ||
		h.ProtectedID != uuid(9) || h.Role != RoleHolder || h.Position != 1 || h.Path != "/app/m/"+n0 {
		t.Errorf("holder %+v", h)
	}
	if h.Token == 0 || h.TokenHex != fmt.Sprintf("0x%x", h.Token) {
		t.Errorf("token %d %s", h.Token, h.TokenHex)
	}
	if h.AgeMillis < 3000 || h.AgeMillis > 60000 {
		t.Errorf("age %d ms, want about 3 s", h.AgeMillis)
	}
	if w := r.Waiters[1]; w.Data != "0102" || w.DataEncoding != "hex" || w.Position != 2 || w.Role != RoleWaiter {
		t.Errorf("second waiter %+v", w)
	}
}

func TestReadWriteClassification(t *testing.T) {
	for _, tc := range []struct {
		name             string
		nodes            []string // R or W, seq, session: "R1@7"
		holders, waiters []string
	}{
		{"readers then a writer", []string{"R0@1", "R1@2", "W2@3", "R3@4"}, []string{"R0", "R1"}, []string{"W2", "R3"}},
		{"a writer first", []string{"W0@1", "R1@2", "R2@3"}, []string{"W0"}, []string{"R1", "R2"}},
		{"writers queue", []string{"W4@1", "W5@2", "R6@3"}, []string{"W4"}, []string{"W5", "R6"}},
		{"readers only", []string{"R1@1", "R2@2"}, []string{"R1", "R2"}, nil},
		{"downgrade: a read node shares its writer's sequence", []string{"W5@1", "R5@1", "W6@2"}, []string{"R5", "W5"}, []string{"W6"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			short := map[string]string{}
			for i, n := range tc.nodes {
				var mode byte
				var seq, sess int
				fmt.Sscanf(n, "%c%d@%d", &mode, &seq, &sess)
				kind := "__READ__"
				if mode == 'W' {
					kind = "__WRIT__"
				}
				// The read node of a downgrade gets the lower UUID, so
				// that it sorts first among equals, as it may.
				full := contender(len(tc.nodes)-i, kind, seq)
				short[full] = n[:strings.IndexByte(n, '@')]
				f.add("/rw/"+full, "", int64(sess), 0)
			}
			r := only(t, take(t, f, "/rw", Options{}), "/rw")
			if r.Kind != KindReadWrite {
				t.Fatalf("kind %s", r.Kind)
			}
			conv := func(es []Entry) []string {
				var out []string
				for _, e := range es {
					out = append(out, short[e.Name])
				}
				return out
			}
			if got := conv(r.Holders); !slices.Equal(got, tc.holders) {
				t.Errorf("holders %v, want %v", got, tc.holders)
			}
			if got := conv(r.Waiters); !slices.Equal(got, tc.waiters) {
				t.Errorf("waiters %v, want %v", got, tc.waiters)
			}
			for _, e := range append(r.Holders, r.Waiters...) {
				if want := map[byte]string{'R': "read", 'W': "write"}[short[e.Name][0]]; e.Mode != want {
					t.Errorf("%s: mode %q, want %q", short[e.Name], e.Mode, want)
				}
			}
		})
	}
}

// Curator's downgrade is a read node behind its own writer: by layout it
// waits, and the listing says it may hold.
func TestReadWriteCuratorDowngradeNote(t *testing.T) {
	f := newFake()
	w, r := contender(1, "__WRIT__", 0), contender(2, "__READ__", 1)
	f.add("/rw/"+w, "", 7, 0)
	f.add("/rw/"+r, "", 7, 0)
	rec := only(t, take(t, f, "/rw", Options{}), "/rw")
	if len(rec.Waiters) != 1 || len(rec.Waiters[0].Notes) == 0 || !strings.Contains(rec.Waiters[0].Notes[0], "same session") {
		t.Fatalf("waiters %+v: want the read node with a note on its session", rec.Waiters)
	}
}

func TestSemaphore(t *testing.T) {
	f := newFake()
	l0, l1 := contender(1, "lease-", 0), contender(2, "lease-", 1)
	f.add("/s/leases/"+l0, "a", 0x1, 0)
	f.add("/s/leases/"+l1, "b", 0x2, 0)
	k0, k1 := contender(3, "lock-", 0), contender(4, "lock-", 1)
	f.add("/s/locks/"+k0, "c", 0x9, 0)
	f.add("/s/locks/"+k1, "d", 0xa, 0)
	l2 := contender(5, "lease-", 2)
	f.add("/s/leases/"+l2, "c", 0x9, 0) // made by the lock's holder after its lock node
	s := take(t, f, "/s", Options{})
	if len(s.Recipes) != 1 {
		t.Fatalf("recipes %v, want the semaphore alone (its locks and leases are part of it)", kinds(s))
	}
	r := s.Recipes[0]
	if r.Kind != KindSemaphore || r.Lock == nil {
		t.Fatalf("recipe %+v", r)
	}
	if got := names(r.Leases); !slices.Equal(got, []string{l0, l1, l2}) {
		t.Errorf("leases %v", got)
	}
	if names(r.Lock.Holders)[0] != k0 || !slices.Equal(names(r.Lock.Waiters), []string{k1}) || r.Lock.Path != "/s/locks" {
		t.Errorf("internal lock %+v", r.Lock)
	}
	for i, want := range []string{"granted", "granted", "being acquired"} {
		if n := r.Leases[i].Notes; len(n) != 1 || !strings.HasPrefix(n[0], want) {
			t.Errorf("lease %d notes %v, want %q", i, n, want)
		}
	}
	if len(r.Holders) != 0 || len(r.Waiters) != 0 {
		t.Errorf("a semaphore lists leases, not holders: %+v", r)
	}

	// Inspecting the leases alone.
	if r := only(t, take(t, f, "/s/leases", Options{}), "/s/leases"); r.Kind != KindSemaphore || len(r.Leases) != 3 {
		t.Errorf("leases alone: %+v", r)
	}
	// The internal lock alone is a mutex, said to be maybe a semaphore's.
	if r := only(t, take(t, f, "/s/locks", Options{}), "/s/locks"); r.Kind != KindMutex || len(r.Notes) == 0 {
		t.Errorf("internal lock alone: %+v", r)
	}
}

// A "locks" child that is a directory of locks does not make a semaphore.
func TestNotASemaphore(t *testing.T) {
	f := newFake()
	f.add("/app/locks/orders/"+contender(1, "lock-", 0), "", 1, 0)
	f.add("/app/locks/users/"+contender(2, "lock-", 0), "", 2, 0)
	s := take(t, f, "/app", Options{})
	if got := kinds(s); !slices.Equal(got, []string{"/app/locks/orders=mutex", "/app/locks/users=mutex"}) {
		t.Errorf("recipes %v", got)
	}
}

func TestLatchBarriersCountsUnknown(t *testing.T) {
	f := newFake()
	a, b := contender(2, "latch-", 7), contender(1, "latch-", 8)
	f.add("/l/"+b, "participant-b", 2, 0)
	f.add("/l/"+a, "participant-a", 1, 0)
	ours := "_c_" + uuid(3) + "-member"
	f.add("/db/"+uuid(4), "", 4, 0) // Curator's member, entered first
	f.add("/db/"+ours, "", 3, 0)
	f.add("/db/ready", "", 0, 0)
	f.add("/count", string([]byte{0, 0, 1, 2}), 0, 0)
	f.add("/long", string([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}), 0, 0)
	f.add("/eph4", string([]byte{0, 0, 1, 2}), 9, 0)
	f.add("/barrier", "127.0.0.1", 0, 0)
	f.add("/svc/instance-1", "host:80", 5, 0)
	f.add("/svc/_c_0123456789abcdef0123456789abcdef-lock-0000000001", "", 6, 0)
	f.add("/svc/config", "x", 0, 0)
	f.add("/mixed/"+contender(1, "lock-", 0), "", 1, 0)
	f.add("/mixed/"+contender(2, "latch-", 0), "", 2, 0)
	s := take(t, f, "/", Options{})
	// An ephemeral leaf (eph4) is a child of no known layout: its parent
	// (/) is listed as unknown.
	want := []string{"/=unknown", "/barrier=barrier-or-plain-node", "/count=shared-count", "/db=double-barrier",
		"/l=leader-latch", "/long=atomic-long", "/mixed=mutex", "/mixed=leader-latch",
		"/svc=unknown", "/svc/config=barrier-or-plain-node"}
	if got := kinds(s); !slices.Equal(got, want) {
		t.Fatalf("recipes\n%v\nwant\n%v", got, want)
	}
	l := only(t, s, "/l")
	if names(l.Holders)[0] != a || l.Holders[0].Data != "participant-a" || names(l.Waiters)[0] != b {
		t.Errorf("latch %+v", l)
	}
	db := only(t, s, "/db")
	if got := names(db.Members); !slices.Equal(got, []string{uuid(4), ours}) || db.Ready == nil || !*db.Ready {
		t.Errorf("double barrier members %v ready %v", got, db.Ready)
	}
	if c := only(t, s, "/count"); c.Count == nil || *c.Count != 258 || c.Node == nil {
		t.Errorf("shared count %+v", c)
	}
	if l := only(t, s, "/long"); l.Long == nil || *l.Long != -2 || l.Node == nil {
		t.Errorf("atomic long %+v", l)
	}
	if b := only(t, s, "/barrier"); b.Node == nil || b.Node.Data != "127.0.0.1" {
		t.Errorf("barrier %+v", b)
	}
	if u := only(t, s, "/svc"); len(u.Children) != 2 {
		t.Errorf("unknown %+v", u)
	}
	if u := only(t, s, "/"); len(u.Children) != 1 || u.Children[0].Name != "eph4" {
		t.Errorf("unknown %+v", u)
	}
	// An ephemeral node inspected by itself is a plain node, 4 bytes or not.
	if r := only(t, take(t, f, "/eph4", Options{}), "/eph4"); r.Kind != KindBarrier || len(r.Notes) == 0 {
		t.Errorf("ephemeral leaf alone: %+v", r)
	}
}

func TestRevocationNote(t *testing.T) {
	f := newFake()
	n := contender(1, "lock-", 0)
	f.add("/m/"+n, layout.RevokeMessage, 1, 0)
	r := only(t, take(t, f, "/m", Options{}), "/m")
	if len(r.Holders[0].Notes) != 1 || !strings.Contains(r.Holders[0].Notes[0], "revocation requested") {
		t.Errorf("holder notes %v", r.Holders[0].Notes)
	}
}

func TestReadProblems(t *testing.T) {
	f := newFake()
	f.add("/a/m/"+contender(1, "lock-", 0), "", 1, 0)
	f.add("/a/secret/x", "", 0, 0)
	f.nodes["/a/secret"].noAuth = true
	s := take(t, f, "/a", Options{})
	if got := kinds(s); !slices.Equal(got, []string{"/a/m=mutex"}) {
		t.Errorf("recipes %v", got)
	}
	if len(s.Unreadable) != 1 || s.Unreadable[0].Path != "/a/secret" {
		t.Errorf("unreadable %+v", s.Unreadable)
	}
	// The path itself: an error.
	if _, err := Take(context.Background(), f, "/a/secret", Options{}); !IsNoAuth(err) {
		t.Errorf("Take of an unreadable path: %v", err)
	}
	if _, err := Take(context.Background(), f, "/nope", Options{}); !IsNotFound(err) {
		t.Errorf("Take of a missing path: %v", err)
	}
}

// A node deleted between the listing of its parent and its own read is
// left out, not an error.
func TestReadVanishing(t *testing.T) {
	f := newFake()
	n0, n1 := contender(1, "lock-", 0), contender(2, "lock-", 1)
	f.add("/m/"+n0, "", 1, 0)
	f.add("/m/"+n1, "", 2, 0)
	f.onChildren = func(p string) {
		if p == "/m" {
			f.remove("/m/" + n0)
		}
	}
	r := only(t, take(t, f, "/m", Options{}), "/m")
	if !slices.Equal(names(r.Holders), []string{n1}) || len(r.Waiters) != 0 {
		t.Errorf("after the holder vanished: holders %v waiters %v", names(r.Holders), names(r.Waiters))
	}
}

// A path deleted between the read of its own node and of its children (a
// container, reaped once its last child went) is not found, as one missing
// from the start: not an empty node.
func TestReadPathVanishing(t *testing.T) {
	f := newFake()
	f.add("/m/"+contender(1, "lock-", 0), "", 1, 0)
	f.onGet = func(p string) {
		if p == "/m" {
			f.remove("/m/" + contender(1, "lock-", 0))
			f.remove("/m")
		}
	}
	if root, _, err := Read(context.Background(), f, "/m", Options{}); !IsNotFound(err) {
		t.Fatalf("Read of a path gone meanwhile: %+v, %v; want not found", root, err)
	}
}

func TestReadLimits(t *testing.T) {
	f := newFake()
	for i := 0; i < 5; i++ {
		f.add(fmt.Sprintf("/big/m/%s", contender(i, "lock-", i)), "", int64(i+1), 0)
	}
	f.add("/big/a", "", 0, 0)
	s := take(t, f, "/big", Options{MaxNodes: 4})
	if !s.Truncated {
		t.Error("not truncated")
	}
	for _, r := range s.Recipes {
		if r.Kind == KindMutex {
			t.Errorf("a queue read in part is listed: %+v", r)
		}
	}
	s = take(t, f, "/", Options{Skip: []string{"/big"}})
	if len(s.Recipes) != 0 {
		t.Errorf("skipped path listed: %v", kinds(s))
	}
}

func TestLocate(t *testing.T) {
	f := newFake()
	n0, n1 := contender(1, "lock-", 0), contender(2, "lock-", 1)
	f.add("/m/"+n0, "", 1, 0)
	f.add("/m/"+n1, "", 2, 0)
	l0 := contender(3, "lease-", 0)
	f.add("/s/leases/"+l0, "", 3, 0)
	f.add("/db/"+uuid(4), "", 4, 0)
	f.add("/plain", "x", 0, 0)
	// A LeaderSelector (Curator's or ours) uses the mutex layout with the
	// participant id as data: a revocation request would overwrite it.
	sel, ip := contender(5, "lock-", 0), contender(6, "lock-", 0)
	f.add("/sel/"+sel, "node-a:8080", 5, 0)
	f.add("/ip/"+ip, "10.0.0.7", 6, 0)
	// Application records keyed by a UUID: persistent, so no barrier's
	// members, whatever their names (release would delete one without --any).
	f.add("/users/"+uuid(7), `{"name":"alice"}`, 0, 0)
	f.add("/users/"+uuid(8)+"/lock/"+contender(9, "lock-", 0), "", 9, 0)
	ctx := context.Background()
	for _, tc := range []struct {
		node                 string
		role                 string
		contender, revocable bool
	}{
		{"/m/" + n0, RoleHolder, true, true},
		{"/m/" + n1, RoleWaiter, true, true},
		{"/s/leases/" + l0, RoleLease, true, false},
		{"/db/" + uuid(4), RoleMember, true, false},
		{"/plain", RoleNode, false, false},
		{"/sel/" + sel, RoleHolder, true, false},
		{"/ip/" + ip, RoleHolder, true, true},
		{"/users/" + uuid(7), RoleNode, false, false},
		{"/users/" + uuid(8), RoleNode, false, false},
		{"/users/" + uuid(8) + "/lock/" + contender(9, "lock-", 0), RoleHolder, true, true},
		{"/m", RoleNode, false, false},
		{"/", RoleNode, false, false},
	} {
		loc, err := Locate(ctx, f, tc.node)
		if err != nil {
			t.Fatalf("Locate(%s): %v", tc.node, err)
		}
		if loc.Entry.Role != tc.role || loc.Contender != tc.contender || loc.Revocable != tc.revocable || loc.Entry.Path != tc.node {
			t.Errorf("Locate(%s) = role %s contender %v revocable %v (%s), want %s %v %v",
				tc.node, loc.Entry.Role, loc.Contender, loc.Revocable, loc.Entry.Path, tc.role, tc.contender, tc.revocable)
		}
	}
	if _, err := Locate(ctx, f, "/m/gone"); !IsNotFound(err) {
		t.Errorf("Locate of a missing node: %v", err)
	}
	// Persistent UUID-named directories are walked into: the lock under
	// one is listed, not hidden behind a "double barrier".
	want := []string{"/users/" + uuid(7) + "=barrier-or-plain-node", "/users/" + uuid(8) + "/lock=mutex"}
	if got := kinds(take(t, f, "/users", Options{})); !slices.Equal(got, want) {
		t.Errorf("recipes under /users: %v, want %v", got, want)
	}
}

// A queue longer than the tool reads is said to be so, not called "not a
// contender".
func TestLocateInALongQueue(t *testing.T) {
	f := newFake()
	for i := range DefaultMaxNodes + 1 {
		f.add(fmt.Sprintf("/q/lock-%010d", i), "", int64(i+1), 0)
	}
	loc, err := Locate(context.Background(), f, "/q/lock-0000000000")
	if err != nil {
		t.Fatal(err)
	}
	if loc.Contender || !strings.Contains(loc.Why, "more than") {
		t.Errorf("Locate in a queue of %d: contender %v, why %q", DefaultMaxNodes+1, loc.Contender, loc.Why)
	}
}

// A path whose children are all ephemeral, non-sequential, unprotected
// nodes is a group (Curator's GroupMember): its members by id. One such
// child that is not (persistent, sequential, protected, a contender)
// makes it no group.
func TestGroup(t *testing.T) {
	f := newFake()
	f.add("/g/worker-b", "payload-b", 7, 0)
	f.add("/g/worker-a", "\x00\x01", 8, 0)
	f.add("/seq/id-0000000001", "", 7, 0)
	f.add("/seq/id-0000000002", "", 8, 0)
	f.add("/prot/_c_"+uuid(1)+"-x", "", 7, 0)
	f.add("/mixed/member", "", 7, 0)
	f.add("/mixed/config", "", 0, 0)
	s := take(t, f, "/", Options{})
	g := only(t, s, "/g")
	if g.Kind != KindGroup || g.Label != "group (GroupMember)" {
		t.Fatalf("/g: %s %q, want a group", g.Kind, g.Label)
	}
	if got := names(g.Members); !slices.Equal(got, []string{"worker-a", "worker-b"}) {
		t.Fatalf("members %v, by id", got)
	}
	a, b := g.Members[0], g.Members[1]
	if a.Role != RoleMember || a.Position != 1 || a.Session != "0x8" || a.DataSize != 2 || a.DataEncoding != "hex" {
		t.Errorf("member a %+v", a)
	}
	if b.Session != "0x7" || b.DataSize != len("payload-b") || b.Data != "payload-b" {
		t.Errorf("member b %+v", b)
	}
	for _, p := range []string{"/seq", "/prot"} {
		if r := only(t, s, p); r.Kind != KindUnknown {
			t.Errorf("%s: %s, want unknown (sequential or protected children are no group's)", p, r.Kind)
		}
	}
	for _, r := range s.Recipes {
		if r.Kind == KindGroup && r.Path != "/g" {
			t.Errorf("%s recognised as a group", r.Path)
		}
	}
	// A member located alone is a member of its group.
	loc, err := Locate(context.Background(), f, "/g/worker-b")
	if err != nil {
		t.Fatal(err)
	}
	if !loc.Contender || loc.Recipe.Kind != KindGroup || loc.Entry.Role != RoleMember {
		t.Errorf("located %+v", loc)
	}
}

// Queues: every child a childless "queue-...<seq>" node (or every one
// "qn-<seq>"), all persistent (items) or all ephemeral (a lock path's
// claims); anything mixed is not a queue.
func TestQueueLayouts(t *testing.T) {
	f := newFake()
	f.add("/q/queue-0000000002", "b", 0, 2000)
	f.add("/q/queue-|00000001|0000000001", "a", 0, 1000)
	f.add("/simple/qn-0000000000", "x", 0, 1000)
	f.add("/locks/queue-0000000002", "", 7, 3000)
	f.add("/mixed/queue-0000000001", "", 0, 0)
	f.add("/mixed/queue-0000000002", "", 7, 0)
	f.add("/both/queue-0000000001", "", 0, 0)
	f.add("/both/qn-0000000002", "", 0, 0)
	f.add("/noseq/queue-x", "", 0, 0)
	f.add("/simplelocks/qn-0000000001", "", 7, 0)
	s := take(t, f, "/", Options{})
	q := only(t, s, "/q")
	if q.Kind != KindQueue || !slices.Equal(names(q.Items), []string{"queue-|00000001|0000000001", "queue-0000000002"}) || *q.Depth != 2 {
		t.Errorf("queue %+v", q)
	}
	if want := s.Time.Sub(time.UnixMilli(1000)); q.Oldest != want || *q.OldestMillis != want.Milliseconds() {
		t.Errorf("oldest %v, want %v", q.Oldest, want)
	}
	if r := only(t, s, "/simple"); r.Kind != KindQueue || len(r.Items) != 1 {
		t.Errorf("simple queue %+v", r)
	}
	if r := only(t, s, "/locks"); r.Kind != KindQueueClaims || r.Items[0].Role != RoleClaim {
		t.Errorf("claims %+v", r)
	}
	for _, p := range []string{"/mixed", "/both", "/noseq", "/simplelocks"} {
		for _, r := range s.Recipes {
			if r.Path == p && (r.Kind == KindQueue || r.Kind == KindQueueClaims) {
				t.Errorf("%s recognised as %s", p, r.Kind)
			}
		}
	}
}
