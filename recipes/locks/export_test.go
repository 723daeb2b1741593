package locks

// SortOnly returns a driver that can only sort (no client), for fuzzing.
func SortOnly(names ...string) *Driver { return &Driver{name: names[0], names: names} }

// SequenceOf exposes the sort key of a contender name.
func SequenceOf(d *Driver, name string) string {
	s, _ := d.sequence(name)
	return s
}

// SetWaitHook sets the hook Wait runs once it has decided to wait, just
// before it waits; the returned func restores the previous one. Set it only
// while no Wait runs.
func SetWaitHook(f func(c *Contender)) (restore func()) {
	old := testHookWaiting
	testHookWaiting = f
	return func() { testHookWaiting = old }
}
