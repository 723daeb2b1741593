package shared_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/shared"
)

func startCount(t *testing.T, c *framework.Client, path string, seed int) *shared.Count {
	t.Helper()
	n, err := shared.NewCount(c, path, seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(testenv.Ctx(t, testenv.WaitLong)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// Curator's format: 4 bytes big-endian (258 is 00 00 01 02, -1 is ff ff
// ff ff); data of another length, written by something else, is ignored
// (Count keeps the last good value) and a count not yet started on such a
// node refuses to start (ErrCorrupt).
func TestCountFormat(t *testing.T) {
	srv := testenv.Shared()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	admin := testenv.Client(t, srv.ConnectString())
	path := sharedPath(t)
	n := startCount(t, testenv.Client(t, srv.ConnectString()), path, 258)
	for _, tc := range []struct {
		n   int
		raw []byte
	}{{258, []byte{0, 0, 1, 2}}, {-1, []byte{0xff, 0xff, 0xff, 0xff}}, {1<<31 - 1, []byte{0x7f, 0xff, 0xff, 0xff}}} {
		if err := n.SetCount(ctx, tc.n); err != nil {
			t.Fatal(err)
		}
		if raw, _, err := admin.Get(ctx, path); err != nil || !bytes.Equal(raw, tc.raw) {
			t.Fatalf("%d stored as %x %v, want %x", tc.n, raw, err, tc.raw)
		}
		if n.Count() != tc.n {
			t.Fatalf("Count %d after SetCount(%d)", n.Count(), tc.n)
		}
	}
	changed := n.Changed()
	if _, err := admin.Set(ctx, path, []byte("foo")); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Set(ctx, path, shared.EncodeCount(7)); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, changed, testenv.WaitLong, "the change to 7")
	testenv.WaitFor(t, testenv.WaitLong, "count 7", func() bool { return n.Count() == 7 })
	if _, err := admin.Set(ctx, path, []byte("foo")); err != nil {
		t.Fatal(err)
	}
	late, err := shared.NewCount(admin, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	if err := late.Start(ctx); !errors.Is(err, curator.ErrCorrupt) {
		t.Fatalf("Start on 3 bytes: %v, want ErrCorrupt", err)
	}
	if n.Count() != 7 {
		t.Fatalf("Count after a foreign write of 3 bytes: %d, want the last good one (7)", n.Count())
	}
}

// Curator's testMultiClientVersioned, as a read-modify-write loop: three
// clients each add 1 ten times with TrySetCount; the count ends at 30.
func TestCountIncrementLoop(t *testing.T) {
	srv := testenv.Shared()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := sharedPath(t)
	done := make(chan error, 3)
	for range 3 {
		n := startCount(t, testenv.Client(t, srv.ConnectString()), path, 0)
		go func() {
			for range 10 {
				if err := increment(ctx, n); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 3 {
		if err := testenv.Recv(t, done, testenv.WaitLong, "a client's increments"); err != nil {
			t.Fatal(err)
		}
	}
	raw, _, err := testenv.Client(t, srv.ConnectString()).Get(ctx, path)
	if got, _ := shared.DecodeCount(raw); err != nil || got != 30 {
		t.Fatalf("count %d %v, want 30", got, err)
	}
}

func increment(ctx context.Context, n *shared.Count) error {
	for {
		changed := n.Changed()
		v := n.VersionedValue()
		ok, err := n.TrySetCount(ctx, v, v.Value+1)
		if err != nil || ok {
			return err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
