package framework_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// Created.Zxid is the create's transaction zxid, and Parent.Pzxid equals
// it when nothing under the parent changed between the create and the
// read of the parent behind it: a NumChildren of 1 is then our node alone.
// When our node is deleted and another made in between (an operator, a
// foreign contender), the counts match but the pzxid does not (issue 38,
// 2.: a lock's first decision on the parent's stat alone must not hold on
// a node already gone).
func TestCreatedZxidAgainstTheParentsPzxid(t *testing.T) {
	ns := framework.WithNamespace(testenv.Uniq("zxid"))
	c := newClient(t, testenv.Shared().ConnectString(), ns)
	other := newClient(t, testenv.Shared().ConnectString(), ns)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := other.Create(ctx, "/p", nil); err != nil {
		t.Fatal(err)
	}
	create := func() framework.Created {
		t.Helper()
		n, err := c.CreateNode(ctx, "/p/n-", nil, framework.WithMode(framework.ModeEphemeralSequential),
			framework.WithProtection(), framework.WithParentStat())
		if err != nil {
			t.Fatal(err)
		}
		if n.Parent == nil || n.Zxid == 0 {
			t.Fatalf("Parent %+v, Zxid %d: want the parent's stat and the create's zxid", n.Parent, n.Zxid)
		}
		return n
	}
	n := create()
	if n.Parent.NumChildren != 1 || n.Parent.Pzxid != n.Zxid {
		t.Fatalf("alone: NumChildren %d, Pzxid %d, Zxid %d; want 1 and equal", n.Parent.NumChildren, n.Parent.Pzxid, n.Zxid)
	}
	_, st, err := c.Exists(ctx, n.Path)
	if err != nil || st.Czxid != n.Zxid {
		t.Fatalf("the node's czxid %d (%v), Created.Zxid %d: want equal", st.Czxid, err, n.Zxid)
	}
	if err := c.Delete(ctx, n.Path); err != nil {
		t.Fatal(err)
	}

	var swapped bool
	t.Cleanup(framework.SetParentReadHook(func() {
		if swapped {
			return
		}
		swapped = true
		testenv.Eventually(t, testenv.WaitShort, "our node made", func() error {
			kids, _, err := other.Children(ctx, "/p")
			if err != nil {
				return err
			}
			if len(kids) != 1 {
				return errors.New("not yet")
			}
			if err := other.Delete(ctx, "/p/"+kids[0]); err != nil {
				return err
			}
			_, err = other.Create(ctx, "/p/x", nil, framework.WithMode(framework.ModeEphemeral))
			return err
		})
	}))
	n = create()
	if n.Parent.NumChildren != 1 || n.Parent.Pzxid == n.Zxid {
		t.Fatalf("ours swapped for another: NumChildren %d, Pzxid %d, Zxid %d; want 1 and different", n.Parent.NumChildren, n.Parent.Pzxid, n.Zxid)
	}
}
