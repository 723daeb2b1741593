package driver_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
)

// The contender sort uses the sequence only: a protection prefix that sorts
// lower must not put a later node first (what breaks kazoo#649), and
// children that are not contenders are ignored, never a parse error.
func TestSort(t *testing.T) {
	d, err := driver.New(testenv.Client(t, testenv.Shared().ConnectString()), "/x", "__WRIT__", driver.MaxLeases(1), "__READ__", "__WRIT__")
	if err != nil {
		t.Fatal(err)
	}
	in := []string{
		"_c_ffffffff-ffff-4fff-bfff-ffffffffffff-__READ__0000000001",
		"_c_00000000-0000-4000-8000-000000000000-__WRIT__0000000002",
		"__READ__0000000000",
		"not-a-contender",
		"__WRIT__",
		"lease-0000000003",
		"_c_00000000-0000-4000-8000-000000000000-__WRIT__00000x0004",
	}
	if got, want := d.Sort(in), []string{in[2], in[0], in[1]}; !slices.Equal(got, want) {
		t.Fatalf("Sort = %v, want %v", got, want)
	}
}

// FuzzSort: sorting contender names never panics, keeps only names that
// end in a sequence after a lock name, and orders them by that sequence.
func FuzzSort(f *testing.F) {
	f.Add("_c_5b3c2e1a-0000-4000-8000-000000000000-__READ__0000000001", "__WRIT__0000000000", "junk")
	f.Add("lock-0000000001", "__READ__-2147483648", "__WRIT__")
	f.Add("", "__READ____WRIT__0000000003", "x__READ__12")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		d, err := driver.New(nil, "/x", "n", driver.MaxLeases(1))
		if err == nil || d != nil {
			t.Fatal("nil client accepted")
		}
		d = driver.SortOnly("__READ__", "__WRIT__")
		in := []string{a, b, c}
		out := d.Sort(in)
		if len(out) > len(in) {
			t.Fatalf("Sort grew %v to %v", in, out)
		}
		prev := ""
		for i, n := range out {
			seq, ok := d.Sequence(n)
			if !ok || seq == "" {
				t.Fatalf("%q kept without a sequence", n)
			}
			if !strings.Contains(n, "__READ__") && !strings.Contains(n, "__WRIT__") {
				t.Fatalf("%q kept without a lock name", n)
			}
			if i > 0 && seq < prev {
				t.Fatalf("unsorted: %v", out)
			}
			prev = seq
		}
	})
}

// Issue 14 item 7: MaxLeases(n <= 0) cannot work (a waiter would watch its
// own node, or index out of range), so New refuses it, and the predicate
// itself, called directly, reports an error instead of panicking.
func TestRefusesMaxLeasesBelowOne(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	for _, n := range []int{0, -1, -5} {
		if _, err := driver.New(c, testenv.Path(t, "/driver"), "lease-", driver.MaxLeases(n)); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("New with MaxLeases(%d): %v, want ErrInvalidArgument", n, err)
		}
		q := driver.SortOnly("lease-").QueueOf([]string{"lease-0000000001", "lease-0000000002"})
		dec, err := driver.MaxLeases(n)(q, 1)
		if !errors.Is(err, curator.ErrInvalidArgument) || dec.Held {
			t.Errorf("MaxLeases(%d) predicate: %+v, %v; want ErrInvalidArgument", n, dec, err)
		}
	}
	if _, err := driver.New(c, testenv.Path(t, "/driver"), "lease-", driver.MaxLeases(2)); err != nil {
		t.Fatalf("MaxLeases(2): %v", err)
	}
	for _, name := range []string{"", "a/b"} {
		if _, err := driver.New(c, "/x", name, driver.MaxLeases(1)); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("New with name %q: %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := driver.New(c, "/x", "lock-", nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("New with a nil predicate: %v, want ErrInvalidArgument", err)
	}
}
