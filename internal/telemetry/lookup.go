package telemetry

// clientLookup returns the telemetry of a *framework.Client; the framework
// sets it in its init (this package cannot import the framework, which
// imports it).
var clientLookup func(client any) *Provider

// SetClientLookup is called once, by the framework's init.
func SetClientLookup(f func(client any) *Provider) { clientLookup = f }

// ForClient returns the telemetry of a *framework.Client (the global
// providers' for anything else, or a nil client).
func ForClient(client any) *Provider {
	if clientLookup != nil {
		if p := clientLookup(client); p != nil {
			return p
		}
	}
	return Global()
}

// sources find the telemetry behind a recipe value of another package (the
// members of a MultiLock): each recipe package registers one in its init.
var sources []func(v any) *Provider

// RegisterSource adds a source; call it only from an init function.
func RegisterSource(f func(v any) *Provider) { sources = append(sources, f) }

// SourceOf returns the telemetry of the first of vs that a registered
// source knows (the client it was made with), or the global providers'.
func SourceOf(vs ...any) *Provider {
	for _, v := range vs {
		for _, f := range sources {
			if p := f(v); p != nil {
				return p
			}
		}
	}
	return Global()
}
