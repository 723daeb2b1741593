package framework_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// A guaranteed delete issued while the server is down fails with a
// *DeletePendingError and is done once the server is back.
func TestGuaranteedDeleteWhileServerDown(t *testing.T) {
	s := zktest.StartServer(t)
	c := newClient(t, s.ConnectString(), framework.WithConnectionTimeout(500*time.Millisecond))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/doomed/child", []byte("x"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/stubborn/child", []byte("x"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err := c.Delete(dctx, "/doomed", framework.WithGuarantee(), framework.WithChildren())
	cancel()
	if !errors.Is(err, curator.ErrDeletePending) {
		t.Fatalf("guaranteed delete with the server down: %v, want ErrDeletePending", err)
	}
	var pe *framework.DeletePendingError
	if !errors.As(err, &pe) {
		t.Fatalf("%v is not a *DeletePendingError", err)
	}
	if pe.Path != "/doomed" {
		t.Errorf("DeletePendingError.Path = %q", pe.Path)
	}
	// A delete the server will refuse (a parent, without WithChildren).
	dctx, cancel = context.WithTimeout(ctx, 2*time.Second)
	err = c.Delete(dctx, "/stubborn", framework.WithGuarantee())
	cancel()
	var refused *framework.DeletePendingError
	if !errors.As(err, &refused) {
		t.Fatalf("second guaranteed delete with the server down: %v", err)
	}
	if n := c.PendingBackground(); n != 2 {
		t.Errorf("PendingBackground = %d, want 2", n)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err = pe.Wait(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with the server down = %v, want DeadlineExceeded", err)
	}

	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := pe.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if ok, _, err := c.Exists(ctx, "/doomed"); err != nil || ok {
		t.Fatalf("after the guaranteed delete: exists=%v err=%v", ok, err)
	}
	// The refused one reports why.
	if err := refused.Wait(ctx); !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("Wait for a delete the server refused: %v, want ErrNotEmpty", err)
	}
	if ok, _, err := c.Exists(ctx, "/stubborn/child"); err != nil || !ok {
		t.Fatalf("/stubborn/child: exists=%v err=%v", ok, err)
	}
	if err := c.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.PendingBackground(); n != 0 {
		t.Fatalf("PendingBackground = %d", n)
	}
}

// Delete's other options against a live server.
func TestDeleteOptions(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("delete")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/a/b/c", nil, framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/a"); !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("delete of a parent: %v, want ErrNotEmpty", err)
	}
	if err := c.Delete(ctx, "/a/b/c", framework.WithVersion(7)); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("delete with a wrong version: %v, want ErrBadVersion", err)
	}
	if err := c.Delete(ctx, "/a", framework.WithChildren()); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/a"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("delete of a missing node: %v, want ErrNoNode", err)
	}
	var oe *framework.OpError
	if err := c.Delete(ctx, "/a"); !errors.As(err, &oe) || oe.Op != "delete" || oe.Path != "/a" {
		t.Fatalf("error %v is not an OpError naming delete /a", err)
	}
	if err := c.Delete(ctx, "/a", framework.WithIgnoreMissing()); err != nil {
		t.Fatalf("quiet delete of a missing node: %v", err)
	}
	// A guaranteed delete of a missing node is a plain, finished delete.
	if err := c.Delete(ctx, "/a", framework.WithGuarantee(), framework.WithIgnoreMissing()); err != nil {
		t.Fatal(err)
	}
	if n := c.PendingBackground(); n != 0 {
		t.Fatalf("PendingBackground = %d", n)
	}
}

// A delete with children whose node goes after its children were deleted
// has done what was asked, whoever took the node: the server reaping the
// container it emptied, or its own delete whose reply the connection lost
// (the retry finds nothing). It returns nil; a node missing from the start
// is still zk.ErrNoNode (Curator's deletingChildrenIfNeeded, the same).
func TestDeleteChildrenNodeGoneMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		name string
		// the two deletes' held replies: the child's, then the node's
		meanwhile func(t *testing.T, admin *framework.Client, child, node *zktest.HeldReply)
	}{
		{"reaped once emptied", func(t *testing.T, admin *framework.Client, child, node *zktest.HeldReply) {
			ctx := testenv.Ctx(t, testenv.WaitLong)
			if err := child.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if err := admin.Delete(ctx, "/box"); err != nil { // as the server reaps a container
				t.Fatal(err)
			}
			child.Release()
			node.Release() // its request, if any, finds the node gone
		}},
		{"own reply lost", func(t *testing.T, admin *framework.Client, child, node *zktest.HeldReply) {
			ctx := testenv.Ctx(t, testenv.WaitLong)
			child.Release()
			if err := node.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			node.Drop()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := framework.WithNamespace(testenv.Uniq("delgone"))
			px := zktest.StartProxy(t, testenv.Shared().Addr())
			c := newClient(t, px.Addr(), ns)
			admin := newClient(t, testenv.Shared().ConnectString(), ns)
			ctx := testenv.Ctx(t, testenv.WaitLong)
			if _, err := c.Create(ctx, "/box/leaf", nil, framework.WithParentContainers()); err != nil {
				t.Fatal(err)
			}
			child, node := px.HoldReply(zktest.OpDelete), px.HoldReply(zktest.OpDelete)
			done := make(chan error, 1)
			go func() { done <- c.Delete(ctx, "/box", framework.WithChildren()) }()
			tc.meanwhile(t, admin, child, node)
			if err := testenv.Recv(t, done, testenv.WaitLong, "the delete"); err != nil {
				t.Fatalf("delete with children: %v, want nil", err)
			}
			if ok, _, err := admin.Exists(ctx, "/box"); ok || err != nil {
				t.Fatalf("/box there: %v, %v", ok, err)
			}
			if err := c.Delete(ctx, "/box", framework.WithChildren()); !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("delete with children of a missing node: %v, want NoNode", err)
			}
		})
	}
}
