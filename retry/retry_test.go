package retry_test

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/retry"
)

func TestConstructorArguments(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		new  func() (retry.Policy, error)
		ok   bool
	}{
		{"exponential", func() (retry.Policy, error) { return retry.NewExponentialBackoff(ms, 3) }, true},
		{"exponential no retries", func() (retry.Policy, error) { return retry.NewExponentialBackoff(ms, 0) }, true},
		{"exponential max = base", func() (retry.Policy, error) { return retry.NewExponentialBackoff(ms, 3, retry.WithMaxSleep(ms)) }, true},
		{"exponential nil option", func() (retry.Policy, error) { return retry.NewExponentialBackoff(ms, 3, nil) }, true},
		{"exponential base 0", func() (retry.Policy, error) { return retry.NewExponentialBackoff(0, 3) }, false},
		{"exponential base < 0", func() (retry.Policy, error) { return retry.NewExponentialBackoff(-ms, 3) }, false},
		{"exponential retries < 0", func() (retry.Policy, error) { return retry.NewExponentialBackoff(ms, -1) }, false},
		{"exponential max < base", func() (retry.Policy, error) { return retry.NewExponentialBackoff(2*ms, 3, retry.WithMaxSleep(ms)) }, false},
		{"exponential max 0", func() (retry.Policy, error) { return retry.NewExponentialBackoff(ms, 3, retry.WithMaxSleep(0)) }, false},
		{"exponential max < 0", func() (retry.Policy, error) { return retry.NewExponentialBackoff(ms, 3, retry.WithMaxSleep(-ms)) }, false},
		{"bounded", func() (retry.Policy, error) { return retry.NewBoundedExponentialBackoff(ms, time.Second, 3) }, true},
		{"bounded base 0", func() (retry.Policy, error) { return retry.NewBoundedExponentialBackoff(0, time.Second, 3) }, false},
		{"bounded max 0", func() (retry.Policy, error) { return retry.NewBoundedExponentialBackoff(ms, 0, 3) }, false},
		{"bounded max < base", func() (retry.Policy, error) { return retry.NewBoundedExponentialBackoff(time.Second, ms, 3) }, false},
		{"bounded retries < 0", func() (retry.Policy, error) { return retry.NewBoundedExponentialBackoff(ms, time.Second, -1) }, false},
		{"ntimes", func() (retry.Policy, error) { return retry.NewNTimes(0, 0) }, true},
		{"ntimes n < 0", func() (retry.Policy, error) { return retry.NewNTimes(-1, ms) }, false},
		{"ntimes sleep < 0", func() (retry.Policy, error) { return retry.NewNTimes(1, -ms) }, false},
		{"onetime", func() (retry.Policy, error) { return retry.NewOneTime(0) }, true},
		{"onetime sleep < 0", func() (retry.Policy, error) { return retry.NewOneTime(-ms) }, false},
		{"until elapsed", func() (retry.Policy, error) { return retry.NewUntilElapsed(0, 0) }, true},
		{"until elapsed max < 0", func() (retry.Policy, error) { return retry.NewUntilElapsed(-ms, ms) }, false},
		{"until elapsed sleep < 0", func() (retry.Policy, error) { return retry.NewUntilElapsed(ms, -ms) }, false},
		{"forever", func() (retry.Policy, error) { return retry.NewForever(1) }, true},
		{"forever 0", func() (retry.Policy, error) { return retry.NewForever(0) }, false},
		{"forever < 0", func() (retry.Policy, error) { return retry.NewForever(-ms) }, false},
		{"backoff", func() (retry.Policy, error) {
			return retry.FromBackOff(func() backoff.BackOff { return backoff.NewExponentialBackOff() })
		}, true},
		{"backoff nil factory", func() (retry.Policy, error) { return retry.FromBackOff(nil) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.new()
			if tc.ok {
				if err != nil || p == nil {
					t.Fatalf("got (%v, %v), want a policy", p, err)
				}
				return
			}
			if !errors.Is(err, curator.ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// TestExponentialBounds draws many sleeps and checks Curator's range
// [base, base×2^(n+1)), whole base units, every value reached.
func TestExponentialBounds(t *testing.T) {
	const base, retries = 10 * time.Millisecond, 6
	e, err := retry.NewExponentialBackoff(base, retries)
	if err != nil {
		t.Fatal(err)
	}
	for n := range retries {
		seen := map[time.Duration]bool{}
		for range 5000 {
			d, ok := e.Next(n, 0)
			if !ok {
				t.Fatalf("retry %d refused", n)
			}
			if d < base || d >= base<<(n+1) || d%base != 0 {
				t.Fatalf("retry %d slept %v, outside whole units of [%v, %v)", n, d, base, base<<(n+1))
			}
			seen[d] = true
		}
		// max(1, IntN(2^(n+1))) takes every value in [1, 2^(n+1)).
		if want := 1<<(n+1) - 1; len(seen) != want {
			t.Errorf("retry %d: %d distinct sleeps, want %d", n, len(seen), want)
		}
	}
	for _, n := range []int{retries, retries + 1, -1} {
		if d, ok := e.Next(n, 0); ok || d != 0 {
			t.Errorf("Next(%d) = (%v, %v), want (0, false)", n, d, ok)
		}
	}
}

// TestExponentialDraws fixes the random draw to check the formula exactly.
func TestExponentialDraws(t *testing.T) {
	const ms = time.Millisecond
	largest := func(n int) int { return n - 1 }
	for _, tc := range []struct {
		name      string
		base, max time.Duration // max 0: no cap
		retry     int
		draw      func(int) int
		want      time.Duration
		wantBound int // the argument IntN must see
	}{
		{"zero draw is one unit", ms, 0, 3, func(int) int { return 0 }, ms, 16},
		{"draw of 5 units", ms, 0, 3, func(int) int { return 5 }, 5 * ms, 16},
		{"largest draw", ms, 0, 3, largest, 15 * ms, 16},
		{"first retry", ms, 0, 0, largest, ms, 2},
		{"largest draw capped", ms, 10 * ms, 3, largest, 10 * ms, 16},
		{"at the cap", ms, 15 * ms, 3, largest, 15 * ms, 16},
		{"retry 28", ms, 0, 28, largest, (1<<29 - 1) * ms, 1 << 29},
		{"overflow saturates", time.Hour, 0, 28, largest, math.MaxInt64, 1 << 29},
		{"overflow capped", time.Hour, 2 * time.Hour, 28, largest, 2 * time.Hour, 1 << 29},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []retry.ExponentialOption
			if tc.max > 0 {
				opts = append(opts, retry.WithMaxSleep(tc.max))
			}
			e, err := retry.NewExponentialBackoff(tc.base, 29, opts...)
			if err != nil {
				t.Fatal(err)
			}
			var bound int
			retry.SetIntN(e, func(n int) int { bound = n; return tc.draw(n) })
			d, ok := e.Next(tc.retry, 0)
			if !ok || d != tc.want {
				t.Errorf("Next(%d) = (%v, %v), want (%v, true)", tc.retry, d, ok, tc.want)
			}
			if bound != tc.wantBound {
				t.Errorf("IntN(%d), want IntN(%d)", bound, tc.wantBound)
			}
		})
	}
}

func TestExponentialPinsRetries(t *testing.T) {
	for _, tc := range []struct{ retries, want int }{
		{0, 0}, {1, 1}, {28, 28}, {29, 29}, {30, 29}, {1000, 29}, {math.MaxInt, 29},
	} {
		e, err := retry.NewExponentialBackoff(time.Millisecond, tc.retries)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.MaxRetries(); got != tc.want {
			t.Errorf("MaxRetries() of %d = %d, want %d", tc.retries, got, tc.want)
		}
		if _, ok := e.Next(tc.want, 0); ok {
			t.Errorf("%d retries: retry %d allowed", tc.retries, tc.want)
		}
		if tc.want > 0 {
			if _, ok := e.Next(tc.want-1, 0); !ok {
				t.Errorf("%d retries: retry %d refused", tc.retries, tc.want-1)
			}
		}
	}
}

func TestBoundedExponentialCaps(t *testing.T) {
	const base, maxSleep = time.Millisecond, 20 * time.Millisecond
	b, err := retry.NewBoundedExponentialBackoff(base, maxSleep, 100)
	if err != nil {
		t.Fatal(err)
	}
	if b.MaxRetries() != retry.MaxRetriesLimit {
		t.Fatalf("MaxRetries() = %d, want %d", b.MaxRetries(), retry.MaxRetriesLimit)
	}
	capped := false
	for n := range retry.MaxRetriesLimit {
		for range 200 {
			d, ok := b.Next(n, 0)
			if !ok || d < base || d > maxSleep {
				t.Fatalf("retry %d: (%v, %v), want a sleep in [%v, %v]", n, d, ok, base, maxSleep)
			}
			capped = capped || d == maxSleep
		}
	}
	if !capped {
		t.Error("no sleep reached the cap")
	}
}

func TestFixedPolicies(t *testing.T) {
	const sleep = time.Second
	must := func(p retry.Policy, err error) retry.Policy {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	n3 := must(retry.NewNTimes(3, sleep))
	n0 := must(retry.NewNTimes(0, sleep))
	one := must(retry.NewOneTime(sleep))
	until := must(retry.NewUntilElapsed(time.Minute, sleep))
	forever := must(retry.NewForever(sleep))
	for _, tc := range []struct {
		name    string
		p       retry.Policy
		retry   int
		elapsed time.Duration
		ok      bool
	}{
		{"ntimes first", n3, 0, 0, true},
		{"ntimes last", n3, 2, time.Hour, true},
		{"ntimes past n", n3, 3, 0, false},
		{"ntimes negative", n3, -1, 0, false},
		{"ntimes zero", n0, 0, 0, false},
		{"onetime first", one, 0, 0, true},
		{"onetime second", one, 1, 0, false},
		{"until elapsed start", until, 0, 0, true},
		{"until elapsed before", until, 1 << 40, time.Minute - 1, true},
		{"until elapsed at", until, 0, time.Minute, false},
		{"until elapsed after", until, 1, time.Hour, false},
		{"forever first", forever, 0, 0, true},
		{"forever late", forever, math.MaxInt, math.MaxInt64, true},
		{"never", retry.Never, 0, 0, false},
	} {
		d, ok := tc.p.Next(tc.retry, tc.elapsed)
		want := time.Duration(0)
		if tc.ok {
			want = sleep
		}
		if ok != tc.ok || d != want {
			t.Errorf("%s: Next(%d, %v) = (%v, %v), want (%v, %v)", tc.name, tc.retry, tc.elapsed, d, ok, want, tc.ok)
		}
	}
}

func TestFromBackOff(t *testing.T) {
	const ms = time.Millisecond
	exp := func() backoff.BackOff {
		b := backoff.NewExponentialBackOff()
		b.InitialInterval, b.Multiplier, b.RandomizationFactor = 10*ms, 2, 0
		b.MaxInterval = 50 * ms
		return backoff.WithMaxRetries(b, 4)
	}
	constant := func() backoff.BackOff { return backoff.NewConstantBackOff(7 * ms) }
	for _, tc := range []struct {
		name  string
		new   func() backoff.BackOff
		retry int
		want  time.Duration
		ok    bool
	}{
		{"exponential first", exp, 0, 10 * ms, true},
		{"exponential second", exp, 1, 20 * ms, true},
		{"exponential third", exp, 2, 40 * ms, true},
		{"exponential capped", exp, 3, 50 * ms, true},
		{"exponential stopped", exp, 4, 0, false},
		{"negative retry", exp, -1, 0, false},
		{"constant", constant, 1000, 7 * ms, true},
		{"stop", func() backoff.BackOff { return &backoff.StopBackOff{} }, 0, 0, false},
		{"zero", func() backoff.BackOff { return &backoff.ZeroBackOff{} }, 3, 0, true},
		{"nil backoff", func() backoff.BackOff { return nil }, 0, 0, false},
	} {
		p, err := retry.FromBackOff(tc.new)
		if err != nil {
			t.Fatal(err)
		}
		// Asked twice: the policy keeps no state between decisions.
		for range 2 {
			if d, ok := p.Next(tc.retry, 0); d != tc.want || ok != tc.ok {
				t.Errorf("%s: Next(%d) = (%v, %v), want (%v, %v)", tc.name, tc.retry, d, ok, tc.want, tc.ok)
			}
		}
	}
}

// TestConcurrentUse shares each policy among goroutines (for -race), and
// each goroutine must get what one goroutine alone gets: a policy keeps no
// state between decisions. The exponential policies draw from a fixed
// source here (the largest draw) so that their answers can be compared;
// with their random source, shared too, each answer must lie in the
// documented range.
func TestConcurrentUse(t *testing.T) {
	top := func(n int) int { return n - 1 }
	exp, _ := retry.NewExponentialBackoff(time.Millisecond, 10)
	retry.SetIntN(exp, top)
	bounded, _ := retry.NewBoundedExponentialBackoff(time.Millisecond, 5*time.Millisecond, 10)
	retry.SetIntN(bounded, top)
	n, _ := retry.NewNTimes(5, time.Millisecond)
	until, _ := retry.NewUntilElapsed(time.Second, time.Millisecond)
	forever, _ := retry.NewForever(time.Millisecond)
	fb, _ := retry.FromBackOff(func() backoff.BackOff {
		b := backoff.NewExponentialBackOff()
		b.RandomizationFactor = 0
		return backoff.WithMaxRetries(b, 8)
	})
	policies := []retry.Policy{exp, bounded, n, until, forever, retry.Never, fb}
	randExp, _ := retry.NewExponentialBackoff(time.Millisecond, 10)
	randBounded, _ := retry.NewBoundedExponentialBackoff(time.Millisecond, 5*time.Millisecond, 10)

	type answer struct {
		d  time.Duration
		ok bool
	}
	const rounds = 500
	ask := func(p retry.Policy, i int) answer {
		d, ok := p.Next(i%12, time.Duration(i)*time.Millisecond)
		return answer{d, ok}
	}
	want := make([][]answer, len(policies))
	for j, p := range policies {
		for i := range rounds {
			want[j] = append(want[j], ask(p, i))
		}
	}
	// inRange is the exponential formula's range for retry n (capped).
	inRange := func(a answer, n int, maxSleep time.Duration) bool {
		if n >= 10 {
			return !a.ok && a.d == 0
		}
		hi := min(time.Millisecond*time.Duration(1<<(n+1)-1), maxSleep)
		return a.ok && a.d >= time.Millisecond && a.d <= hi
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				for j, p := range policies {
					if got := ask(p, i); got != want[j][i] {
						t.Errorf("policy %d (%T), round %d: %v concurrently, %v alone", j, p, i, got, want[j][i])
						return
					}
				}
				if a := ask(randExp, i); !inRange(a, i%12, time.Duration(math.MaxInt64)) {
					t.Errorf("exponential, retry %d: %v, out of range", i%12, a)
					return
				}
				if a := ask(randBounded, i); !inRange(a, i%12, 5*time.Millisecond) {
					t.Errorf("bounded exponential, retry %d: %v, out of range", i%12, a)
					return
				}
			}
		}()
	}
	wg.Wait()
}
