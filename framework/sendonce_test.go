package framework_test

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// A conditional Set whose reply is lost took effect: retried (the
// default), it fails with BadVersion, as if another writer had come first;
// with WithSendOnce it is not sent again and the caller gets a connection
// loss, which it can resolve by a read. Either way the data was written
// once.
func TestSetSendOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []framework.OpOption
		want error
	}{
		{"retried", nil, zk.ErrBadVersion},
		{"send once", []framework.OpOption{framework.WithSendOnce()}, curator.ErrConnectionLoss},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := framework.WithNamespace(testenv.Uniq("sendonce"))
			px := zktest.StartProxy(t, testenv.Shared().Addr())
			c := newClient(t, px.Addr(), ns)
			admin := newClient(t, testenv.Shared().ConnectString(), ns)
			ctx := testenv.Ctx(t, testenv.WaitLong)
			if _, err := admin.Create(ctx, "/n", []byte("a")); err != nil {
				t.Fatal(err)
			}
			held := px.HoldReply(zktest.OpSetData)
			done := make(chan error, 1)
			go func() {
				_, err := c.Set(ctx, "/n", []byte("b"), append(tc.opts, framework.WithVersion(0))...)
				done <- err
			}()
			if err := held.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			held.Drop()
			if err := testenv.Recv(t, done, testenv.WaitLong, "the set"); !errors.Is(err, tc.want) {
				t.Fatalf("set with a lost reply: %v, want %v", err, tc.want)
			}
			data, st, err := admin.Get(ctx, "/n")
			if err != nil || string(data) != "b" || st.Version != 1 {
				t.Fatalf("node after the set: %q version %v, %v; want \"b\" at version 1", data, st, err)
			}
		})
	}
	c := newClient(t, testenv.Shared().ConnectString())
	if _, err := c.Create(testenv.Ctx(t, testenv.WaitLong), "/x", nil, framework.WithSendOnce()); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Fatalf("WithSendOnce given to Create: %v, want ErrInvalidArgument", err)
	}
}
