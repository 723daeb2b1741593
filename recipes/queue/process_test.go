package queue_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/queue"
)

// childEnv, set, makes the test binary a child of TestDeliveryUnderSIGKILL:
// "producer <connect> <path> <name> <n>" or "consumer <connect> <path> <lock path or -> <trap path>".
const childEnv = "GOCURATOR_QUEUE_CHILD"

// childMain runs a producer (puts n items "<name>-<i>", prints "done",
// exits) or a consumer (prints "got <item>" for each item it consumes,
// before its consumer returns nil; runs until killed). A trap item (isTrap)
// is held by the first consumer that gets it: it marks it under the trap
// path, prints "hold <item>" and waits to be killed mid-item.
func childMain() int {
	args := strings.Fields(os.Getenv(childEnv))
	c, err := framework.New(args[1], framework.WithSessionTimeout(testenv.SessionTimeout),
		framework.WithRetryPolicy(testenv.Patient{}))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer c.Close()
	ctx := context.Background()
	switch args[0] {
	case "producer":
		q, err := queue.New[string](c, args[2], queue.String{}, nil)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		n, _ := strconv.Atoi(args[4])
		fmt.Println("started")
		for i := range n {
			if err := q.Put(ctx, fmt.Sprintf("%s-%d", args[3], i)); err != nil {
				fmt.Println("error", err)
				return 1
			}
		}
		fmt.Println("done")
		return 0
	case "consumer":
		var opts []queue.Option
		if args[3] != "-" {
			opts = append(opts, queue.WithLockPath(args[3]))
		}
		q, err := queue.New(c, args[2], queue.String{}, func(ctx context.Context, v string) error {
			if isTrap(v) {
				_, err := c.Create(ctx, args[4]+"/"+v, nil, framework.WithParents())
				if err == nil {
					fmt.Println("hold", v)
					select {} // until SIGKILL
				}
				if !errors.Is(err, zk.ErrNodeExists) {
					fmt.Println("error", err)
				}
			}
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond) // room for a kill mid-item
			fmt.Println("got", v)
			return nil
		}, append(opts, queue.WithConcurrency(2))...)
		if err == nil {
			err = q.Start(ctx)
		}
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("started")
		select {} // until SIGKILL
	}
	return 1
}

// isTrap tells the items whose first consumer is killed while it holds
// them: two per producer.
func isTrap(item string) bool {
	return strings.HasSuffix(item, "-10") || strings.HasSuffix(item, "-60")
}

// child is a running child process.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once its output is read and it exited
}

// scene is the delivery test's bookkeeping: what each consumer printed.
type scene struct {
	t       *testing.T
	connect string
	path    string
	lock    string

	mu    sync.Mutex
	got   map[string]int // item -> times consumed
	errs  []string
	holds chan *child // consumers that hold a trap item
}

func (s *scene) start(args string) *child {
	s.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+args)
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	ch := &child{cmd: cmd, done: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		defer close(ch.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			switch {
			case strings.HasPrefix(line, "got "):
				s.got[strings.TrimPrefix(line, "got ")]++
			case strings.HasPrefix(line, "hold "):
				s.holds <- ch
			case line == "started":
				close(started)
			case line == "done":
			default:
				s.errs = append(s.errs, line)
			}
			s.mu.Unlock()
		}
		cmd.Wait()
	}()
	s.t.Cleanup(func() { cmd.Process.Kill(); <-ch.done })
	select {
	case <-started:
	case <-ch.done:
	case <-time.After(testenv.WaitShort):
		s.t.Fatalf("child %q did not start", args)
	}
	return ch
}

func (s *scene) kill(c *child) {
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// TestDeliveryUnderSIGKILL proves each mode's guarantee: 8 producer and 8
// consumer processes, consumers killed with SIGKILL at random (and replaced)
// while items flow. With a lock path, every item put is consumed at least
// once; without, at most once; in both, no item is consumed that was not put.
func TestDeliveryUnderSIGKILL(t *testing.T) {
	for _, mode := range []string{"lock path: at least once", "no lock path: at most once"} {
		t.Run(strings.Fields(mode)[0]+strings.Fields(mode)[1], func(t *testing.T) {
			deliveryUnderSIGKILL(t, strings.HasPrefix(mode, "lock"))
		})
	}
}

func deliveryUnderSIGKILL(t *testing.T, locked bool) {
	const producers, consumers, perProducer, traps = 8, 8, 100, 16
	c := newClient(t, testenv.Shared().ConnectString())
	s := &scene{t: t, connect: testenv.Shared().ConnectString(), path: queuePath(t), lock: "-",
		got: map[string]int{}, holds: make(chan *child, 64)}
	if locked {
		s.lock = s.path + "-locks"
	}
	consumerArgs := fmt.Sprintf("consumer %s %s %s %s", s.connect, s.path, s.lock, s.path+"-traps")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitShort)
		defer cancel()
		c.Delete(ctx, s.path+"-traps", framework.WithChildren(), framework.WithIgnoreMissing())
	})
	cons := map[*child]bool{}
	for range consumers {
		cons[s.start(consumerArgs)] = true
	}
	var prods []*child
	for i := range producers {
		prods = append(prods, s.start(fmt.Sprintf("producer %s %s p%d %d", s.connect, s.path, i, perProducer)))
	}
	// Kill each consumer that holds a trap item, mid-item, and replace it,
	// until the queue is drained: all producers done, every trap held,
	// no item left (with a lock path, the items of killed consumers come
	// back once their sessions expire).
	deadline := time.Now().Add(testenv.WaitLong)
	for kills := 0; ; {
		select {
		case h := <-s.holds:
			s.kill(h)
			delete(cons, h)
			cons[s.start(consumerArgs)] = true
			kills++
			continue
		case <-time.After(20 * time.Millisecond): // a polling interval
		}
		if kills == traps && producersDone(prods) {
			if n, err := queueLen(c, s.path); err == nil && n == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not drained within %v: %d kills", testenv.WaitLong, kills)
		}
	}
	for _, p := range prods {
		if p.cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("a producer failed")
		}
	}
	for cc := range cons {
		s.kill(cc)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) > 0 {
		t.Fatalf("children printed: %v", s.errs)
	}
	put := map[string]bool{}
	for p := range producers {
		for i := range perProducer {
			put[fmt.Sprintf("p%d-%d", p, i)] = true
		}
	}
	missing, twice := 0, 0
	for item := range put {
		switch n := s.got[item]; {
		case n == 0:
			missing++
			if locked {
				t.Errorf("at least once: item %s never consumed", item)
			}
		case !locked && isTrap(item):
			t.Errorf("at most once: trap item %s consumed after its consumer was killed with it", item)
		case n > 1:
			twice++
		}
	}
	for item := range s.got {
		if !put[item] {
			t.Errorf("item %q consumed but never put", item)
		}
	}
	t.Logf("%d items, %d consumers killed mid-item: %d consumed twice or more, %d never", len(put), traps, twice, missing)
	if !locked && twice > 0 {
		t.Errorf("at most once: %d items consumed more than once", twice)
	}
}

func producersDone(ps []*child) bool {
	for _, p := range ps {
		if !testenv.IsClosed(p.done) {
			return false
		}
	}
	return true
}

func queueLen(c *framework.Client, path string) (int, error) {
	q, err := queue.New[string](c, path, queue.String{}, nil)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitShort)
	defer cancel()
	return q.Len(ctx)
}
