package recipe

import (
	"fmt"
	"strings"

	"github.com/gocurator/curator"
)

// Options are the options every recipe that holds something shares; each
// recipe embeds them in its own options and sets them through its own
// Option type (locks.WithData, semaphore.WithData...), so that each setting
// is checked and copied here, once.
type Options struct {
	Data      []byte                // nil: the client's default data
	Policy    curator.SuspendPolicy // when a holding counts as lost
	OnEnqueue func(node string)     // told of each node made, before the wait
	err       error
}

// SetData keeps a copy of data (nil stays nil: the default).
func (o *Options) SetData(data []byte) {
	if data != nil {
		data = append([]byte{}, data...)
	}
	o.Data = data
}

// SetPolicy sets the suspend policy, refusing one that does not exist.
func (o *Options) SetPolicy(p curator.SuspendPolicy) {
	if p != curator.LoseOnSuspend && p != curator.LoseOnLost {
		o.Fail("unknown suspend policy %d", p)
	}
	o.Policy = p
}

// SetOnEnqueue sets the enqueue callback, refusing nil.
func (o *Options) SetOnEnqueue(fn func(node string)) {
	if fn == nil {
		o.Fail("nil WithOnEnqueue function")
	}
	o.OnEnqueue = fn
}

// Fail records the first bad option; Apply returns it.
func (o *Options) Fail(format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("%w: "+format, append([]any{curator.ErrInvalidArgument}, args...)...)
	}
}

// Apply applies a recipe's options to its options struct o (which embeds
// Options) and returns the first bad one's error, wrapping
// curator.ErrInvalidArgument. Nil options are skipped.
func Apply[T interface{ common() *Options }, O ~func(T)](o T, opts []O) error {
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o.common().err
}

func (o *Options) common() *Options { return o }

// NotFor returns an error wrapping curator.ErrInvalidArgument that names
// the options given that a recipe (what) does not take, nil if each
// applies: for a package whose one Option type serves several
// constructors (bit i of given and allowed is the option names[i]).
func NotFor(what string, given, allowed uint64, names []string) error {
	bad := given &^ allowed
	if bad == 0 {
		return nil
	}
	var refused []string
	for i, n := range names {
		if bad&(1<<i) != 0 {
			refused = append(refused, n)
		}
	}
	return fmt.Errorf("%w: %s does not apply to a %s", curator.ErrInvalidArgument, strings.Join(refused, ", "), what)
}
