package discovery

import "github.com/gocurator/curator/internal/recipe"

// Option configures a Discovery.
type Option func(*options)

type options struct {
	recipe.Options // its Fail and Apply
	enc            Encoding
}

// WithEncoding sets how instances registered here are written (default
// WithEnabled: with Curator's "enabled" field).
func WithEncoding(e Encoding) Option {
	return func(o *options) {
		if e != WithEnabled && e != Compatible {
			o.Fail("encoding %d", e)
		}
		o.enc = e
	}
}
