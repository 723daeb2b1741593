// Command semaphoremutex shows semaphore.Mutex (Curator's
// InterProcessSemaphoreMutex): a non-reentrant mutex on a one-lease
// semaphore; a second Lock on the same instance waits, as with sync.Mutex.
//
//	go run ./examples/semaphoremutex     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

func main() { zkenv.Main(run) }

func run(ctx context.Context, srv *zktest.Server) error {
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		return err
	}
	defer client.Close()
	m, err := semaphore.NewMutex(client, "/examples/semaphoremutex")
	if err != nil {
		return err
	}
	if err := m.Lock(ctx); err != nil {
		return err
	}
	fmt.Println("held:", m.IsAcquiredInThisProcess())
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := m.Lock(short); errors.Is(err, context.DeadlineExceeded) {
		fmt.Println("not reentrant: a second Lock waits until Unlock")
	}
	other, err := semaphore.NewMutex(client, "/examples/semaphoremutex")
	if err != nil {
		return err
	}
	if err := other.TryLock(ctx); errors.Is(err, curator.ErrLocked) {
		fmt.Println("another instance: locked")
	}
	if err := m.Unlock(ctx); err != nil {
		return err
	}
	fmt.Println("released; unlocking again:", m.Unlock(ctx))
	return nil
}
