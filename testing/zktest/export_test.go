package zktest

// PingsSeen returns how many pings clients sent through p (which Requests
// never counts).
func (p *Proxy) PingsSeen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pings
}

// SetProxyHooks sets the hooks run once a proxied connection's server is
// dialled (before it is proxied) and when a chunk starts its delay; set
// them before the proxy starts, and restore them once it is closed.
func SetProxyHooks(dialed, delaying func(p *Proxy)) (restore func()) {
	testHookDialed, testHookDelaying = dialed, delaying
	return func() { testHookDialed, testHookDelaying = nil, nil }
}
