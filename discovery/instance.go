package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// ServiceType is how an instance's node lives (Curator's ServiceType).
type ServiceType string

// The service types: the node of a Dynamic instance is ephemeral, kept by
// its registering client's session and made again after a session loss; a
// Static or Permanent one is persistent and outlives its client (both are
// deleted by Unregister and Close, as in Curator: the difference is a
// convention). DynamicSequential is an ephemeral node whose name is the id
// followed by a sequence number; unlike Curator, its actual path is kept,
// so that Update and Unregister reach it and a re-registration never
// doubles it.
const (
	Dynamic           ServiceType = "DYNAMIC"
	DynamicSequential ServiceType = "DYNAMIC_SEQUENTIAL"
	Static            ServiceType = "STATIC"
	Permanent         ServiceType = "PERMANENT"
)

func (t ServiceType) valid() bool {
	switch t {
	case Dynamic, DynamicSequential, Static, Permanent:
		return true
	}
	return false
}

// Instance is one registered instance of a service (Curator's
// ServiceInstance), with a payload of type T carried as JSON.
//
// Its bytes are Curator's JsonInstanceSerializer's, field for field and in
// its order, so that a Go service and a Java one read each other's
// registrations:
//
//	{"name":"svc","id":"…","address":"10.0.0.1","port":8080,"sslPort":null,"payload":…,
//	 "registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":null,"enabled":true}
//
// Differences in Go shape: Disabled is Curator's enabled inverted, so that
// the zero Instance is enabled; a port of 0 is Curator's null (no port);
// RegistrationTime is a time.Time (written as UTC milliseconds).
type Instance[T any] struct {
	Name             string
	ID               string // default on Register: a random UUID, as Curator's builder
	Address          string
	Port             int // 0: none (null)
	SSLPort          int // 0: none (null)
	Payload          T
	RegistrationTime time.Time   // default on Register: now
	ServiceType      ServiceType // default: Dynamic
	URISpec          *URISpec
	Disabled         bool

	// PayloadClass is the Java class Curator names the payload with: the
	// "@class" of an object payload, or the first element of the wrapper
	// array Jackson writes around a list or a Long (["java.lang.Long",5]).
	// Read from what Java wrote, written back as it was; set it when Java
	// readers expect a class of their own (a POJO payload): without it a
	// Java reader sees a map (a LinkedHashMap).
	PayloadClass string

	// unknown keeps the fields this version does not know, in order, and
	// writes them back after the known ones (Curator's reader ignores
	// them, FAIL_ON_UNKNOWN_PROPERTIES off).
	unknown []field
}

type field struct {
	name  string
	value json.RawMessage
}

// Encoding is how Instance bytes are written.
type Encoding int

const (
	// WithEnabled writes "enabled" last (JsonInstanceSerializer(payloadClass,
	// false)): every Curator since CURATOR-275 (2.9) reads it. The default,
	// so that a disabled instance is disabled for every reader.
	WithEnabled Encoding = iota
	// Compatible leaves "enabled" out (JsonInstanceSerializer's default
	// compatible mode, for readers older than CURATOR-275): a disabled
	// instance then reads as enabled.
	Compatible
)

// Marshal returns the instance's bytes as Curator writes them, with
// "enabled" unless enc is Compatible.
func (in *Instance[T]) Marshal(enc Encoding) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	put := func(name string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + name + `":`)
		return encode(&b, v)
	}
	port := func(p int) any {
		if p == 0 {
			return nil
		}
		return p
	}
	st := in.ServiceType
	if st == "" {
		st = Dynamic
	}
	var millis int64 // Curator's 0 is "unset"; time.Time{}.UnixMilli is far before 1970
	if !in.RegistrationTime.IsZero() {
		millis = in.RegistrationTime.UnixMilli()
	}
	payload, err := in.marshalPayload()
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    any
	}{
		{"name", in.Name}, {"id", in.ID}, {"address", nullIfEmpty(in.Address)},
		{"port", port(in.Port)}, {"sslPort", port(in.SSLPort)}, {"payload", payload},
		{"registrationTimeUTC", millis}, {"serviceType", st},
		{"uriSpec", in.URISpec},
	} {
		if err := put(f.name, f.v); err != nil {
			return nil, fmt.Errorf("discovery: instance %q: %s: %w", in.ID, f.name, err)
		}
	}
	if enc != Compatible {
		_ = put("enabled", !in.Disabled)
	}
	for _, f := range in.unknown {
		b.WriteString(`,"` + f.name + `":`)
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encode writes v as Jackson would: no HTML escaping, no newline.
func encode(b *bytes.Buffer, v any) error {
	if raw, ok := v.(json.RawMessage); ok {
		b.Write(raw)
		return nil
	}
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// marshalPayload writes the payload as Jackson's @JsonTypeInfo(use=CLASS)
// does: an object gets "@class" first when PayloadClass names one; an
// array is wrapped as [class, array] (Jackson cannot read a bare array
// there); a scalar is written bare, unless PayloadClass names its wrapper
// (["java.lang.Long",5]).
func (in *Instance[T]) marshalPayload() (json.RawMessage, error) {
	var b bytes.Buffer
	if err := encode(&b, in.Payload); err != nil {
		return nil, err
	}
	raw := b.Bytes()
	switch {
	case len(raw) > 0 && raw[0] == '{':
		if in.PayloadClass == "" {
			return raw, nil
		}
		var out bytes.Buffer
		out.WriteString(`{"@class":`)
		_ = encode(&out, in.PayloadClass)
		if rest := bytes.TrimSpace(raw[1:]); len(rest) > 0 && rest[0] != '}' {
			out.WriteByte(',')
		}
		out.Write(raw[1:])
		return out.Bytes(), nil
	case len(raw) > 0 && raw[0] == '[':
		class := in.PayloadClass
		if class == "" {
			class = "java.util.ArrayList"
		}
		return wrap(class, raw), nil
	case string(raw) == "null" || in.PayloadClass == "":
		return raw, nil
	default:
		return wrap(in.PayloadClass, raw), nil
	}
}

func wrap(class string, raw []byte) json.RawMessage {
	var out bytes.Buffer
	out.WriteByte('[')
	_ = encode(&out, class)
	out.WriteByte(',')
	out.Write(raw)
	out.WriteByte(']')
	return out.Bytes()
}

// Unmarshal reads an instance as Curator's JsonInstanceSerializer does:
// missing fields take Curator's defaults (DYNAMIC, enabled), unknown ones
// are kept and written back by Marshal, "@class" and Jackson's wrapper
// arrays are taken off the payload (into PayloadClass). Bytes that are no
// instance (empty, not an object, a service type Curator does not know, a
// payload that does not fit T) are an error wrapping
// curator.ErrInvalidArgument, as Curator's reader throws.
func (in *Instance[T]) Unmarshal(data []byte) error {
	var out Instance[T]
	out.ServiceType = Dynamic
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("discovery: not an instance (%.40q): %w", data, curator.ErrInvalidArgument)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("discovery: not an instance: %v: %w", err, curator.ErrInvalidArgument)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("discovery: not an instance: %v: %w", err, curator.ErrInvalidArgument)
		}
		if err := out.set(name, raw); err != nil {
			return fmt.Errorf("discovery: instance field %q: %v: %w", name, err, curator.ErrInvalidArgument)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("discovery: not an instance: %v: %w", err, curator.ErrInvalidArgument)
	}
	*in = out
	return nil
}

func (in *Instance[T]) set(name string, raw json.RawMessage) error {
	null := string(raw) == "null"
	switch name {
	case "name", "id", "address":
		var s string
		if !null {
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
		}
		switch name {
		case "name":
			in.Name = s
		case "id":
			in.ID = s
		default:
			in.Address = s
		}
	case "port", "sslPort":
		var p int
		if !null {
			if err := json.Unmarshal(raw, &p); err != nil {
				return err
			}
		}
		if name == "port" {
			in.Port = p
		} else {
			in.SSLPort = p
		}
	case "payload":
		return in.unmarshalPayload(raw)
	case "registrationTimeUTC":
		var ms int64
		if !null {
			if err := json.Unmarshal(raw, &ms); err != nil {
				return err
			}
		}
		if ms != 0 {
			in.RegistrationTime = time.UnixMilli(ms).UTC()
		}
	case "serviceType":
		var s string
		if !null {
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			if !ServiceType(s).valid() {
				return fmt.Errorf("unknown service type %q", s)
			}
			in.ServiceType = ServiceType(s)
		}
	case "uriSpec":
		if null {
			in.URISpec = nil
			return nil
		}
		var u URISpec
		if err := json.Unmarshal(raw, &u); err != nil {
			return err
		}
		in.URISpec = &u
	case "enabled":
		var e bool
		if !null {
			if err := json.Unmarshal(raw, &e); err != nil {
				return err
			}
			in.Disabled = !e
		}
	default:
		in.unknown = append(in.unknown, field{name, append(json.RawMessage(nil), raw...)})
	}
	return nil
}

// unmarshalPayload takes Jackson's type information off the payload:
// {"@class":C,...} and [C, value] name C.
func (in *Instance[T]) unmarshalPayload(raw json.RawMessage) error {
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		var pair []json.RawMessage
		if err := json.Unmarshal(trimmed, &pair); err == nil && len(pair) == 2 {
			var class string
			if json.Unmarshal(pair[0], &class) == nil && class != "" {
				in.PayloadClass = class
				raw = pair[1]
			}
		}
	case len(trimmed) > 0 && trimmed[0] == '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &obj); err == nil {
			if c, ok := obj["@class"]; ok {
				var class string
				if err := json.Unmarshal(c, &class); err != nil {
					return fmt.Errorf("@class: %v", err)
				}
				in.PayloadClass = class
				raw = withoutClass(trimmed)
			}
		}
	}
	return json.Unmarshal(raw, &in.Payload)
}

// withoutClass returns the object raw without its "@class" member, the
// others in their order.
func withoutClass(raw []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	b.WriteByte('{')
	_, _ = dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		name, _ := tok.(string)
		if name == "@class" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		_ = encode(&b, name)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// check validates what Register, Update and Unregister need: a name and an
// id that are one path component each.
func (in *Instance[T]) check() error {
	for _, f := range []struct{ what, v string }{{"name", in.Name}, {"id", in.ID}} {
		if err := framework.ValidateName(f.v); err != nil {
			return fmt.Errorf("discovery: instance %s: %w", f.what, err)
		}
	}
	if in.ServiceType != "" && !in.ServiceType.valid() {
		return fmt.Errorf("discovery: instance %q: service type %q: %w", in.ID, in.ServiceType, curator.ErrInvalidArgument)
	}
	if in.Port < 0 || in.Port > 65535 || in.SSLPort < 0 || in.SSLPort > 65535 {
		return fmt.Errorf("discovery: instance %q: ports %d/%d out of range: %w", in.ID, in.Port, in.SSLPort, curator.ErrInvalidArgument)
	}
	return nil
}
