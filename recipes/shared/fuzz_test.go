package shared_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/recipes/shared"
)

// Curator's SharedCount format, fuzzed: any 4 bytes decode and re-encode
// to themselves; anything else is an error.
func FuzzDecodeCount(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := shared.DecodeCount(b)
		if len(b) != 4 {
			if !errors.Is(err, curator.ErrCorrupt) {
				t.Fatalf("%v: %v", b, err)
			}
			return
		}
		if err != nil || string(shared.EncodeCount(n)) != string(b) {
			t.Fatalf("%v -> %d %v", b, n, err)
		}
	})
}
