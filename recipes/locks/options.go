package locks

// SuspendPolicy says when a held lock counts as lost.
type SuspendPolicy int

const (
	// LoseOnSuspend (the default): the lock counts as lost as soon as the
	// connection is SUSPENDED, before the session may have expired on the
	// server: another process may get the lock only after the server expires
	// our session, which comes later, so the holder learns first. This is
	// Curator's StandardConnectionStateErrorPolicy.
	LoseOnSuspend SuspendPolicy = iota
	// LoseOnLost: only a LOST session counts (Curator's
	// SessionConnectionStateErrorPolicy). Between the server expiring the
	// session and the client declaring it lost, another process may hold the
	// lock while this holder has not been told yet: use fencing tokens.
	LoseOnLost
)

type options struct {
	data      []byte
	policy    SuspendPolicy
	onRevoke  func()
	onEnqueue func(node string)
}

// Option configures a Mutex or a ReadWriteLock.
type Option func(*options)

// WithData sets the data stored in our contender nodes (default: the
// client's default data, this host's IP as in Curator).
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte{}, data...) }
}

// WithSuspendPolicy sets when a held lock counts as lost (default LoseOnSuspend).
func WithSuspendPolicy(p SuspendPolicy) Option { return func(o *options) { o.policy = p } }

// WithRevocation makes the lock revocable (Curator's makeRevocable): while
// it is held, a Revoke of our node calls fn (on a goroutine of its own),
// which should release the lock. Revocable nodes hold empty data.
func WithRevocation(fn func()) Option { return func(o *options) { o.onRevoke = fn } }

// WithOnEnqueue makes every acquisition call fn with the path of its
// contender node as soon as the node is made, before it waits (a waiter is
// visible while it waits: to log it, to show a queue, to revoke or delete
// it). fn runs on the acquiring goroutine and should return quickly. The
// node may still be deleted without being held (ctx done, TryLock failed).
func WithOnEnqueue(fn func(node string)) Option { return func(o *options) { o.onEnqueue = fn } }

func buildOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.onRevoke != nil {
		o.data = []byte{}
	}
	return o
}
