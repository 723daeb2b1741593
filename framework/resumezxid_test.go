package framework_test

import (
	"encoding/binary"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// A session resumed after the client read through its own requests only
// (a multiRead, which go-zookeeper never sees) says so in its
// ConnectRequest: lastZxidSeen at least that read's zxid, so that no
// follower behind what the client read can take the session.
func TestResumeCarriesOwnRepliesZxid(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot())
	other := newClient(t, srv.ConnectString())
	p := testenv.Path(t, "/resumezxid")
	if _, err := c.Create(ctx, p, nil, framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}
	var last int64
	for i := range 5 { // zxids c's go-zookeeper never hears of
		st, err := other.Set(ctx, p, []byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		last = st.Mzxid
	}
	res, err := c.GetMany(ctx, []string{p})
	if err != nil || res[0].Err != nil || res[0].Stat.Mzxid != last {
		t.Fatalf("GetMany: %+v %v, want mzxid %d", res, err, last)
	}
	sid := c.Session().ID()
	seen := make(chan int64, 4)
	restore := framework.SetConnectWriteHook(func(b []byte) {
		if len(b) >= 28 && int64(binary.BigEndian.Uint64(b[20:28])) == sid {
			select {
			case seen <- int64(binary.BigEndian.Uint64(b[8:16])):
			default:
			}
		}
	})
	t.Cleanup(restore)
	px.Drop()
	if z := testenv.Recv(t, seen, testenv.WaitLong, "the resuming ConnectRequest"); z < last {
		t.Fatalf("the resuming ConnectRequest's lastZxidSeen is 0x%x, behind the multiRead's 0x%x", z, last)
	}
}
