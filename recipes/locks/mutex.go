package locks

import (
	"context"
	"fmt"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/telemetry"
)

// Mutex is a distributed mutual-exclusion lock: Curator's InterProcessMutex.
// Contender nodes are "<path>/_c_<uuid>-lock-<seq>", as Curator's, so Go and
// Java processes on the same path exclude each other.
//
// Goroutines sharing one Mutex exclude each other exactly as separate
// processes do: a Lock while another goroutine holds it blocks. Reentrancy
// (Curator's is per thread, and Go has no thread identity) is explicit: Do
// hands its function a context, and Lock or Do called with that context
// (or one derived from it) re-enters, counted as in Curator (n acquisitions
// need n releases).
//
// A held lock can be lost (its session expires, or with the default
// curator.LoseOnSuspend policy its connection is suspended): Lost is closed
// then, and the context Do hands out is cancelled. FencingToken returns a
// number that strictly increases from one holder to the next, for
// resources that must reject a stale holder; GuardedMulti makes ZooKeeper
// writes that succeed only while the lock is held.
type Mutex struct{ lock }

var _ curator.Locker = (*Mutex)(nil)

// NewMutex returns a mutex on path (InterProcessMutex(client, path)). It
// does no I/O; a nil client, an invalid path or a bad option gives an error
// wrapping curator.ErrInvalidArgument.
func NewMutex(client *framework.Client, path string, opts ...Option) (*Mutex, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	d, err := driver.New(client, path, layout.MutexName, driver.MaxLeases(1))
	if err != nil {
		return nil, fmt.Errorf("locks: %w", err)
	}
	m := &Mutex{}
	m.init(d, o, m, telemetry.KindMutex)
	return m, nil
}

func (m *Mutex) take(ctx context.Context, try bool) (*holding, error) {
	return m.queued(ctx, try, nil)
}
