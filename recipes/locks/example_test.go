package locks_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

func ExampleMutex() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString(), framework.WithSessionTimeout(15*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	m, err := locks.NewMutex(client, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Lock(ctx); err != nil { // waits behind the other processes' holders
		log.Fatal(err)
	}
	fmt.Println("held:", m.IsAcquiredInThisProcess())
	// ... work; stop if <-m.Lost() ...
	if err := m.Unlock(ctx); err != nil {
		log.Fatal(err) // ErrLockLost: the lock had been lost meanwhile
	}
	fmt.Println("held:", m.IsAcquiredInThisProcess())
	// Output:
	// held: true
	// held: false
}

// A holder is told when it may no longer rely on its lock: Lost is closed
// and the held context cancelled. Under the default policy
// (curator.LoseOnSuspend) a dropped connection is enough; here the fault
// proxy drops it.
func ExampleMutex_Lost() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	px, err := zktest.NewProxy(srv.Addr()) // the holder's network, which the example cuts
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()
	holderClient, err := framework.New(px.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer holderClient.Close()
	otherClient, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer otherClient.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	m, err := locks.NewMutex(holderClient, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	held, err := m.Acquire(ctx) // Lock, plus the held context
	if err != nil {
		log.Fatal(err)
	}

	px.Drop() // the holder's connection is lost
	select {
	case <-m.Lost():
		fmt.Println("lost: stop using what the lock protects")
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	<-held.Done() // closed with Lost
	fmt.Println("held context, cause ErrLockLost:", errors.Is(context.Cause(held), curator.ErrLockLost))
	fmt.Println("Unlock, ErrLockLost:", errors.Is(m.Unlock(ctx), curator.ErrLockLost))

	// The lost lock's node is deleted once the holder reconnects, so
	// others get the lock.
	other, err := locks.NewMutex(otherClient, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("other process Lock:", other.Lock(ctx))
	fmt.Println("other process Unlock:", other.Unlock(ctx))
	// Output:
	// lost: stop using what the lock protects
	// held context, cause ErrLockLost: true
	// Unlock, ErrLockLost: true
	// other process Lock: <nil>
	// other process Unlock: <nil>
}

// Do runs a function while holding the lock. The context it hands over is
// cancelled if the lock is lost, and re-enters the lock: pass it down.
func ExampleMutex_Do() {
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
	m, err := locks.NewMutex(client, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	err = m.Do(ctx, func(ctx context.Context) error {
		token, err := m.FencingToken(ctx)
		if err != nil {
			return err
		}
		fmt.Println("fencing token > 0:", token > 0) // give it to the resource
		// A function called with the held context takes the lock again
		// at once (Curator's reentrancy); a Lock with another context
		// would wait.
		return m.Do(ctx, func(context.Context) error {
			fmt.Println("re-entered, held:", m.IsAcquiredInThisProcess())
			return nil
		})
	})
	fmt.Println("Do:", err, "held:", m.IsAcquiredInThisProcess())
	// Output:
	// fencing token > 0: true
	// re-entered, held: true
	// Do: <nil> held: false
}

// The fencing token (the lock node's creation zxid) strictly increases from
// holder to holder: a resource that remembers the highest it has seen can
// refuse a stale holder.
func ExampleMutex_FencingToken() {
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

	var tokens []int64
	for range 3 {
		m, err := locks.NewMutex(client, "/locks/orders") // three holders in turn
		if err != nil {
			log.Fatal(err)
		}
		if err := m.Lock(ctx); err != nil {
			log.Fatal(err)
		}
		token, err := m.FencingToken(ctx)
		if err != nil {
			log.Fatal(err)
		}
		tokens = append(tokens, token)
		if err := m.Unlock(ctx); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("increasing:", tokens[0] < tokens[1] && tokens[1] < tokens[2])

	// Outside a holding there is no token.
	m, err := locks.NewMutex(client, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	_, err = m.FencingToken(ctx)
	fmt.Println("not held, ErrNotHeld:", errors.Is(err, curator.ErrNotHeld))
	// Output:
	// increasing: true
	// not held, ErrNotHeld: true
}

// GuardedMulti writes to ZooKeeper only while the lock is held: the
// transaction checks the lock node. Once the node is gone (deleted by
// someone, or gone with an expired session) nothing is written.
func ExampleMutex_GuardedMulti() {
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

	if _, err := client.Create(ctx, "/inventory/widgets", []byte("10"), framework.WithParents()); err != nil {
		log.Fatal(err)
	}
	m, err := locks.NewMutex(client, "/locks/inventory")
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	_, err = m.GuardedMulti(ctx, framework.SetDataOp{Path: "/inventory/widgets", Data: []byte("9"), Version: -1})
	fmt.Println("write while held:", err)

	// An operator deletes the lock node.
	if err := client.Delete(ctx, m.Node()); err != nil {
		log.Fatal(err)
	}
	_, err = m.GuardedMulti(ctx, framework.SetDataOp{Path: "/inventory/widgets", Data: []byte("8"), Version: -1})
	fmt.Println("write once the lock node is gone, ErrLockLost:", errors.Is(err, curator.ErrLockLost))
	select {
	case <-m.Lost():
		fmt.Println("Lost closed")
	default:
	}
	data, _, err := client.Get(ctx, "/inventory/widgets")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("widgets = %s\n", data)
	fmt.Println("Unlock, ErrLockLost:", errors.Is(m.Unlock(ctx), curator.ErrLockLost))
	// Output:
	// write while held: <nil>
	// write once the lock node is gone, ErrLockLost: true
	// Lost closed
	// widgets = 9
	// Unlock, ErrLockLost: true
}

// TryLock does not wait: it takes a free lock, and returns ErrLocked at
// once for a held one.
func ExampleMutex_TryLock() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c1, err := framework.New(srv.ConnectString()) // process 1
	if err != nil {
		log.Fatal(err)
	}
	defer c1.Close()
	c2, err := framework.New(srv.ConnectString()) // process 2
	if err != nil {
		log.Fatal(err)
	}
	defer c2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	a, err := locks.NewMutex(c1, "/locks/nightly-report")
	if err != nil {
		log.Fatal(err)
	}
	b, err := locks.NewMutex(c2, "/locks/nightly-report")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("process 1 TryLock:", a.TryLock(ctx))
	err = b.TryLock(ctx)
	fmt.Println("process 2 TryLock, ErrLocked:", errors.Is(err, curator.ErrLocked))
	if err := a.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("process 2 TryLock:", b.TryLock(ctx))
	if err := b.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// process 1 TryLock: <nil>
	// process 2 TryLock, ErrLocked: true
	// process 2 TryLock: <nil>
}

// Readers share the lock; a writer excludes everyone.
func ExampleReadWriteLock() {
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

	// One ReadWriteLock per goroutine or process.
	r1, err := locks.NewReadWriteLock(client, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}
	r2, err := locks.NewReadWriteLock(client, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}
	w, err := locks.NewReadWriteLock(client, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reader 1:", r1.Read().TryLock(ctx))
	fmt.Println("reader 2:", r2.Read().TryLock(ctx))
	err = w.Write().TryLock(ctx)
	fmt.Println("writer while read, ErrLocked:", errors.Is(err, curator.ErrLocked))
	if err := r1.Read().Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	if err := r2.Read().Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("writer:", w.Write().TryLock(ctx))
	err = r1.Read().TryLock(ctx)
	fmt.Println("reader while written, ErrLocked:", errors.Is(err, curator.ErrLocked))
	if err := w.Write().Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// reader 1: <nil>
	// reader 2: <nil>
	// writer while read, ErrLocked: true
	// writer: <nil>
	// reader while written, ErrLocked: true
}

// Downgrade: the write holder takes the read lock with its held context
// (at once), then releases the write lock and goes on reading, with no
// writer able to slip in between.
func ExampleReadWriteLock_downgrade() {
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
	rw, err := locks.NewReadWriteLock(client, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}
	other, err := locks.NewReadWriteLock(client, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}

	wctx, err := rw.Write().Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// ... write the catalog ...
	fmt.Println("downgrade:", rw.Read().Lock(wctx))
	fmt.Println("release the write lock:", rw.Write().Unlock(ctx))
	// ... read the catalog: still no writer ...
	err = other.Write().TryLock(ctx)
	fmt.Println("another writer, ErrLocked:", errors.Is(err, curator.ErrLocked))
	fmt.Println("release the read lock:", rw.Read().Unlock(ctx))
	fmt.Println("another writer:", other.Write().TryLock(ctx))
	if err := other.Write().Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// downgrade: <nil>
	// release the write lock: <nil>
	// another writer, ErrLocked: true
	// release the read lock: <nil>
	// another writer: <nil>
}

// Upgrade (the write lock asked with a read holding's context) could never
// be granted: it fails at once with ErrUpgrade instead of blocking forever
// as in Curator.
func ExampleReadWriteLock_upgrade() {
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
	rw, err := locks.NewReadWriteLock(client, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}

	err = rw.Read().Do(ctx, func(rctx context.Context) error {
		return rw.Write().Lock(rctx)
	})
	fmt.Println("upgrade, ErrUpgrade:", errors.Is(err, curator.ErrUpgrade))
	fmt.Println("read held:", rw.Read().IsAcquiredInThisProcess(), "write held:", rw.Write().IsAcquiredInThisProcess())
	// Output:
	// upgrade, ErrUpgrade: true
	// read held: false write held: false
}

// Revocation: a holder that armed WithRevocation is asked by another
// process (locks.Revoke on its node) to let go, and releases.
func Example_revocation() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	holderClient, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer holderClient.Close()
	otherClient, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer otherClient.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The holder: its callback runs when a revocation is asked, with the
	// held context of the holding asked for.
	revoked := make(chan context.Context, 1)
	holder, err := locks.NewMutex(holderClient, "/locks/maintenance",
		locks.WithRevocation(func(held context.Context) { revoked <- held }))
	if err != nil {
		log.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		log.Fatal(err)
	}

	// Another process asks whoever holds the lock to release it.
	other, err := locks.NewMutex(otherClient, "/locks/maintenance")
	if err != nil {
		log.Fatal(err)
	}
	parts, err := other.Participants(ctx) // the holder first
	if err != nil {
		log.Fatal(err)
	}
	if err := locks.Revoke(ctx, otherClient, parts[0]); err != nil {
		log.Fatal(err)
	}

	select {
	case held := <-revoked:
		fmt.Println("holder: asked to release")
		fmt.Println("holder Unlock:", holder.Unlock(held)) // that holding, no later one
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	fmt.Println("other Lock:", other.Lock(ctx))
	if err := other.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// holder: asked to release
	// holder Unlock: <nil>
	// other Lock: <nil>
}

// WithOnEnqueue tells a waiter its node as soon as it is in the queue,
// before it waits. A waiter that gives up takes its node out before it
// returns.
func ExampleWithOnEnqueue() {
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

	holder, err := locks.NewMutex(client, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	defer holder.Unlock(ctx)

	queued := make(chan string, 1)
	waiter, err := locks.NewMutex(client, "/locks/orders",
		locks.WithOnEnqueue(func(node string) { queued <- node }))
	if err != nil {
		log.Fatal(err)
	}
	waitCtx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(waitCtx) }()

	var node string
	select {
	case node = <-queued:
		fmt.Println("waiter queued, under the lock path:", framework.ParentPath(node))
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	giveUp()
	fmt.Println("waiter gave up, context.Canceled:", errors.Is(<-done, context.Canceled))
	ok, _, err := client.Exists(ctx, node)
	fmt.Println("its node exists:", ok, err)
	// Output:
	// waiter queued, under the lock path: /locks/orders
	// waiter gave up, context.Canceled: true
	// its node exists: false <nil>
}

// Participants lists the contenders, holder first, in queue order.
func ExampleMutex_Participants() {
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

	holder, err := locks.NewMutex(client, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	queued := make(chan string, 1)
	waiter, err := locks.NewMutex(client, "/locks/orders",
		locks.WithOnEnqueue(func(node string) { queued <- node }))
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(ctx) }()
	var waiting string
	select {
	case waiting = <-queued:
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}

	parts, err := holder.Participants(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("contenders:", len(parts))
	fmt.Println("first is the holder:", parts[0] == holder.Node())
	fmt.Println("second is the waiter:", parts[1] == waiting)

	if err := holder.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("waiter Lock:", <-done)
	parts, err = waiter.Participants(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("contenders:", len(parts))
	if err := waiter.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// contenders: 2
	// first is the holder: true
	// second is the waiter: true
	// waiter Lock: <nil>
	// contenders: 1
}
