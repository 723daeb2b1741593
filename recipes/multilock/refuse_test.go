package multilock_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Issue 14 item 7: a MultiLock given the same lock twice, or two locks on
// the same path, would wait on itself until its deadline; New refuses it.
func TestMultiLockRefusesDuplicates(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ps := paths(t, 2)
	m := mutex(t, c, ps[0])
	sm, err := semaphore.NewMutex(c, ps[1])
	if err != nil {
		t.Fatal(err)
	}
	sm2, err := semaphore.NewMutex(testenv.Client(t, testenv.Shared().ConnectString()), ps[1])
	if err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]func() error{
		"same lock twice":        func() error { _, err := multilock.New(m, sm, m); return err },
		"same semaphore mutex":   func() error { _, err := multilock.New(sm, sm); return err },
		"two locks on one path":  func() error { _, err := multilock.New(m, mutex(t, c, ps[0])); return err },
		"two clients, one path":  func() error { _, err := multilock.New(sm, sm2); return err },
		"NewFromPaths duplicate": func() error { _, err := multilock.NewFromPaths(c, ps[0], ps[1], ps[0]); return err },
		"a nested multi-lock's path": func() error {
			inner, err := multilock.NewFromPaths(c, ps[0], ps[1])
			if err != nil {
				return err
			}
			_, err = multilock.New(inner, mutex(t, c, ps[0]))
			return err
		},
		"a nested multi-lock's member": func() error {
			inner, err := multilock.New(m, sm)
			if err != nil {
				return err
			}
			_, err = multilock.New(inner, m)
			return err
		},
	} {
		if err := fn(); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := multilock.New(m, sm); err != nil {
		t.Fatalf("distinct locks: %v", err)
	}
	var _ curator.Locker = m
}
