package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// running is a command that runs until told to stop (watch), its output
// read line by line as it comes.
type running struct {
	t       *testing.T
	cmd     *exec.Cmd
	cancel  context.CancelFunc
	out     chan string // stdout's lines; closed at its end
	mu      sync.Mutex
	errs    []string // stderr's lines so far
	errSeen chan struct{}
	exited  bool
}

// start runs the command with args against connect, without ZK_CONNECT.
func start(t *testing.T, connect string, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	r := &running{t: t, cancel: cancel, out: make(chan string, 1000), errSeen: make(chan struct{}, 1)}
	r.cmd = exec.CommandContext(ctx, binary, append(args, "--connect", connect)...)
	r.cmd.Env = withoutZKConnect(os.Environ())
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(r.out)
		lines(stdout, func(l string) { r.out <- l })
	}()
	go func() {
		defer wg.Done()
		lines(stderr, func(l string) {
			r.mu.Lock()
			r.errs = append(r.errs, l)
			r.mu.Unlock()
			select {
			case r.errSeen <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() {
		if !r.exited {
			r.cmd.Process.Kill()
			for range r.out {
			}
			wg.Wait()
			r.cmd.Wait()
		}
		cancel()
	})
	return r
}

func lines(rd io.Reader, fn func(string)) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
}

// stderr returns what the command printed on stderr so far.
func (r *running) stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

// awaitErr waits for a line of stderr matching re and returns its
// submatches.
func (r *running) awaitErr(re *regexp.Regexp) []string {
	r.t.Helper()
	deadline := time.After(eventTimeout)
	for {
		r.mu.Lock()
		for _, l := range r.errs {
			if m := re.FindStringSubmatch(l); m != nil {
				r.mu.Unlock()
				return m
			}
		}
		r.mu.Unlock()
		select {
		case <-r.errSeen:
		case <-deadline:
			r.t.Fatalf("stderr: no line matching %s in %v:\n%s", re, eventTimeout, r.stderr())
		}
	}
}

// next returns the next line of stdout.
func (r *running) next(what string) string {
	r.t.Helper()
	select {
	case l, ok := <-r.out:
		if !ok {
			r.t.Fatalf("output ended before %s; stderr:\n%s", what, r.stderr())
		}
		return l
	case <-time.After(eventTimeout):
		r.t.Fatalf("no line for %s in %v; stderr:\n%s", what, eventTimeout, r.stderr())
	}
	return ""
}

// interrupt sends Ctrl-C and checks that the command ends with status 0,
// having printed nothing more than rest allows.
func (r *running) interrupt(rest func(line string)) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		r.t.Fatal(err)
	}
	for l := range r.out {
		rest(l)
	}
	err := r.cmd.Wait()
	r.exited = true
	if err != nil {
		r.t.Fatalf("after Ctrl-C: %v, want exit status 0\nstderr:\n%s", err, r.stderr())
	}
	if strings.Contains(r.stderr(), "DATA RACE") {
		r.t.Errorf("raced:\n%s", r.stderr())
	}
}

// watchEvent is a line of watch --json.
type watchEvent struct {
	Time         time.Time `json:"time"`
	Type         string    `json:"type"`
	Path         string    `json:"path"`
	DataSize     *int32    `json:"data_size"`
	Data         *string   `json:"data"`
	DataEncoding string    `json:"data_encoding"`
	Mzxid        int64     `json:"mzxid"`
	Czxid        int64     `json:"czxid"`
	Version      int32     `json:"version"`
	Session      string    `json:"session"`
	Nodes        *int      `json:"nodes"`
}

func (e watchEvent) String() string {
	d := "<none>"
	if e.Data != nil {
		d = strconv.Quote(*e.Data)
	}
	return fmt.Sprintf("%s %s data=%s mzxid=%d", e.Type, e.Path, d, e.Mzxid)
}

// event returns the next event of watch --json.
func (r *running) event(what string) watchEvent {
	r.t.Helper()
	l := r.next(what)
	var e watchEvent
	if err := json.Unmarshal([]byte(l), &e); err != nil {
		r.t.Fatalf("%s: not a JSON line: %v\n%s", what, err, l)
	}
	if e.Time.IsZero() || e.Type == "" || e.Path == "" {
		r.t.Fatalf("%s: incomplete line %s", what, l)
	}
	return e
}

// expect checks that the next event is typ at path, with data (nil: not
// checked) and the node's current mzxid (read with c, unless deleted).
func (r *running) expect(c *framework.Client, typ, path string, data *string) watchEvent {
	r.t.Helper()
	e := r.event(typ + " " + path)
	if e.Type != typ || e.Path != path {
		r.t.Fatalf("got %v, want %s %s", e, typ, path)
	}
	if data != nil && (e.Data == nil || *e.Data != *data || e.DataSize == nil || int(*e.DataSize) != len(*data)) {
		r.t.Fatalf("got %v, want data %q", e, *data)
	}
	if typ != "deleted" {
		st := stat(r.t, c, path)
		if e.Mzxid != st.Mzxid || e.Czxid != st.Czxid || e.Version != st.Version {
			r.t.Fatalf("got %v (czxid %d version %d), want the node's mzxid %d czxid %d version %d", e, e.Czxid, e.Version, st.Mzxid, st.Czxid, st.Version)
		}
	}
	return e
}

func ptr(s string) *string { return &s }

// watch --json prints the nodes as they load, "initialized" with their
// count, then each change as it happens, with the node's data and mzxid;
// Ctrl-C ends it with status 0.
func testWatchEvents(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	c := newClient(t, e)
	root := e.path(t)
	for _, p := range []string{root, root + "/a"} {
		if _, err := c.Create(ctx, p, []byte("one"), framework.WithParents()); err != nil {
			t.Fatal(err)
		}
	}
	r := start(t, e.srv.ConnectString(), "watch", "--json", root)
	r.expect(c, "created", root, ptr("one"))
	r.expect(c, "created", root+"/a", ptr("one"))
	if ev := r.event("initialized"); ev.Type != "initialized" || ev.Path != root || ev.Nodes == nil || *ev.Nodes != 2 {
		t.Fatalf("got %v (nodes %v), want initialized %s with 2 nodes", ev, ev.Nodes, root)
	}

	if _, err := c.Set(ctx, root+"/a", []byte("two")); err != nil {
		t.Fatal(err)
	}
	r.expect(c, "changed", root+"/a", ptr("two"))
	if _, err := c.Create(ctx, root+"/a/b", []byte{0xff, 0}, framework.WithMode(framework.ModeEphemeral)); err != nil {
		t.Fatal(err)
	}
	ev := r.expect(c, "created", root+"/a/b", nil)
	if ev.Data == nil || *ev.Data != "ff00" || ev.DataEncoding != "hex" || ev.Session != sessionOf(c) {
		t.Fatalf("binary data of an ephemeral node: %v encoding %q session %s, want hex ff00 of session %s", ev, ev.DataEncoding, ev.Session, sessionOf(c))
	}
	if err := c.Delete(ctx, root+"/a/b"); err != nil {
		t.Fatal(err)
	}
	r.expect(c, "deleted", root+"/a/b", nil)
	r.interrupt(func(l string) { t.Errorf("printed after the last change: %s", l) })
}

// --summary prints the initial load as one line; --max-depth bounds what
// is watched; --no-data prints stats only. The table's lines carry the
// type, path, size and mzxid.
func testWatchOptions(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	c := newClient(t, e)
	root := e.path(t)
	for _, p := range []string{root + "/a/deep", root + "/b"} {
		if _, err := c.Create(ctx, p, []byte("data"), framework.WithParents()); err != nil {
			t.Fatal(err)
		}
	}
	r := start(t, e.srv.ConnectString(), "watch", "--summary", "--max-depth", "1", "--no-data", root)
	if l := r.next("the summary"); !regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} initialized +` + regexp.QuoteMeta(root) + `  nodes=3$`).MatchString(l) {
		t.Fatalf("first line %q, want the summary: initialized %s  nodes=3 (root, a, b)", l, root)
	}
	if _, err := c.Set(ctx, root+"/a/deep", []byte("below the depth")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, root+"/b", []byte("seen")); err != nil {
		t.Fatal(err)
	}
	st := stat(t, c, root+"/b")
	want := fmt.Sprintf("changed     %s  size=4 mzxid=0x%x", root+"/b", st.Mzxid)
	if l := r.next("b changed"); !strings.HasSuffix(l, want) {
		t.Fatalf("line %q, want it to end %q (no data: --no-data; a/deep is below --max-depth)", l, want)
	}
	r.interrupt(func(l string) { t.Errorf("printed after the last change: %s", l) })

	if r := e.run(t, "watch", root, "--max-depth", "-2"); r.code != 2 || !strings.Contains(r.stderr, "--max-depth -2") {
		t.Errorf("--max-depth -2: %s", r)
	}
	if r := e.run(t, "watch", root+"/missing"); r.code != 1 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("a missing path: %s", r)
	}
}

// When its session is lost the command says so, reads everything again
// once connected, prints only what changed meanwhile, then "rebuilt".
func testWatchSessionLoss(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	c := newClient(t, e)
	root := e.path(t)
	for _, p := range []string{root + "/a", root + "/b", root + "/c"} {
		if _, err := c.Create(ctx, p, []byte("before"), framework.WithParents()); err != nil {
			t.Fatal(err)
		}
	}
	px := zktest.StartProxy(t, e.srv.Addr())
	r := start(t, px.Addr()+e.srv.Chroot(), "watch", "--json", "--summary", "--session-timeout", "3s", root)
	m := r.awaitErr(regexp.MustCompile(`as session (0x[0-9a-f]+)`))
	sid, err := strconv.ParseUint(strings.TrimPrefix(m[1], "0x"), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if ev := r.event("initialized"); ev.Type != "initialized" || ev.Nodes == nil || *ev.Nodes != 4 {
		t.Fatalf("got %v, want initialized with 4 nodes", ev)
	}
	if err := zktest.ExpireSession(ctx, px, e.srv, int64(sid)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, root+"/a", []byte("while lost")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, root+"/c"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for {
		ev := r.event("the rebuild")
		if ev.Type == "rebuilt" {
			if ev.Nodes == nil || *ev.Nodes != 3 {
				t.Fatalf("rebuilt with %v nodes, want 3", ev.Nodes)
			}
			break
		}
		seen[ev.Path] = ev.Type
	}
	if want := map[string]string{root + "/a": "changed", root + "/c": "deleted"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("before rebuilt: %v, want only the real differences %v", seen, want)
	}
	r.awaitErr(regexp.MustCompile(`session lost`))
	r.interrupt(func(l string) { t.Errorf("printed after the rebuild: %s", l) })
}
