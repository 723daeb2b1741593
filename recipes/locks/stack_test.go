package locks_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocurator/curator/internal/testenv"
)

// stackBudget is the most goroutine stack a parked waiter may take, on
// average over a thousand. With goroutines started at the runtime's
// fixed 2 KiB (the child runs with GODEBUG=adaptivestackstart=0, so that
// what the last collection saw does not choose it), a waiter's deepest
// calls grow its stack once, to 4 KiB: 4096–4227 B per waiter in 47 runs,
// 30 of them six at a time, 18 of those beside two CPU burners (the few
// over 4096 are waiters whose deepest call met the runtime's allocation
// slow path, which grew them to 8 KiB). A frame made larger on that chain (the retry loop's): by 256 B,
// no change; by 512 B, 4686 B (one waiter in seven grown); by 1 KiB, every
// one, 8192 B. The budget lets one in eight grow.
const stackBudget = 4608

// stackChild marks the go test that TestParkedWaitersKeepSmallStacks runs.
const stackChild = "GOCURATOR_STACK_CHILD"

// TestParkedWaitersKeepSmallStacks guards the memory of many waiters in one
// process (issue 16: 10,000 under 150 MB). The deepest calls of a wait (the
// protected create; the watched read of the predecessor, under
// go-zookeeper's request and the runtime's allocation slow path) come
// within a few hundred bytes of a 4 KiB stack (stop 26); one frame more
// on them would double every waiter's stack, and nothing else would fail.
// It measures in a child go test of this package: built without the race
// detector, which doubles the stack guard so that every such stack grows,
// and with a fixed starting stack.
func TestParkedWaitersKeepSmallStacks(t *testing.T) {
	if os.Getenv(stackChild) == "" {
		runStackChild(t)
		return
	}
	c := testenv.Client(t, testenv.Shared().ConnectString())
	grown, parked := parkWaiters(t, c, 1000)
	t.Logf("goroutine stack per parked waiter: %.0f B as they queue, %.0f B after a collection", grown, parked)
	if grown > stackBudget {
		t.Errorf("parked waiters take %.0f B of stack each, over the budget of %d B: a call on a waiter's deepest chain grows its stack past 4 KiB", grown, stackBudget)
	}
}

// runStackChild runs the calling test in a go test of this package, built
// without the race detector and started with a fixed goroutine stack; it
// fails with the child's output if the child fails.
func runStackChild(t *testing.T) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the test runs itself in a child go test, and go is not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*testenv.WaitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "test", "-count=1", "-v", "-run", "^"+t.Name()+"$", ".")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GODEBUG=") { // a -race there would win; GODEBUG is ours
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, stackChild+"=1", "GODEBUG=adaptivestackstart=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child go test: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "stack per parked waiter") {
			t.Log(strings.TrimSpace(line))
			return
		}
	}
	t.Fatalf("the child go test measured nothing:\n%s", out)
}
