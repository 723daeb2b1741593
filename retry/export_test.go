package retry

// SetIntN replaces e's random source (rand.IntN) so tests can pick draws.
func SetIntN(e *ExponentialBackoff, intN func(int) int) { e.intN = intN }
