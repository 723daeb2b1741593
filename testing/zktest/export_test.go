package zktest

// PingsSeen returns how many pings clients sent through p (which Requests
// never counts).
func (p *Proxy) PingsSeen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pings
}
