package discovery

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gocurator/curator"
)

// URISpec is a template of an instance's URI (Curator's UriSpec): literal
// text and {variables}, as "{scheme}://{address}:{port}/api". Its JSON is
// Curator's: {"parts":[{"value":"scheme","variable":true},…]}.
type URISpec struct {
	Parts []URIPart `json:"parts"`
}

// URIPart is a literal or a variable of a URISpec.
type URIPart struct {
	Value    string `json:"value"`
	Variable bool   `json:"variable"`
}

// ParseURISpec parses a template: text in braces is a variable (trimmed),
// the rest literal. A nested "{", a stray "}" or an unclosed "{" is an
// error wrapping curator.ErrInvalidArgument (Curator throws
// IllegalStateException).
func ParseURISpec(template string) (*URISpec, error) {
	u := &URISpec{}
	var cur strings.Builder
	in := false
	for i, r := range template {
		switch {
		case r == '{' && in, r == '}' && !in:
			return nil, fmt.Errorf("discovery: URI spec %q: unexpected %q at %d: %w", template, r, i, curator.ErrInvalidArgument)
		case r == '{':
			if cur.Len() > 0 {
				u.Parts = append(u.Parts, URIPart{Value: cur.String()})
			}
			cur.Reset()
			in = true
		case r == '}':
			u.Parts = append(u.Parts, URIPart{Value: strings.TrimSpace(cur.String()), Variable: true})
			cur.Reset()
			in = false
		default:
			cur.WriteRune(r)
		}
	}
	if in {
		return nil, fmt.Errorf("discovery: URI spec %q: unclosed {: %w", template, curator.ErrInvalidArgument)
	}
	if cur.Len() > 0 {
		u.Parts = append(u.Parts, URIPart{Value: cur.String()})
	}
	return u, nil
}

// Build returns the URI for inst (Curator's UriSpec.build): the variables
// scheme ("https" when inst has an SSL port, else "http"), name, id,
// address, port (the plain port, even with an SSL port, as Curator),
// ssl-port, registration-time-utc, service-type (lower case), "[" and "]"
// (for literal braces), then vars, which override them. An unknown
// variable gives nothing, as in Curator.
func Build[T any](u *URISpec, inst *Instance[T], vars map[string]string) string {
	if u == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range u.Parts {
		if !p.Variable {
			b.WriteString(p.Value)
			continue
		}
		if v, ok := vars[p.Value]; ok {
			b.WriteString(v)
			continue
		}
		b.WriteString(predefined(inst, p.Value))
	}
	return b.String()
}

func predefined[T any](inst *Instance[T], name string) string {
	port := func(p int) string {
		if p == 0 {
			return ""
		}
		return strconv.Itoa(p)
	}
	switch name {
	case "[":
		return "{"
	case "]":
		return "}"
	}
	if inst == nil {
		return ""
	}
	switch name {
	case "scheme":
		if inst.SSLPort != 0 {
			return "https"
		}
		return "http"
	case "name":
		return inst.Name
	case "id":
		return inst.ID
	case "address":
		return inst.Address
	case "port":
		return port(inst.Port)
	case "ssl-port":
		return port(inst.SSLPort)
	case "registration-time-utc":
		if inst.RegistrationTime.IsZero() {
			return "0"
		}
		return strconv.FormatInt(inst.RegistrationTime.UnixMilli(), 10)
	case "service-type":
		st := inst.ServiceType
		if st == "" {
			st = Dynamic
		}
		return strings.ToLower(string(st))
	}
	return ""
}

// URI returns the instance's URI from its URISpec (Build with no
// variables of the caller's), "" without one.
func (in *Instance[T]) URI() string { return Build(in.URISpec, in, nil) }
