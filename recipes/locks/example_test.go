package locks_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

// zkAddress is the ZooKeeper the examples talk to (in tests, a real server
// the test binary started; in your program, your ensemble).
func zkAddress() string { return testenv.Shared().ConnectString() }

func ExampleMutex() {
	client, err := framework.New(zkAddress(), framework.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	m, err := locks.NewMutex(client, "/examples/mutex")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("held:", m.IsAcquiredInThisProcess())
	select {
	case <-m.Lost():
		fmt.Println("lost: stop using what the lock protects")
	default:
	}
	if err := m.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("held:", m.IsAcquiredInThisProcess())
	// Output:
	// held: true
	// held: false
}

func ExampleMutex_Do() {
	client, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	m, _ := locks.NewMutex(client, "/examples/do")

	err = m.Do(context.Background(), func(ctx context.Context) error {
		// ctx is cancelled if the lock is lost; passing it on re-enters m.
		token, err := m.FencingToken(ctx)
		if err != nil {
			return err
		}
		fmt.Println("fencing token > 0:", token > 0)
		return m.Do(ctx, func(context.Context) error {
			fmt.Println("re-entered")
			return nil
		})
	})
	fmt.Println("err:", err)
	// Output:
	// fencing token > 0: true
	// re-entered
	// err: <nil>
}

func ExampleMutex_TryLock() {
	client, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	a, _ := locks.NewMutex(client, "/examples/try")
	b, _ := locks.NewMutex(client, "/examples/try")
	ctx := context.Background()

	fmt.Println(a.TryLock(ctx))
	fmt.Println(b.TryLock(ctx))
	a.Unlock(ctx)
	// Output:
	// <nil>
	// locks: /examples/try: held by another
}

func ExampleReadWriteLock() {
	client, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	rw, _ := locks.NewReadWriteLock(client, "/examples/rw")
	ctx := context.Background()

	// Write, then downgrade to read with the held context.
	wctx, err := rw.Write().Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rw.Read().Lock(wctx))
	rw.Write().Unlock(ctx)
	rw.Read().Unlock(ctx)

	// A read holder cannot upgrade.
	rctx, _ := rw.Read().Acquire(ctx)
	fmt.Println(rw.Write().Lock(rctx))
	rw.Read().Unlock(ctx)
	// Output:
	// <nil>
	// locks: /examples/rw: cannot upgrade a read lock to a write lock
}
