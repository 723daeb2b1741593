package queue_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/recipes/queue"
)

// The real output of Curator 5.4's ItemSerializer for "ab" and "" (catalog
// §6.4).
func TestEncodeIsCuratorsItemSerializer(t *testing.T) {
	want := []byte{0, 1, 0, 1, 1, 0, 0, 0, 2, 'a', 'b', 1, 0, 0, 0, 0, 2}
	got := queue.Encode([]byte("ab"), nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode = % x, want % x", got, want)
	}
	items, err := queue.Decode(want)
	if err != nil || len(items) != 2 || string(items[0]) != "ab" || len(items[1]) != 0 {
		t.Fatalf("Decode = %q, %v", items, err)
	}
	if items, err := queue.Decode([]byte{0, 1, 0, 1, 2}); err != nil || len(items) != 0 {
		t.Fatalf("Decode(no items) = %q, %v", items, err)
	}
}

func TestDecodeRefusesWhatCuratorRefuses(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":          nil,
		"short version":  {0, 1, 0},
		"other version":  {0, 1, 0, 2, 2},
		"no end":         {0, 1, 0, 1},
		"bad opcode":     {0, 1, 0, 1, 3},
		"negative size":  {0, 1, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 2},
		"size too large": {0, 1, 0, 1, 1, 0, 0, 0, 5, 'a', 2},
		"truncated size": {0, 1, 0, 1, 1, 0, 0},
		"no end after":   {0, 1, 0, 1, 1, 0, 0, 0, 1, 'a'},
	} {
		if _, err := queue.Decode(b); !errors.Is(err, curator.ErrCorrupt) {
			t.Errorf("%s: Decode(% x) = %v, want ErrCorrupt", name, b, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(queue.Encode([]byte("ab"), nil))
	f.Add([]byte{0, 1, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := queue.Decode(b)
		if err != nil {
			if !errors.Is(err, curator.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, err := queue.Decode(queue.Encode(items...))
		if err != nil || !slices.EqualFunc(items, again, bytes.Equal) {
			t.Fatalf("round trip: %q -> %q, %v", items, again, err)
		}
	})
}

// The real output of Curator 5.4's priorityToString and epochToString
// (catalog §6.5).
func TestNamesAreCurators(t *testing.T) {
	for p, want := range map[int32]string{0: "100000000", 5: "100000005", 1<<31 - 1: "17FFFFFFF",
		-1: "0FFFFFFFF", -2: "0FFFFFFFE", -1 << 31: "080000000"} {
		if got := queue.PriorityString(p); got != want {
			t.Errorf("PriorityString(%d) = %s, want %s", p, got, want)
		}
	}
	if got := queue.DelayString(time.UnixMilli(1_700_000_000_000)); got != "|18BCFE56800|" {
		t.Errorf("DelayString = %s", got)
	}
	if got := queue.DelayString(time.UnixMilli(1)); got != "|00000001|" {
		t.Errorf("DelayString(1ms) = %s", got)
	}
}
