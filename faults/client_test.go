package faults_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// A listener that stalls does not stall the client, nor other listeners,
// nor the locks built on it.
func TestFaultsStalledListener(t *testing.T) {
	srv := zktest.StartServer(t)
	c := connect(t, srv.ConnectString(), framework.WithSessionTimeout(8*time.Second))
	release := make(chan struct{})
	c.AddListener(func(framework.State) { <-release })
	states := make(chan framework.State, 16)
	c.AddListener(func(s framework.State) { states <- s })
	defer close(release) // before the client's Close, which waits for listeners
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, want := range []framework.State{framework.StateSuspended, framework.StateReconnected} {
		select {
		case s := <-states:
			if s != want {
				t.Fatalf("state %v, want %v", s, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %v while another listener stalls", want)
		}
	}
	m, err := locks.NewMutex(c, "/faults/stalled")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Do(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// Recipe nodes under a digest ACL: a client without the credentials can
// neither take, delete nor revoke the lock, and is told so clearly.
func TestFaultsACLDigest(t *testing.T) {
	srv := zktest.StartServer(t)
	acl := framework.ACLFunc(func(string) []framework.ACL { return zk.DigestACL(zk.PermAll, "app", "secret") })
	owner := connect(t, srv.ConnectString(), framework.WithAuth("digest", []byte("app:secret")), framework.WithACLProvider(acl))
	thief := connect(t, srv.ConnectString())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := locks.NewMutex(owner, "/faults/acl/lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := thief.Delete(ctx, m.Node()); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("stranger's delete of the lock node: %v, want NOAUTH", err)
	}
	if err := locks.Revoke(ctx, thief, m.Node()); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("stranger's revoke: %v, want NOAUTH", err)
	}
	tm, err := locks.NewMutex(thief, "/faults/acl/lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.TryLock(ctx); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("stranger's lock attempt: %v, want NOAUTH", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
