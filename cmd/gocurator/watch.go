package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/recipes/cache"
)

func init() {
	commands = append(commands, &command{
		name:  "watch",
		args:  "PATH",
		nargs: 1,
		about: `Prints the changes of PATH and its subtree as they happen, a "tail -f" for
ZooKeeper: a cache of the subtree (recipes/cache, Curator's CuratorCache)
prints one line per event: created, changed or deleted, with the node's
path, data size, mzxid and data (cut to 40 characters; --no-data leaves it
out and caches stats only). The nodes there at the start are printed as
they load, "created", then a line "initialized" with their count
(--summary prints that line alone). A burst of changes of one node may be
printed as one line with its latest state: intermediate states may be
skipped, the last never. When the session is lost (it expired while the
connection was down) the cache reads everything again, prints only the
real differences, then a line "rebuilt". Connection changes go to stderr.
Runs until Ctrl-C (exit status 0).

--json prints one JSON object per line: time, type (created, changed,
deleted, initialized, rebuilt), path, and for a node its data_size, data
(text, else hex: data_encoding), mzxid, czxid, version and session (the
ephemeralOwner, "0x0" for a persistent node); nodes for initialized and
rebuilt.`,
		setup: func(fs *flag.FlagSet) func(*cli, *connFlags, []string) int {
			o := watchOptions{}
			fs.BoolVar(&o.json, "json", false, "print one JSON object per event")
			fs.IntVar(&o.maxDepth, "max-depth", -1, "watch `N` levels below PATH (0: PATH alone; -1: the whole subtree)")
			fs.BoolVar(&o.noData, "no-data", false, "cache and print stats only, not node data")
			fs.BoolVar(&o.summary, "summary", false, "print the initial load as one line, not a line per node")
			fs.DurationVar(&o.session, "session-timeout", sessionTimeout, "the session's timeout: a disconnection longer than it loses the session (and rebuilds)")
			return func(c *cli, conn *connFlags, args []string) int {
				conn.session = o.session
				return c.watch(conn, args[0], o)
			}
		},
	})
}

type watchOptions struct {
	json, noData, summary bool
	maxDepth              int
	session               time.Duration
}

func (c *cli) watch(conn *connFlags, path string, o watchOptions) int {
	if o.maxDepth < -1 {
		return c.errorf(exitUsage, "--max-depth %d: must be -1 (everything) or more", o.maxDepth)
	}
	if o.session <= 0 {
		return c.errorf(exitUsage, "--session-timeout %v: must be positive", o.session)
	}
	client, err := conn.dial(c.ctx)
	if err != nil {
		return c.dialFailed(err)
	}
	defer client.Close()
	ctx, cancel := conn.op(c.ctx)
	ok, _, err := client.Exists(ctx, path)
	cancel()
	switch {
	case err != nil:
		return c.fail(conn, path, err)
	case !ok:
		return c.fail(conn, path, errPathMissing)
	}
	opts := []cache.Option{cache.WithMaxDepth(o.maxDepth)}
	if o.noData {
		opts = append(opts, cache.WithoutData())
	}
	if path == "/" && conn.namespace == "" && !strings.Contains(conn.connect, "/") {
		opts = append(opts, cache.WithFilter(func(p string) bool { return p != "/zookeeper" })) // the server's own nodes
	}
	cc, err := cache.New(client, path, opts...)
	if err != nil {
		return c.errorf(exitUsage, "%v", err)
	}
	states := make(chan framework.State, 16)
	removeListener := client.AddListener(func(s framework.State) {
		select {
		case states <- s:
		default: // the operator's stderr is stuck: the events matter more
		}
	})
	defer removeListener()
	if s := client.Session(); s != nil {
		fmt.Fprintf(c.stderr, "gocurator: watching %s as session %s; Ctrl-C to stop\n", path, inspect.SessionHex(s.ID()))
	}
	events := cc.Events() // before Start: every event from the first
	started := make(chan error, 1)
	sctx, stopStart := context.WithCancel(c.ctx) // a write error may end us before the initial load did
	go func() { started <- cc.Start(sctx) }()
	defer func() {
		stopStart()
		cc.Close()
		<-started
	}()
	w := &eventWriter{w: bufio.NewWriter(c.stdout), json: o.json, noData: o.noData}
	initialized := false
	loaded := 0 // nodes of the initial load, as printed
	for {
		select {
		case <-c.ctx.Done():
			return exitOK
		case s := <-states:
			switch s {
			case framework.StateSuspended:
				fmt.Fprintf(c.stderr, "gocurator: connection lost; the session may live: reconnecting\n")
			case framework.StateReconnected:
				fmt.Fprintf(c.stderr, "gocurator: reconnected (session %s)\n", sessionNow(client))
			case framework.StateLost:
				fmt.Fprintf(c.stderr, "gocurator: session lost: once connected again the cache reads everything again, prints the differences, then \"rebuilt\"\n")
			case framework.StateAuthFailed:
				fmt.Fprintf(c.stderr, "gocurator: the server refused the credentials (--auth)\n")
			}
		case ev, ok := <-events:
			if !ok {
				return exitOK // closed: only after Ctrl-C
			}
			nodes := 0
			switch {
			case ev.Type == cache.EventInitialized:
				initialized, nodes = true, loaded
			case ev.Type == cache.EventRebuilt:
				nodes = cc.Size()
			case !initialized:
				if ev.Type == cache.EventCreated {
					loaded++
				} else if ev.Type == cache.EventDeleted {
					loaded--
				}
				if o.summary {
					continue
				}
			}
			if err := w.write(ev, path, nodes); err != nil {
				return c.errorf(exitFailure, "writing: %v", err)
			}
		}
	}
}

func sessionNow(client *framework.Client) string {
	if s := client.Session(); s != nil {
		return inspect.SessionHex(s.ID())
	}
	return "none"
}

// eventLine is one event in --json.
type eventLine struct {
	Time         time.Time `json:"time"`
	Type         string    `json:"type"`
	Path         string    `json:"path"`
	DataSize     *int32    `json:"data_size,omitempty"`
	Data         *string   `json:"data,omitempty"`
	DataEncoding string    `json:"data_encoding,omitempty"`
	Mzxid        *int64    `json:"mzxid,omitempty"`
	Czxid        *int64    `json:"czxid,omitempty"`
	Version      *int32    `json:"version,omitempty"`
	Session      string    `json:"session,omitempty"`
	Nodes        *int      `json:"nodes,omitempty"`
}

// eventWriter prints events, a line each, flushed at once (a pipe into
// grep sees each as it happens).
type eventWriter struct {
	w      *bufio.Writer
	json   bool
	noData bool
}

// write prints ev; root and nodes (the cache's size) are for initialized
// and rebuilt, which have no path of their own.
func (ew *eventWriter) write(ev cache.Event, root string, nodes int) error {
	now := time.Now()
	n := ev.New
	if ev.Type == cache.EventDeleted {
		n = ev.Old
	}
	if ew.json {
		l := eventLine{Time: now.UTC(), Type: ev.Type.String(), Path: ev.Path}
		if n != nil {
			st := n.Stat
			l.DataSize, l.Mzxid, l.Czxid, l.Version = &st.DataLength, &st.Mzxid, &st.Czxid, &st.Version
			l.Session = inspect.SessionHex(st.EphemeralOwner)
			if !ew.noData {
				d, enc := inspect.DisplayData(n.Data)
				l.Data, l.DataEncoding = &d, enc
			}
		} else {
			l.Path, l.Nodes = root, &nodes
		}
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		ew.w.Write(append(b, '\n'))
		return ew.w.Flush()
	}
	fmt.Fprintf(ew.w, "%s %-11s ", now.Format("15:04:05.000"), ev.Type)
	switch {
	case n != nil:
		fmt.Fprintf(ew.w, "%s  size=%d mzxid=0x%x", n.Path, n.Stat.DataLength, n.Stat.Mzxid)
		if !ew.noData && len(n.Data) > 0 {
			d, enc := inspect.DisplayData(n.Data)
			fmt.Fprintf(ew.w, "  %s", data(inspect.Entry{Data: d, DataEncoding: enc}))
		}
	case ev.Type == cache.EventRebuilt:
		fmt.Fprintf(ew.w, "%s  nodes=%d (the session was lost: everything read again; the lines before were the differences)", root, nodes)
	default:
		fmt.Fprintf(ew.w, "%s  nodes=%d", root, nodes)
	}
	io.WriteString(ew.w, "\n")
	return ew.w.Flush()
}
