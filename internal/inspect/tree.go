package inspect

import "github.com/gocurator/curator/framework"

// Znode is one node as Read found it.
type Znode struct {
	Path string
	Name string
	Stat *framework.Stat
	Data []byte
	// Children, sorted by name. Nil for an ephemeral node (it cannot have
	// any) and for a node whose children were not read (Unread).
	Children []*Znode
	// Unread: the children were not read (depth or node limit, or a skipped
	// path).
	Unread bool
	// Err: the node could not be read (permission denied): Stat and Data,
	// or Children, are missing.
	Err error

	gone bool // deleted while the tree was read
}

// ephemeral reports whether the node belongs to a session.
func (z *Znode) ephemeral() bool { return z.Stat != nil && z.Stat.EphemeralOwner != 0 }

// persistent reports whether the node is known to outlive sessions (its
// stat was read): then it is no recipe's contender, lease or member, all
// of which are ephemeral in Curator as in gocurator, whatever its name.
func (z *Znode) persistent() bool { return z.Stat != nil && z.Stat.EphemeralOwner == 0 }

// child returns the child of that name, or nil.
func (z *Znode) child(name string) *Znode {
	for _, c := range z.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}
