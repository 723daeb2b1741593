package interop_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

var (
	shared  *zktest.Server
	classes string // compiled CuratorPeer
)

const javaDir = "/usr/share/java"

var curatorJars = []string{"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar"}

func classpath() string {
	var cp []string
	for _, j := range curatorJars {
		cp = append(cp, filepath.Join(javaDir, j))
	}
	return strings.Join(cp, ":")
}

func TestMain(m *testing.M) {
	for _, j := range curatorJars {
		if _, err := os.Stat(filepath.Join(javaDir, j)); err != nil {
			fmt.Fprintf(os.Stderr, "interop tests need Curator's jars (%s missing): apt-get install -y libcurator-recipes-java libcurator-framework-java libcurator-client-java\n", j)
			os.Exit(1)
		}
	}
	dir, err := os.MkdirTemp("", "curatorpeer")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := exec.Command("javac", "-nowarn", "-d", dir, "-cp", classpath(), "testdata/CuratorPeer.java").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "javac CuratorPeer.java: %v\n%s(javac comes with: apt-get install -y default-jdk-headless)\n", err, out)
		os.Exit(1)
	}
	classes = dir
	srv, err := zktest.NewServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop tests need ZooKeeper:", err)
		os.Exit(1)
	}
	shared = srv
	code := m.Run()
	srv.Close()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// peer is one Java process running Curator 5.4, driven line by line.
type peer struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

func startPeer(t *testing.T) *peer {
	t.Helper()
	cmd := exec.Command("java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-cp", classes+":"+classpath()+":"+filepath.Join(javaDir, "slf4j-simple.jar"),
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=error", "CuratorPeer")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		fmt.Fprintln(in, "quit")
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		for range p.lines {
		}
	})
	if got := p.do("connect " + shared.ConnectString()); got != "ok" {
		t.Fatalf("Curator peer: connect: %s", got)
	}
	return p
}

// send issues a command; the answer comes on the returned channel.
func (p *peer) send(cmd string) <-chan string {
	p.t.Helper()
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		p.t.Fatal(err)
	}
	ch := make(chan string, 1)
	go func() {
		select {
		case l, ok := <-p.lines:
			if !ok {
				l = "error peer exited"
			}
			ch <- l
		case <-time.After(60 * time.Second):
			ch <- "error no answer in 60s"
		}
	}()
	return ch
}

// do issues a command and waits for its answer.
func (p *peer) do(cmd string) string { return <-p.send(cmd) }

func (p *peer) must(cmd string) string {
	p.t.Helper()
	got := p.do(cmd)
	if !strings.HasPrefix(got, "ok") {
		p.t.Fatalf("Curator peer: %s: %s", cmd, got)
	}
	return strings.TrimSpace(strings.TrimPrefix(got, "ok"))
}

func newClient(t *testing.T) *framework.Client {
	t.Helper()
	c, err := framework.New(shared.ConnectString(), framework.WithSessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// stillWaiting fails if ch delivers within d: a negative check, bounded.
func stillWaiting[T any](t *testing.T, ch <-chan T, d time.Duration, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s did not wait: %v", what, v)
	case <-time.After(d):
	}
}
