package retry

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

func TestConstructorsRejectBadArguments(t *testing.T) {
	for name, f := range map[string]func() error{
		"exp base 0":     func() error { _, err := NewExponentialBackoff(0, 3); return err },
		"exp base <0":    func() error { _, err := NewExponentialBackoff(-time.Second, 3); return err },
		"exp retries <0": func() error { _, err := NewExponentialBackoff(time.Second, -1); return err },
		"exp max < base": func() error {
			_, err := NewExponentialBackoff(time.Second, 3, WithMaxSleep(time.Millisecond))
			return err
		},
		"exp max <0":          func() error { _, err := NewExponentialBackoff(time.Second, 3, WithMaxSleep(-1)); return err },
		"bounded max 0":       func() error { _, err := NewBoundedExponentialBackoff(time.Second, 0, 3); return err },
		"bounded max < base":  func() error { _, err := NewBoundedExponentialBackoff(time.Second, time.Millisecond, 3); return err },
		"ntimes n<0":          func() error { _, err := NewNTimes(-1, time.Second); return err },
		"ntimes sleep<0":      func() error { _, err := NewNTimes(1, -time.Second); return err },
		"onetime sleep<0":     func() error { _, err := NewOneTime(-time.Second); return err },
		"elapsed max<0":       func() error { _, err := NewUntilElapsed(-time.Second, time.Second); return err },
		"elapsed sleep<0":     func() error { _, err := NewUntilElapsed(time.Second, -time.Second); return err },
		"forever 0":           func() error { _, err := NewForever(0); return err },
		"forever <0":          func() error { _, err := NewForever(-time.Second); return err },
		"backoff nil factory": func() error { _, err := FromBackOff(nil); return err },
	} {
		if err := f(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}

func TestExponentialFormula(t *testing.T) {
	base := 10 * time.Millisecond
	e, err := NewExponentialBackoff(base, 5)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 5; n++ {
		seen := map[time.Duration]bool{}
		for i := 0; i < 2000; i++ {
			d, ok := e.Next(n, 0)
			if !ok {
				t.Fatalf("retry %d refused", n)
			}
			if d < base || d >= base*time.Duration(1<<(n+1)) || d%base != 0 {
				t.Fatalf("retry %d slept %v, outside Curator's [base, base*2^(n+1))", n, d)
			}
			seen[d] = true
		}
		if want := (1 << (n + 1)) - 1; len(seen) != want {
			t.Errorf("retry %d: %d distinct sleeps, want %d", n, len(seen), want)
		}
	}
	if _, ok := e.Next(5, 0); ok {
		t.Fatal("retry past maxRetries allowed")
	}
}

func TestExponentialPinsAt29AndCaps(t *testing.T) {
	e, err := NewExponentialBackoff(time.Millisecond, 1000, WithMaxSleep(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxRetries() != 29 {
		t.Fatalf("max retries %d, want 29", e.MaxRetries())
	}
	e.intN = func(n int) int { return n - 1 } // the largest draw
	if d, ok := e.Next(28, 0); !ok || d != 50*time.Millisecond {
		t.Fatalf("capped sleep %v %v", d, ok)
	}
	if _, ok := e.Next(29, 0); ok {
		t.Fatal("30th retry allowed")
	}
	e.intN = func(int) int { return 0 } // Curator's max(1, ...)
	if d, _ := e.Next(3, 0); d != time.Millisecond {
		t.Fatalf("zero draw slept %v, want one base unit", d)
	}
	b, err := NewBoundedExponentialBackoff(time.Millisecond, 4*time.Millisecond, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if d, _ := b.Next(9, 0); d > 4*time.Millisecond {
			t.Fatalf("bounded slept %v", d)
		}
	}
}

func TestFixedPolicies(t *testing.T) {
	n3, _ := NewNTimes(3, time.Second)
	one, _ := NewOneTime(time.Second)
	until, _ := NewUntilElapsed(time.Minute, time.Second)
	forever, _ := NewForever(time.Second)
	for _, tc := range []struct {
		name    string
		p       Policy
		count   int
		elapsed time.Duration
		ok      bool
	}{
		{"ntimes 0", n3, 0, 0, true},
		{"ntimes 2", n3, 2, 0, true},
		{"ntimes 3", n3, 3, 0, false},
		{"onetime 0", one, 0, 0, true},
		{"onetime 1", one, 1, 0, false},
		{"until before", until, 1000, 59 * time.Second, true},
		{"until at", until, 0, time.Minute, false},
		{"forever", forever, 1 << 30, 1000 * time.Hour, true},
		{"never", Never, 0, 0, false},
	} {
		d, ok := tc.p.Next(tc.count, tc.elapsed)
		if ok != tc.ok || (ok && d != time.Second) {
			t.Errorf("%s: (%v, %v), want ok=%v and 1s", tc.name, d, ok, tc.ok)
		}
	}
}

func TestFromBackOff(t *testing.T) {
	p, err := FromBackOff(func() backoff.BackOff {
		return backoff.WithMaxRetries(backoff.NewConstantBackOff(7*time.Millisecond), 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ { // stateless: concurrent operations do not interfere
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 2; n++ {
				if d, ok := p.Next(n, 0); !ok || d != 7*time.Millisecond {
					t.Errorf("retry %d: %v %v", n, d, ok)
				}
			}
			if _, ok := p.Next(2, 0); ok {
				t.Error("third retry allowed")
			}
		}()
	}
	wg.Wait()
}

func TestConcurrentUse(t *testing.T) {
	e, _ := NewExponentialBackoff(time.Millisecond, 10)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				e.Next(i%10, 0)
			}
		}()
	}
	wg.Wait()
}
