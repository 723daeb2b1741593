package leader_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/leader"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var latchNodeRE = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-latch-\d{10}$`)

func newElection(t testing.TB, c *framework.Client, path, id string, opts ...leader.Option) *leader.Election {
	t.Helper()
	e, err := leader.NewElection(c, path, id, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// campaign runs Campaign on a goroutine; its outcome comes on the channel.
type outcome struct {
	ctx context.Context
	err error
}

func campaign(ctx context.Context, e *leader.Election) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		lctx, err := e.Campaign(ctx)
		ch <- outcome{lctx, err}
	}()
	return ch
}

func won(t testing.TB, ch <-chan outcome, who string) context.Context {
	t.Helper()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("%s's Campaign: %v", who, o.err)
		}
		return o.ctx
	case <-testenv.Ctx(t, testenv.WaitLong).Done():
		t.Fatalf("%s never led", who)
		return nil
	}
}

func waiting(t testing.TB, ch <-chan outcome, who string) {
	t.Helper()
	select {
	case o := <-ch:
		t.Fatalf("%s's Campaign returned (%v) while another leads", who, o.err)
	default:
	}
}

// next receives the next value of an observer.
func next(t testing.TB, ch <-chan leader.Leader) leader.Leader {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatal("the observer's channel closed")
		}
		return l
	case <-testenv.Ctx(t, testenv.WaitShort).Done():
		t.Fatal("no change observed")
		return leader.Leader{}
	}
}

// observeUntil receives from an observer until want(l) holds.
func observeUntil(t testing.TB, ch <-chan leader.Leader, what string, want func(leader.Leader) bool) leader.Leader {
	t.Helper()
	for {
		l := next(t, ch)
		if want(l) {
			return l
		}
		t.Logf("observed %+v while waiting for %s", l, what)
	}
}

func isDone(ctx context.Context) bool { return ctx.Err() != nil }

func causeIs(ctx context.Context, target error) bool { return errors.Is(context.Cause(ctx), target) }
