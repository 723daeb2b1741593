// Package zkenv gives the example programs a ZooKeeper: the ensemble named
// by ZK_CONNECT (each run in a fresh chroot of its own), or else a local
// server started through the testing harness and stopped at the end.
package zkenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// Main runs an example program: it calls run with a context that ends on
// Ctrl-C (or SIGTERM) and the ZooKeeper to use, and closes that ZooKeeper
// once run has returned, whatever the outcome, so that neither a local
// server's temporary directory nor the chroot made on a ZK_CONNECT
// ensemble outlives the program. run should return its errors rather than
// exit (log.Fatal would skip that cleanup, and run's own defers); Main
// prints the error and exits with status 1.
func Main(run func(ctx context.Context, srv *zktest.Server) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // a second Ctrl-C, during the cleanup, kills at once
	err := withServer(ctx, run)
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("interrupted: %w", err)
	}
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
}

func withServer(ctx context.Context, run func(context.Context, *zktest.Server) error) (err error) {
	srv, where, err := server()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Close()) }()
	fmt.Printf("ZooKeeper %s (%s)\n", srv.ConnectString(), where)
	return run(ctx, srv)
}

// server returns the ZooKeeper to use and a description of where it is.
func server() (*zktest.Server, string, error) {
	if c := os.Getenv("ZK_CONNECT"); c != "" {
		s, err := zktest.NewExternal(c)
		if err != nil {
			return nil, "", fmt.Errorf("ZK_CONNECT=%s: %w", c, err)
		}
		return s, "ZK_CONNECT", nil
	}
	s, err := zktest.NewServer()
	if err != nil {
		return nil, "", err
	}
	return s, "started locally", nil
}

// CheckExpiry checks that the examples that expire a session on purpose
// (zktest.ExpireSession) can do so on srv: that the server answers the
// four-letter word cons. A local server does; an ensemble named by
// ZK_CONNECT answers it only if its zoo.cfg lists cons in
// 4lw.commands.whitelist (ZooKeeper 3.5 and later allow only srvr by
// default).
func CheckExpiry(srv *zktest.Server) error {
	if !srv.External() {
		return nil
	}
	if _, err := srv.Sessions(); err != nil {
		return fmt.Errorf("this example expires a session, which needs the ZK_CONNECT server to answer the four-letter word cons: %w; or unset ZK_CONNECT to use a local ZooKeeper", err)
	}
	return nil
}

// Test runs an example program's run as a test, in a fresh chroot of the
// test binary's shared server (testenv.Main starts it, and checks that
// nothing is left running), as a ZK_CONNECT run would: the examples are
// part of the suite, so that none of them rots.
func Test(t *testing.T, run func(ctx context.Context, srv *zktest.Server) error) {
	t.Helper()
	srv, err := zktest.NewExternal(testenv.Shared().ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := run(testenv.Ctx(t, 3*time.Minute), srv); err != nil {
		t.Fatal(err)
	}
}
