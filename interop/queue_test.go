package interop_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/queue"
)

// goTaker is a Go consumer that records what it takes, in order.
type goTaker struct{ ch chan string }

func newGoTaker() *goTaker { return &goTaker{ch: make(chan string, 100)} }

func (g *goTaker) consume(_ context.Context, v string) error { g.ch <- v; return nil }

func (g *goTaker) next(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		out = append(out, testenv.Recv(t, g.ch, eventTimeout, "an item from Java"))
	}
	return out
}

// javaTaken asks the Java consumer of path for its first n items, and the
// times it took them at.
func javaTaken(t *testing.T, java *peer, path string, n int) ([]string, []time.Time) {
	t.Helper()
	var items []string
	var at []time.Time
	for _, s := range list(java.must(fmt.Sprintf("queue-taken %s %d", path, n))) {
		i := strings.LastIndexByte(s, '@')
		ms, _ := strconv.ParseInt(s[i+1:], 10, 64)
		items = append(items, s[:i])
		at = append(at, time.UnixMilli(ms))
	}
	return items, at
}

func seqItems(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// A Curator 5.4 producer feeds a Go consumer (with a lock path, as Java's
// would): items, a putMulti node, in order.
func testQueueJavaToGo(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	path := e.path(t)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	want := seqItems("j", 12)
	for _, v := range want {
		java.must(fmt.Sprintf("queue-put plain %s %s", path, v))
	}
	java.must(fmt.Sprintf("queue-putmulti plain %s m1,m2", path))
	want = append(want, "m1", "m2")
	g := newGoTaker()
	q, err := queue.New(c, path, queue.String{}, g.consume, queue.WithLockPath(path+"-locks"))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := g.next(t, len(want)); !slices.Equal(got, want) {
		t.Fatalf("Go took %v, want %v", got, want)
	}
}

// A Go producer feeds Curator 5.4's DistributedQueue consumer, with a lock
// path, in order.
func testQueueGoToJava(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	path := e.path(t)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	q, err := queue.New[string](c, path, queue.String{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := seqItems("g", 12)
	for _, v := range want {
		if err := q.Put(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.PutMulti(ctx, []string{"m1", "", "m3"}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "m1", "", "m3")
	java.must(fmt.Sprintf("queue-consume plain %s %s", path, path+"-locks"))
	defer java.must("queue-close " + path)
	if got, _ := javaTaken(t, java, path, len(want)); !slices.Equal(got, want) {
		t.Fatalf("Java took %q, want %q", got, want)
	}
}

// Priority and delay order across languages: Go puts, Java consumes, and
// the reverse; no delayed item is taken before its time.
func testQueuePriorityDelay(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	base := e.path(t)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	prios := []int32{10, -3, 5, 0, 1<<31 - 1, -1 << 31}
	wantPrio := []string{"p-2147483648", "p-3", "p0", "p5", "p10", "p2147483647"}

	// Go -> Java, priority.
	gp, _ := queue.NewPriority[string](c, base+"/gp", queue.String{}, nil)
	for _, p := range prios {
		if err := gp.Put(ctx, fmt.Sprintf("p%d", p), p); err != nil {
			t.Fatal(err)
		}
	}
	java.must(fmt.Sprintf("queue-consume priority %s -", base+"/gp"))
	if got, _ := javaTaken(t, java, base+"/gp", len(prios)); !slices.Equal(got, wantPrio) {
		t.Fatalf("Java took %v, want %v", got, wantPrio)
	}
	java.must("queue-close " + base + "/gp")

	// Java -> Go, priority.
	for _, p := range prios {
		java.must(fmt.Sprintf("queue-put priority %s p%d %d", base+"/jp", p, p))
	}
	g := newGoTaker()
	jp, _ := queue.NewPriority(c, base+"/jp", queue.String{}, g.consume)
	defer jp.Close()
	if err := jp.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := g.next(t, len(prios)); !slices.Equal(got, wantPrio) {
		t.Fatalf("Go took %v, want %v", got, wantPrio)
	}

	// Go -> Java, delay: the Java consumer runs first, so it sees each
	// item before it is due.
	java.must(fmt.Sprintf("queue-consume delay %s -", base+"/gd"))
	defer java.must("queue-close " + base + "/gd")
	now := time.Now()
	due := map[string]time.Time{"late": now.Add(2 * time.Second), "soon": now.Add(time.Second), "past": now.Add(-time.Hour)}
	gd, _ := queue.NewDelay[string](c, base+"/gd", queue.String{}, nil)
	for _, v := range []string{"late", "soon", "past"} {
		if err := gd.Put(ctx, v, due[v]); err != nil {
			t.Fatal(err)
		}
	}
	got, at := javaTaken(t, java, base+"/gd", 3)
	if want := []string{"past", "soon", "late"}; !slices.Equal(got, want) {
		t.Fatalf("Java took %v, want %v", got, want)
	}
	for i, v := range got {
		if at[i].Before(due[v].Truncate(time.Millisecond)) {
			t.Errorf("Java took %s at %v, before %v", v, at[i], due[v])
		}
	}

	// Java -> Go, delay.
	g2 := newGoTaker()
	jd, _ := queue.NewDelay(c, base+"/jd", queue.String{}, func(ctx context.Context, v string) error {
		return g2.consume(ctx, v+"@"+strconv.FormatInt(time.Now().UnixMilli(), 10))
	})
	defer jd.Close()
	if err := jd.Start(ctx); err != nil {
		t.Fatal(err)
	}
	now = time.Now()
	due = map[string]time.Time{"late": now.Add(2 * time.Second), "soon": now.Add(time.Second), "past": now.Add(-time.Hour)}
	for _, v := range []string{"late", "soon", "past"} {
		java.must(fmt.Sprintf("queue-put delay %s %s %d", base+"/jd", v, due[v].UnixMilli()))
	}
	for _, want := range []string{"past", "soon", "late"} {
		s := g2.next(t, 1)[0]
		i := strings.LastIndexByte(s, '@')
		ms, _ := strconv.ParseInt(s[i+1:], 10, 64)
		if s[:i] != want {
			t.Fatalf("Go took %s, want %s", s[:i], want)
		}
		if ms < due[want].UnixMilli() {
			t.Errorf("Go took %s at %d, before %d", want, ms, due[want].UnixMilli())
		}
	}
}

// Java's DistributedIdQueue items are removed by id and consumed by Go;
// SimpleDistributedQueue both ways.
func testQueueIDAndSimple(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	base := e.path(t)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	for i, id := range []string{"x", "y", "x", "z"} {
		java.must(fmt.Sprintf("queue-put id %s %s-%d %s", base+"/id", id, i, id))
	}
	g := newGoTaker()
	q, _ := queue.NewIDQueue(c, base+"/id", queue.String{}, g.consume)
	defer q.Close()
	if n, err := q.Remove(ctx, "x"); n != 2 || err != nil {
		t.Fatalf("Remove(x) = %d %v", n, err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := g.next(t, 2), []string{"y-1", "z-3"}; !slices.Equal(got, want) {
		t.Fatalf("Go took %v, want %v", got, want)
	}

	s, _ := queue.NewSimple(c, base+"/simple")
	for _, v := range seqItems("j", 11) {
		java.must(fmt.Sprintf("queue-offer %s %s", base+"/simple", v))
	}
	for _, want := range seqItems("j", 11) {
		d, err := s.Take(ctx)
		if err != nil || string(d) != want {
			t.Fatalf("Go took %q %v, want %s", d, err, want)
		}
	}
	for _, v := range seqItems("g", 11) {
		if err := s.Offer(ctx, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range seqItems("g", 11) {
		if got := java.must("queue-take " + base + "/simple"); got != want {
			t.Fatalf("Java took %q, want %s", got, want)
		}
	}
}
