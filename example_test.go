package curator_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

// Every error of the module wraps one sentinel of the vocabulary: test it
// with errors.Is, never by its text.
func Example_errors() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	a, err := locks.NewMutex(client, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	b, err := locks.NewMutex(client, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Lock(ctx); err != nil {
		log.Fatal(err)
	}

	// A Try call on a lock held by another does not wait.
	err = b.TryLock(ctx)
	fmt.Println("TryLock of a held lock, ErrLocked:", errors.Is(err, curator.ErrLocked))

	// Releasing twice is a misuse, which changes nothing.
	fmt.Println("Unlock:", a.Unlock(ctx))
	err = a.Unlock(ctx)
	fmt.Println("Unlock again, ErrNotHeld:", errors.Is(err, curator.ErrNotHeld))

	// Bad input is refused before any I/O; an invalid path is an invalid
	// argument too.
	_, err = locks.NewMutex(client, "locks/orders")
	fmt.Println("relative path, ErrInvalidPath:", errors.Is(err, curator.ErrInvalidPath),
		"ErrInvalidArgument:", errors.Is(err, curator.ErrInvalidArgument))

	// ZooKeeper's own errors keep go-zookeeper's sentinels.
	_, _, err = client.Get(ctx, "/missing")
	fmt.Println("Get of a missing node, zk.ErrNoNode:", errors.Is(err, zk.ErrNoNode))

	// After Close, every call says so.
	client.Close()
	_, _, err = client.Get(ctx, "/")
	fmt.Println("Get after Close, ErrClosed:", errors.Is(err, curator.ErrClosed))
	// Output:
	// TryLock of a held lock, ErrLocked: true
	// Unlock: <nil>
	// Unlock again, ErrNotHeld: true
	// relative path, ErrInvalidPath: true ErrInvalidArgument: true
	// Get of a missing node, zk.ErrNoNode: true
	// Get after Close, ErrClosed: true
}

// One rule for every release (Unlock, Lease.Release, MultiLock.Unlock):
// nil, there is nothing to do; ErrLockLost, the holding had been lost
// before the release and what it protected may have been changed by
// another holder meanwhile; ErrNotHeld or ErrInvalidArgument, a misuse;
// anything else, the server refused the delete.
func Example_release() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// What the caller of a release does with its error.
	release := func(err error) string {
		switch {
		case err == nil:
			return "released"
		case errors.Is(err, curator.ErrLockLost):
			return "lost before the release: roll back, compensate or report"
		case errors.Is(err, curator.ErrNotHeld), errors.Is(err, curator.ErrInvalidArgument):
			return "misuse: nothing changed"
		default:
			return "refused by the server: the node stays until its session ends"
		}
	}

	m, err := locks.NewMutex(client, "/locks/ledger")
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("1:", release(m.Unlock(ctx)))
	fmt.Println("2:", release(m.Unlock(ctx)))

	// Someone (an operator, a script) deletes the holder's lock node: the
	// holder learns it at the latest when it releases.
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	if err := client.Delete(ctx, m.Node()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("3:", release(m.Unlock(ctx)))
	// Output:
	// 1: released
	// 2: misuse: nothing changed
	// 3: lost before the release: roll back, compensate or report
}

// Every lock of the module is a curator.Locker, so code can take any of
// them (and multilock.New takes any mix).
func ExampleLocker() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// withLock runs fn while holding l.
	withLock := func(ctx context.Context, l curator.Locker, fn func()) error {
		if err := l.Lock(ctx); err != nil {
			return err
		}
		fn()
		return l.Unlock(ctx)
	}

	mutex, err := locks.NewMutex(client, "/locks/a")
	if err != nil {
		log.Fatal(err)
	}
	rw, err := locks.NewReadWriteLock(client, "/locks/b")
	if err != nil {
		log.Fatal(err)
	}
	semMutex, err := semaphore.NewMutex(client, "/locks/c")
	if err != nil {
		log.Fatal(err)
	}
	both, err := multilock.NewFromPaths(client, "/locks/d", "/locks/e")
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range []struct {
		name string
		l    curator.Locker
	}{
		{"locks.Mutex", mutex},
		{"locks.ReadLock", rw.Read()},
		{"locks.WriteLock", rw.Write()},
		{"semaphore.Mutex", semMutex},
		{"multilock.MultiLock", both},
	} {
		err := withLock(ctx, l.l, func() {
			fmt.Println(l.name, "held:", l.l.IsAcquiredInThisProcess())
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// locks.Mutex held: true
	// locks.ReadLock held: true
	// locks.WriteLock held: true
	// semaphore.Mutex held: true
	// multilock.MultiLock held: true
}

// A holding counts as lost as soon as its connection is suspended under
// LoseOnSuspend (the default), only once its session is lost under
// LoseOnLost. Here the connection drops and comes back in the same session:
// the first lock is lost, the second is still held.
func ExampleSuspendPolicy() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	// The client talks to ZooKeeper through a fault proxy.
	px, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()
	client, err := framework.New(px.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	strict, err := locks.NewMutex(client, "/locks/strict") // LoseOnSuspend
	if err != nil {
		log.Fatal(err)
	}
	lenient, err := locks.NewMutex(client, "/locks/lenient",
		locks.WithSuspendPolicy(curator.LoseOnLost))
	if err != nil {
		log.Fatal(err)
	}
	if err := strict.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	if err := lenient.Lock(ctx); err != nil {
		log.Fatal(err)
	}

	px.Drop() // the connection is lost; the session lives on
	select {
	case <-strict.Lost():
		fmt.Println(curator.LoseOnSuspend, "lock lost on SUSPENDED")
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	if err := client.BlockUntilConnected(ctx); err != nil { // RECONNECTED
		log.Fatal(err)
	}
	select {
	case <-lenient.Lost():
		fmt.Println(curator.LoseOnLost, "lock lost")
	default:
		fmt.Println(curator.LoseOnLost, "lock still held:", lenient.IsAcquiredInThisProcess())
	}
	fmt.Println("strict Unlock, ErrLockLost:", errors.Is(strict.Unlock(ctx), curator.ErrLockLost))
	fmt.Println("lenient Unlock:", lenient.Unlock(ctx))
	// Output:
	// LoseOnSuspend lock lost on SUSPENDED
	// LoseOnLost lock still held: true
	// strict Unlock, ErrLockLost: true
	// lenient Unlock: <nil>
}
