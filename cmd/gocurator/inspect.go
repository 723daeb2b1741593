package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gocurator/curator/internal/inspect"
)

func init() {
	commands = append(commands, &command{
		name:  "inspect",
		args:  "PATH",
		nargs: 1,
		about: `Lists every recipe under PATH (PATH itself and its descendants) as it stands
in ZooKeeper, Curator's and gocurator's alike, recognised by node layout:
mutex (InterProcessMutex, LeaderSelector), read-write lock, semaphore
(InterProcessSemaphoreV2: its leases in order, its internal lock's holder
and waiters; the maximum is not stored in ZooKeeper), leader latch, double
barrier, group (GroupMember: a path whose children are all ephemeral,
non-sequential, unprotected nodes, its members by id, with their session
and data size), shared count, barrier or plain node, unknown. For each: the
holders and the waiters in queue order, with node name, owning session
(ephemeralOwner), age (from ctime), data (text, else hex) and fencing token
(czxid). A node whose children are all persistent is a parent of recipes,
walked into but not listed.

--watch redraws whenever the queues change (ZooKeeper child watches, one
read per burst of changes) until Ctrl-C. --json prints one JSON document
(with --watch, one per line per redraw).`,
		setup: func(fs *flag.FlagSet) func(*cli, *connFlags, []string) int {
			watch := fs.Bool("watch", false, "redraw as the queues change, until Ctrl-C")
			asJSON := fs.Bool("json", false, "print JSON instead of a table")
			maxNodes := fs.Int("max-nodes", inspect.DefaultMaxNodes, "read at most this many nodes")
			return func(c *cli, conn *connFlags, args []string) int {
				return c.inspect(conn, args[0], *watch, *asJSON, *maxNodes)
			}
		},
	})
}

func (c *cli) inspect(conn *connFlags, path string, watch, asJSON bool, maxNodes int) int {
	if maxNodes < 1 {
		return c.errorf(exitUsage, "--max-nodes %d: must be at least 1", maxNodes)
	}
	client, err := conn.dial(c.ctx)
	if err != nil {
		return c.dialFailed(err)
	}
	defer client.Close()
	src := inspect.FromClient(client)
	opts := inspect.Options{MaxNodes: maxNodes}
	if path == "/" && conn.namespace == "" && !strings.Contains(conn.connect, "/") {
		opts.Skip = []string{"/zookeeper"} // the server's own nodes
	}
	out := &output{w: c.stdout, json: asJSON, watch: watch, maxNodes: maxNodes, clear: watch && !asJSON && isTerminal(c.stdout)}
	if !watch {
		ctx, cancel := conn.op(c.ctx)
		defer cancel()
		snap, err := inspect.Take(ctx, src, path, opts)
		if err != nil {
			return c.fail(conn, path, err)
		}
		if err := out.draw(snap); err != nil {
			return c.errorf(exitFailure, "writing: %v", err)
		}
		if len(snap.Unreadable) > 0 || snap.Truncated {
			return exitIncomplete
		}
		return exitOK
	}
	first := true
	err = inspect.Watch(c.ctx, src, path, inspect.WatchOptions{Options: opts, Timeout: conn.timeout},
		func(snap *inspect.Snapshot, err error) error {
			switch {
			case err != nil && (first || !inspect.IsUnreachable(err)):
				return err
			case err != nil:
				fmt.Fprintf(c.stderr, "gocurator: %v (reading again once connected)\n", err)
				return nil
			case first && snap.Missing:
				return errPathMissing
			}
			first = false
			if err := out.draw(snap); err != nil {
				return writeError{err}
			}
			return nil
		})
	var we writeError
	switch {
	case err == nil:
		return exitOK // Ctrl-C
	case errors.As(err, &we):
		return c.errorf(exitFailure, "writing: %v", we.error)
	}
	return c.fail(conn, path, err)
}

// errPathMissing: the path to watch does not exist.
var errPathMissing = errors.New("no such path")

// writeError: the output could not be written (a closed pipe).
type writeError struct{ error }

// isTerminal reports whether w is a terminal (the table is then redrawn in
// place).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
