package framework_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// CURATOR-498: a protected ephemeral create whose reply was lost must not,
// on its retry, adopt the node it made if that node's session is no longer
// the client's current one (here: the client declared the session lost, as
// its simulated expiration does, while the server still keeps it). The
// node of the previous session is dropped and a new one made.
func TestProtectedRetryDoesNotAdoptPreviousSession(t *testing.T) {
	later := testenv.RestoreLater(t) // before the clients: restored once they are closed
	p := zktest.StartProxy(t, testenv.Shared().Addr())
	ns := testenv.Uniq("protsess")
	c, log := newRecordedClient(t, p.Addr(), framework.WithNamespace(ns),
		framework.WithSessionTimeout(10*time.Second))
	observer := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/parent", nil); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitShort, framework.StateConnected)

	var once sync.Once
	var firstCzxid int64
	var firstName string
	later(framework.SetProtectedRetryHook(func() {
		once.Do(func() {
			// The first attempt's node is on the server: remember it,
			// then let the client give up its session.
			testenv.Eventually(t, testenv.WaitShort, "the first attempt's node", func() error {
				kids, _, err := observer.Children(ctx, "/parent")
				if err != nil || len(kids) != 1 {
					return fmt.Errorf("children %v: %v", kids, err)
				}
				_, st, err := observer.Get(ctx, "/parent/"+kids[0])
				if err != nil {
					return err
				}
				firstName, firstCzxid = kids[0], st.Czxid
				return nil
			})
			framework.DeclareSessionLost(c)
		})
	}))

	p.DropAfterRequest(1)
	n, err := c.CreateNode(ctx, "/parent/node", nil, framework.WithProtection(), framework.WithMode(framework.ModeEphemeral))
	if firstCzxid == 0 {
		t.Fatalf("the retry hook never ran (create: %v, %v)", n, err)
	}
	if err != nil {
		return // refusing is fine; adopting is not
	}
	_, st, gerr := observer.Get(ctx, n.Path)
	if gerr != nil {
		t.Fatalf("created %q but cannot read it: %v", n.Path, gerr)
	}
	if st.Czxid == firstCzxid {
		t.Fatalf("adopted %s (czxid %d), the node of the session the client had declared lost", firstName, firstCzxid)
	}
}
