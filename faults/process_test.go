package faults_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

const childEnv = "GOCURATOR_FAULTS_CHILD"

// childMain runs in a child process: it takes the lock named in the
// environment, prints "held <token>" and waits to be killed.
func childMain() int {
	c, path, err := childClient(childEnv)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	m, err := locks.NewMutex(c, path)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		fmt.Println("error", err)
		return 1
	}
	tok, err := m.FencingToken(ctx)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("held", tok)
	select {} // until SIGKILL
}

// childClient, in a child process, connects to the ensemble named in the
// environment variable env ("<connect string> <path>") and returns the path.
func childClient(env string) (*framework.Client, string, error) {
	args := strings.SplitN(os.Getenv(env), " ", 2)
	c, err := framework.New(args[0], framework.WithSessionTimeout(testenv.SessionTimeout))
	return c, args[1], err
}

// startChild runs this test binary as a child process with env naming
// connectString and path (for childClient), reads the "<prefix> <token>"
// line the child prints, and returns the child's command and the token;
// the child is killed at clean-up.
func startChild(t *testing.T, env, connectString, path, prefix string) (*exec.Cmd, int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+connectString+" "+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, prefix+" ") {
		t.Fatalf("child: %q %v", line, err)
	}
	token, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, prefix+" ")), 10, 64)
	return cmd, token
}

// A holder process killed with SIGKILL: the lock passes on after the
// session timeout, to a waiter that kept its own session, with a higher token.
func TestFaultsHolderKilled(t *testing.T) {
	cl := zktest.StartCluster(t, 3)
	const path = "/faults/killed"
	cmd, childToken := startChild(t, childEnv, cl.ConnectString(), path, "held")

	c := connect(t, cl.ConnectString())
	m, err := locks.NewMutex(c, path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan error, 1)
	go func() { got <- m.Lock(ctx) }()
	testenv.WaitFor(t, 30*time.Second, "the waiter to queue", func() bool {
		kids, _, err := c.Children(ctx, path)
		return err == nil && len(kids) == 2
	})
	session := c.Session()
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	took := time.Since(killed)
	tok, err := m.FencingToken(ctx)
	if err != nil || tok <= childToken {
		t.Fatalf("token %d (child had %d): %v", tok, childToken, err)
	}
	if c.Session() != session || session.Lost() {
		t.Fatal("the waiter's own session was lost too")
	}
	// The handover's time is logged, not judged (a loaded machine stretches
	// it); Lock's minute is the bound only a hang reaches.
	t.Logf("SIGKILLed holder: lock passed on after %v (session timeout %v)", took.Round(10*time.Millisecond), testenv.SessionTimeout)
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
