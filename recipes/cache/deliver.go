package cache

// markPath records that path changed: the consumer is told once the
// delivery goroutine gets to it, of the difference between what it was
// told last and the state then (coalescing).
func (c *Cache) markPath(path string) {
	c.dmu.Lock()
	if !c.isDirty[path] {
		c.isDirty[path] = true
		c.dirty = append(c.dirty, path)
	}
	c.dmu.Unlock()
	c.poke()
}

// mark queues a marker event (Initialized, Rebuilt) behind every change
// queued so far.
func (c *Cache) mark(m string) {
	c.dmu.Lock()
	c.dirty = append(c.dirty, m)
	c.dmu.Unlock()
	c.poke()
}

func (c *Cache) poke() {
	select {
	case c.dwake <- struct{}{}:
	default:
	}
}

// deliver tells the consumers, in order, until the cache closes.
func (c *Cache) deliver() {
	defer c.wg.Done()
	for {
		c.dmu.Lock()
		if len(c.dirty) == 0 {
			c.dmu.Unlock()
			select {
			case <-c.dwake:
				continue
			case <-c.ctx.Done():
				return
			}
		}
		p := c.dirty[0]
		c.dirty = c.dirty[1:]
		var evs []Event
		switch p {
		case markInitialized:
			evs = []Event{{Type: EventInitialized}}
		case markRebuilt:
			evs = []Event{{Type: EventRebuilt}}
		default:
			delete(c.isDirty, p)
			old := c.view[p]
			var now *Node
			if n, ok := c.Get(p); ok {
				now = &n
			}
			evs = diff(p, old, now)
			if now == nil {
				delete(c.view, p)
			} else {
				c.view[p] = now
			}
		}
		fns := c.listeners.Snapshot()
		ch := c.events
		c.dmu.Unlock()
		for _, ev := range evs {
			c.delivered(ev) // metrics.go
			for _, fn := range fns {
				fn(ev)
			}
			if ch != nil {
				select {
				case ch <- ev:
				case <-c.ctx.Done():
					return
				}
			}
		}
	}
}

// diff is what a consumer that knew old is told now that the node is now.
func diff(path string, old, now *Node) []Event {
	switch {
	case old == nil && now == nil:
		return nil
	case old == nil:
		return []Event{{Type: EventCreated, Path: path, New: now}}
	case now == nil:
		return []Event{{Type: EventDeleted, Path: path, Old: old}}
	case old.Stat.Czxid != now.Stat.Czxid:
		return []Event{{Type: EventDeleted, Path: path, Old: old}, {Type: EventCreated, Path: path, New: now}}
	case old.Stat.Mzxid == now.Stat.Mzxid:
		return nil // only its children's side of the stat moved
	}
	return []Event{{Type: EventChanged, Path: path, Old: old, New: now}}
}
