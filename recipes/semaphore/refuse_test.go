package semaphore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Issue 14 item 7: "not held" is one error across recipes: a lease
// returned twice, a semaphore mutex unlocked when not held and a multi-lock
// unlocked when not held all wrap curator.ErrNotHeld, which
// curator.ErrNotHeld is.
func TestNotHeldIsOneError(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	s := newSem(t, c, semPath(t), 1)
	l, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := semaphore.NewMutex(c, semPath(t))
	if err != nil {
		t.Fatal(err)
	}
	ml, err := multilock.New(m)
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Lease.Release twice":   l.Release(ctx),
		"Mutex.Unlock not held": m.Unlock(ctx),
		"MultiLock.Unlock":      ml.Unlock(ctx),
	} {
		if !errors.Is(err, curator.ErrNotHeld) {
			t.Errorf("%s: %v, want curator.ErrNotHeld", name, err)
		}
	}
}
