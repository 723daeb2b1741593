package locks

// SortOnly returns a driver that can only sort (no client), for fuzzing.
func SortOnly(names ...string) *Driver { return &Driver{name: names[0], names: names} }

// SequenceOf exposes the sort key of a contender name.
func SequenceOf(d *Driver, name string) string {
	s, _ := d.sequence(name)
	return s
}
