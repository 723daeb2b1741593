package shared

// SetStartHook arms a hook that Value.Start (and Count.Start) calls once
// its first read is done, just before it starts watching (nil disarms).
func SetStartHook(fn func(*Value)) { startHook = fn }

// ValueOf returns a count's value (for the start hook).
func ValueOf(c *Count) *Value { return c.v }
