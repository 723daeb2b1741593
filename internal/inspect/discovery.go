package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
)

// Instance is one instance of a service in curator-x-discovery's registry
// (<base>/<service>/<id>, its data the instance as Curator's
// JsonInstanceSerializer writes it: Java's and Go's alike), read by
// discovery.Instance's reader.
type Instance struct {
	ID          string `json:"id"`
	Name        string `json:"name"` // the service's name, as the instance says it
	Address     string `json:"address,omitempty"`
	Port        int    `json:"port,omitempty"`     // 0: none (Curator's null)
	SSLPort     int    `json:"ssl_port,omitempty"` // 0: none
	ServiceType string `json:"service_type"`       // DYNAMIC, DYNAMIC_SEQUENTIAL, STATIC, PERMANENT
	Enabled     bool   `json:"enabled"`
	// RegistrationTime is registrationTimeUTC; zero when the instance has
	// none (Curator's 0).
	RegistrationTime time.Time `json:"registration_time,omitzero"`
	// Payload is the payload's JSON, Jackson's type information taken off
	// (into PayloadClass): null when none.
	Payload      json.RawMessage `json:"payload"`
	PayloadClass string          `json:"payload_class,omitempty"`
	// URI is built from the instance's URI spec, "" without one.
	URI string `json:"uri,omitempty"`
	// Node is the instance's node: path, owning session (ephemeralOwner:
	// "0x0" for a STATIC or PERMANENT instance's persistent node), ctime,
	// age, czxid; its notes say what does not match the layout.
	Node Entry `json:"node"`
}

// Service is one service of a registry: its node and its instances, by
// node name.
type Service struct {
	Name      string     `json:"name"`
	Path      string     `json:"path"`
	Instances []Instance `json:"instances"`
	// Unread: the instances could not be listed (see the registry's
	// Unreadable, or Truncated).
	Unread bool `json:"unread,omitempty"`
}

// Registry is the services under a base path at one moment.
type Registry struct {
	Base     string    `json:"base"`
	Time     time.Time `json:"time"`
	Services []Service `json:"services"`
	// Unreadable: nodes that could not be read (permission denied) or
	// whose bytes are no instance.
	Unreadable []Problem `json:"unreadable,omitempty"`
	// Truncated: the read stopped at its node limit.
	Truncated bool `json:"truncated,omitempty"`
}

// ReadRegistry reads the registry under base: every service and its
// instances, or with name the service name alone. An error reading base
// (or base/name) itself is returned: IsNotFound when it does not exist.
// A node that cannot be read, or whose bytes are no instance, is listed in
// Unreadable, not fatal; services at o.Skip's paths are left out.
func ReadRegistry(ctx context.Context, src Source, base, name string, o Options) (*Registry, error) {
	root, depth := base, 2
	if name != "" {
		root, depth = framework.JoinPath(base, name), 1
	}
	o.MaxDepth = depth
	z, truncated, err := Read(ctx, src, root, o)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	reg := &Registry{Base: base, Time: now.UTC(), Services: []Service{}, Truncated: truncated}
	services := z.Children
	if name != "" {
		services = []*Znode{z}
	}
	for _, s := range services {
		if slices.Contains(o.Skip, s.Path) {
			continue // not a service: /zookeeper, the server's own
		}
		svc := Service{Name: s.Name, Path: s.Path, Instances: []Instance{}}
		switch {
		case s.Err != nil:
			reg.Unreadable = append(reg.Unreadable, Problem{Path: s.Path, Error: s.Err.Error()})
			svc.Unread = true
		case s.Unread:
			svc.Unread = true // cut by the node limit
		}
		for _, c := range s.Children {
			if c.Err != nil {
				reg.Unreadable = append(reg.Unreadable, Problem{Path: c.Path, Error: c.Err.Error()})
				continue
			}
			in, err := readInstance(c, now)
			if err != nil {
				reg.Unreadable = append(reg.Unreadable, Problem{Path: c.Path, Error: err.Error()})
				continue
			}
			if in.Name != s.Name {
				in.Node.Notes = append(in.Node.Notes, fmt.Sprintf("its name field says %q, not its service node's name", in.Name))
			}
			if !instanceNode(c.Name, in.ID) {
				in.Node.Notes = append(in.Node.Notes, fmt.Sprintf("its id field says %q, not its node's name", in.ID))
			}
			in.Node.Position = len(svc.Instances) + 1
			svc.Instances = append(svc.Instances, in)
		}
		reg.Services = append(reg.Services, svc)
	}
	return reg, nil
}

// readInstance reads node z as a service instance.
func readInstance(z *Znode, now time.Time) (Instance, error) {
	var d discovery.Instance[json.RawMessage]
	if err := d.Unmarshal(z.Data); err != nil {
		return Instance{}, err
	}
	in := Instance{ID: d.ID, Name: d.Name, Address: d.Address, Port: d.Port, SSLPort: d.SSLPort,
		ServiceType: string(d.ServiceType), Enabled: !d.Disabled, RegistrationTime: d.RegistrationTime,
		Payload: d.Payload, PayloadClass: d.PayloadClass, URI: d.URI(), Node: newEntry(z, RoleInstance, 0, now)}
	if len(in.Payload) == 0 {
		in.Payload = json.RawMessage("null")
	} else {
		var b bytes.Buffer
		if json.Compact(&b, in.Payload) == nil {
			in.Payload = b.Bytes()
		}
	}
	return in, nil
}

// instanceNode reports whether a node named name holds the instance id:
// named by it, or (DYNAMIC_SEQUENTIAL) by it and a sequence suffix.
func instanceNode(name, id string) bool {
	return name == id || len(name) == len(id)+layout.SeqLen && name[:len(id)] == id && sequential(name)
}

// service recognises a service of curator-x-discovery's registry: every
// child a childless node (ephemeral for DYNAMIC instances, persistent for
// STATIC and PERMANENT ones) whose data reads as an instance whose id is
// the child's name. The data decides, not the names: instance ids are
// UUIDs by default, which alone would read as a double barrier's members.
func (r *recognizer) service(z *Znode) bool {
	var ins []Instance
	for _, c := range z.Children {
		if c.Err != nil || c.Unread || len(c.Children) > 0 {
			return false
		}
		in, err := readInstance(c, r.now)
		if err != nil || !instanceNode(c.Name, in.ID) {
			return false
		}
		in.Node.Position = len(ins) + 1
		ins = append(ins, in)
	}
	rec := Recipe{Path: z.Path, Kind: KindService, Instances: ins,
		Notes: []string{fmt.Sprintf("curator-x-discovery's registry: each instance's node is named by its id, its data the instance (JSON); "+
			"\"gocurator services --base %s %s\" shows them whole", framework.ParentPath(z.Path), z.Name)}}
	r.add(rec)
	return true
}
