package locks_test

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/recipes/locks"
)

// FuzzSort: sorting contender names never panics, keeps only names that
// end in a sequence after a lock name, and orders them by that sequence.
func FuzzSort(f *testing.F) {
	f.Add("_c_5b3c2e1a-0000-4000-8000-000000000000-__READ__0000000001", "__WRIT__0000000000", "junk")
	f.Add("lock-0000000001", "__READ__-2147483648", "__WRIT__")
	f.Add("", "__READ____WRIT__0000000003", "x__READ__12")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		d, err := locks.NewDriver(nil, "/x", "n", locks.MaxLeases(1))
		if err == nil || d != nil {
			t.Fatal("nil client accepted")
		}
		d = locks.SortOnly(locks.ReadLockName, locks.WriteLockName)
		in := []string{a, b, c}
		out := d.Sort(in)
		if len(out) > len(in) {
			t.Fatalf("Sort grew %v to %v", in, out)
		}
		prev := ""
		for i, n := range out {
			seq := locks.SequenceOf(d, n)
			if seq == "" {
				t.Fatalf("%q kept without a sequence", n)
			}
			if !strings.Contains(n, locks.ReadLockName) && !strings.Contains(n, locks.WriteLockName) {
				t.Fatalf("%q kept without a lock name", n)
			}
			if i > 0 && seq < prev {
				t.Fatalf("unsorted: %v", out)
			}
			prev = seq
		}
	})
}
