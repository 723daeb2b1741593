package interop_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	catomic "github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/retry"
)

// goIncrements starts, on 2 sessions of 2 goroutines each, each
// increments of a Long made by newLong; wait waits for them and returns
// how many succeeded and their promoted tries (any error fails the test).
func goIncrements(t *testing.T, e *env, each int, newLong func(*framework.Client) (*catomic.Long, error)) (wait func() (succeeded, promoted int64)) {
	ctx := testenv.Ctx(t, testTimeout)
	var ok, prom atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		l, err := newLong(newClient(t, e))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					r, err := l.Increment(ctx)
					if err != nil || !r.Succeeded {
						t.Errorf("gocurator Increment: %+v %v", r, err)
						return
					}
					ok.Add(1)
					prom.Add(int64(r.Stats.PromotedTries))
				}
			}()
		}
	}
	return func() (int64, int64) { wg.Wait(); return ok.Load(), prom.Load() }
}

// javaIncrements parses ctr-incr's answer.
func javaIncrements(t *testing.T, answer string) (succeeded, failed, promoted int64) {
	t.Helper()
	f := strings.Fields(answer)
	if len(f) != 3 {
		t.Fatalf("ctr-incr answered %q", answer)
	}
	n := make([]int64, 3)
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("ctr-incr answered %q", answer)
		}
		n[i] = v
	}
	return n[0], n[1], n[2]
}

func patientPolicy(t *testing.T) retry.Policy {
	p, err := retry.NewBoundedExponentialBackoff(time.Millisecond, 50*time.Millisecond, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// One counter incremented from both sides at once, N each: Curator's
// DistributedAtomicLong in two JVMs (two threads each) and gocurator's
// Long in two sessions (two goroutines each). The counter is the exact
// sum of the increments that succeeded on either side.
func testCounterBothSides(t *testing.T, e *env) {
	const each = 40
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 2)
	path := e.path(t) + "/counter"
	wait := goIncrements(t, e, each, func(c *framework.Client) (*catomic.Long, error) {
		return catomic.NewLong(c, path, catomic.WithRetryPolicy(patientPolicy(t)))
	})
	answers := []<-chan string{}
	for _, p := range java {
		answers = append(answers, p.send(fmt.Sprintf("ctr-incr %s 2 %d", path, each)))
	}
	var javaOK, javaFailed int64
	for i, p := range java {
		ok, failed, _ := javaIncrements(t, p.ok(answers[i], "ctr-incr"))
		javaOK += ok
		javaFailed += failed
	}
	goOK, _ := wait()
	if goOK != 4*each {
		t.Fatalf("gocurator: %d increments succeeded, want %d", goOK, 4*each)
	}
	got := java[0].must("ctr-long-get " + path)
	want := goOK + javaOK
	if got != strconv.FormatInt(want, 10) {
		t.Fatalf("Curator reads the counter as %s, want %d (gocurator %d + Curator %d; Curator's not applied: %d)",
			got, want, goOK, javaOK, javaFailed)
	}
	l, err := catomic.NewLong(newClient(t, e), path)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l.Get(ctx); err != nil || r.PreValue != want {
		t.Fatalf("gocurator reads the counter as %d %v, want %d", r.PreValue, err, want)
	}
	t.Logf("counter %d: gocurator %d, Curator %d (+%d not applied)", want, goOK, javaOK, javaFailed)
}

// Promoted to one lock from both sides: Curator's PromotedToLock and
// gocurator's WithPromotedToLock on the same lock path (Curator's
// InterProcessMutex layout), with no optimistic retry, so contended
// increments take the lock; the counter is exact and both sides were
// promoted.
func testCounterPromoted(t *testing.T, e *env) {
	const each = 25
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 2)
	base := e.path(t)
	path, lockPath := base+"/counter", base+"/lock"
	once, err := retry.NewNTimes(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	wait := goIncrements(t, e, each, func(c *framework.Client) (*catomic.Long, error) {
		return catomic.NewLong(c, path, catomic.WithRetryPolicy(once),
			catomic.WithPromotedToLock(lockPath), catomic.WithPromotedRetryPolicy(patientPolicy(t)),
			catomic.WithPromotedTimeout(time.Minute))
	})
	answers := []<-chan string{}
	for _, p := range java {
		answers = append(answers, p.send(fmt.Sprintf("ctr-incr %s 2 %d %s", path, each, lockPath)))
	}
	var javaOK, javaFailed, javaPromoted int64
	for i, p := range java {
		ok, failed, prom := javaIncrements(t, p.ok(answers[i], "ctr-incr promoted"))
		javaOK, javaFailed, javaPromoted = javaOK+ok, javaFailed+failed, javaPromoted+prom
	}
	goOK, goPromoted := wait()
	want := goOK + javaOK
	if got := java[0].must("ctr-long-get " + path); got != strconv.FormatInt(want, 10) {
		t.Fatalf("counter %s, want %d (gocurator %d + Curator %d; Curator's not applied: %d)", got, want, goOK, javaOK, javaFailed)
	}
	t.Logf("counter %d: gocurator %d (%d promoted tries), Curator %d (%d promoted tries, %d not applied)",
		want, goOK, goPromoted, javaOK, javaPromoted, javaFailed)
	if goPromoted == 0 || javaPromoted == 0 {
		t.Fatalf("promoted tries: gocurator %d, Curator %d; want both contending for the lock", goPromoted, javaPromoted)
	}
	if kids := children(t, ctx, newClient(t, e), lockPath); len(kids) != 0 {
		t.Fatalf("lock nodes left: %v", kids)
	}
}

// The encodings, read and written by both: Long 8 bytes, Int 4 bytes,
// both big-endian; Value raw bytes; compareAndSet across languages.
func testCounterEncodings(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	base := e.path(t)

	l, err := catomic.NewLong(c, base+"/long")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ForceSet(ctx, 258); err != nil {
		t.Fatal(err)
	}
	if got := java.must("ctr-long-get " + l.Path()); got != "258" {
		t.Fatalf("Curator reads gocurator's 258 as %s", got)
	}
	if got := java.must("ctr-long-add " + l.Path() + " -1000000000000"); got != "258 -999999999742" {
		t.Fatalf("Curator's add: %s", got)
	}
	if r, err := l.Add(ctx, 1000000000000); err != nil || r.PreValue != -999999999742 || r.PostValue != 258 {
		t.Fatalf("gocurator's add over Curator's: %+v %v", r, err)
	}
	if got := java.must("ctr-long-cas " + l.Path() + " 258 7"); got != "true 258" {
		t.Fatalf("Curator's compareAndSet over gocurator's value: %s", got)
	}
	if r, err := l.CompareAndSet(ctx, 7, 8); err != nil || !r.Succeeded {
		t.Fatalf("gocurator's CompareAndSet over Curator's value: %+v %v", r, err)
	}
	if got := java.must("ctr-long-get " + l.Path()); got != "8" {
		t.Fatalf("Curator reads %s, want 8", got)
	}

	n, err := catomic.NewInt(c, base+"/int")
	if err != nil {
		t.Fatal(err)
	}
	if got := java.must("ctr-int-add " + n.Path() + " 258"); got != "0 258" {
		t.Fatalf("Curator's add to a missing Integer: %s", got)
	}
	if raw, _, err := c.Get(ctx, n.Path()); err != nil || !bytes.Equal(raw, []byte{0, 0, 1, 2}) {
		t.Fatalf("Curator's Integer 258 is %x %v, want 00000102", raw, err)
	}
	if r, err := n.Subtract(ctx, 300); err != nil || r.PostValue != -42 {
		t.Fatalf("gocurator's Subtract: %+v %v", r, err)
	}
	if got := java.must("ctr-int-get " + n.Path()); got != "-42" {
		t.Fatalf("Curator reads %s, want -42", got)
	}

	v, err := catomic.NewValue(c, base+"/value")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := v.TrySet(ctx, []byte("hello")); err != nil || !r.Succeeded {
		t.Fatalf("gocurator's TrySet: %+v %v", r, err)
	}
	if got := java.must("ctr-value-get " + v.Path()); got != hex.EncodeToString([]byte("hello")) {
		t.Fatalf("Curator reads %s", got)
	}
	if got := java.must("ctr-value-tryset " + v.Path() + " " + hex.EncodeToString([]byte("world"))); got != "true "+hex.EncodeToString([]byte("hello")) {
		t.Fatalf("Curator's trySet: %s", got)
	}
	if r, err := v.Get(ctx); err != nil || string(r.PreValue) != "world" {
		t.Fatalf("gocurator reads %q %v", r.PreValue, err)
	}
}

// A SharedValue set on one side is seen on the other (Curator's listener,
// gocurator's Changed), and trySetValue over the value seen works across
// languages.
func testSharedValue(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	path := e.path(t) + "/value"
	v, err := shared.NewValue(c, path, []byte("seed"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	java.must("ctr-sv-start " + path + " " + hex.EncodeToString([]byte("other")))
	if got := java.must("ctr-sv-get " + path); got != hex.EncodeToString([]byte("seed"))+" 0" {
		t.Fatalf("Curator's SharedValue reads gocurator's seed as %s", got)
	}
	if err := v.SetValue(ctx, []byte("from go")); err != nil {
		t.Fatal(err)
	}
	java.must(fmt.Sprintf("ctr-sv-await %s %s %d", path, hex.EncodeToString([]byte("from go")), eventTimeout.Milliseconds()))

	changed := v.Changed()
	java.must("ctr-sv-set " + path + " " + hex.EncodeToString([]byte("from java")))
	for string(v.Value()) != "from java" {
		select {
		case <-changed:
			changed = v.Changed()
		case <-ctx.Done():
			t.Fatalf("gocurator's Value did not see Curator's write: %q", v.Value())
		}
	}
	if ok, err := v.TrySetValue(ctx, v.VersionedValue(), []byte("go again")); !ok || err != nil {
		t.Fatalf("gocurator's TrySetValue over Curator's write: %v %v", ok, err)
	}
	java.must(fmt.Sprintf("ctr-sv-await %s %s %d", path, hex.EncodeToString([]byte("go again")), eventTimeout.Milliseconds()))
	if got := java.must("ctr-sv-tryset " + path + " " + hex.EncodeToString([]byte("java again"))); got != "true" {
		t.Fatalf("Curator's trySetValue over gocurator's write: %s", got)
	}
	eventually(t, "gocurator sees Curator's trySetValue", func() bool { return string(v.Value()) == "java again" },
		func() string { return string(v.Value()) })
	if vv := v.VersionedValue(); vv.Version != 4 {
		t.Fatalf("version %d after four writes", vv.Version)
	}
	java.must("ctr-sv-close " + path)
}
