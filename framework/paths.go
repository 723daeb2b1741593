package framework

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gocurator/curator"
)

// ValidatePath reports whether path is a ZooKeeper path the server accepts,
// by ZooKeeper's own rules (PathUtils.validatePath): absolute, no empty, "."
// or ".." component, no trailing slash, no control or reserved characters.
// The error wraps curator.ErrInvalidPath.
func ValidatePath(path string) error {
	return validatePath(path, false)
}

func validatePath(path string, sequential bool) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", curator.ErrInvalidPath, shortPath(path), why)
	}
	if path == "" {
		return bad("empty")
	}
	if path[0] != '/' {
		return bad("must start with /")
	}
	if path == "/" {
		return nil
	}
	if strings.HasSuffix(path, "/") && !sequential {
		return bad("must not end with /")
	}
	if !utf8.ValidString(path) {
		return bad("not valid UTF-8")
	}
	for rest := path[1:]; ; { // each component, without allocating
		part, tail, more := strings.Cut(rest, "/")
		switch part {
		case "":
			// ZooKeeper validates a sequential path with the sequence
			// number appended: only the last component may be empty.
			if !sequential || more {
				return bad("empty component")
			}
		case ".", "..":
			return bad("relative component " + part)
		}
		if !more {
			break
		}
		rest = tail
	}
	for _, r := range path {
		switch {
		case r == 0:
			return bad("null character")
		case r > 0 && r < 0x20, r >= 0x7f && r <= 0x9f,
			r >= 0xd800 && r <= 0xf8ff, r >= 0xfff0 && r <= 0xffff:
			return bad(fmt.Sprintf("invalid character %U", r))
		}
	}
	return nil
}

// ValidateName reports whether name can name a node under a path (one
// component ZooKeeper accepts: not empty, no "/", not "." or "..", no
// character ValidatePath refuses). The error wraps curator.ErrInvalidPath.
func ValidateName(name string) error {
	if name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%w: node name %q: empty or with a /", curator.ErrInvalidPath, name)
	}
	return ValidatePath("/" + name)
}

// JoinPath joins a parent path and a child name into a ZooKeeper path.
func JoinPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

// NodeName returns the last component of a path ("/a/b" gives "b").
func NodeName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// ParentPath returns the parent of a path ("/a/b" gives "/a", "/a" gives "/").
func ParentPath(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

// parseConnectString splits "h1:p1,h2:p2/chroot" into servers and chroot
// ("" when none), as ZooKeeper's Java client does.
func parseConnectString(s string) (servers []string, chroot string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, "", fmt.Errorf("%w: empty connect string", curator.ErrInvalidArgument)
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		chroot = s[i:]
		s = s[:i]
		if chroot == "/" {
			chroot = ""
		} else if err := validatePath(chroot, false); err != nil {
			return nil, "", fmt.Errorf("connect string chroot: %w", err)
		}
	}
	for _, h := range strings.Split(s, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, "", fmt.Errorf("%w: empty host in connect string %q", curator.ErrInvalidArgument, s)
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = h, "2181"
		}
		if host == "" {
			return nil, "", fmt.Errorf("%w: empty host in connect string %q", curator.ErrInvalidArgument, s)
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return nil, "", fmt.Errorf("%w: bad port in %q", curator.ErrInvalidArgument, h)
		}
		servers = append(servers, net.JoinHostPort(host, port))
	}
	return servers, chroot, nil
}

// pather maps the caller's paths onto the server's (chroot + namespace) and back.
type pather struct {
	prefix string // chroot + "/" + namespace, "" for none
	zkRoot string // prefix, or "/" when none
	nsRoot string // the namespace root as the ACL provider sees it ("/ns"), or "/"
	chroot string
}

func newPather(chroot, namespace string) pather {
	prefix := chroot
	ns := "/"
	if namespace != "" {
		prefix += "/" + namespace
		ns = "/" + namespace
	}
	root := prefix
	if root == "" {
		root = "/"
	}
	return pather{prefix: prefix, zkRoot: root, nsRoot: ns, chroot: chroot}
}

// full maps a caller's path to the server's path.
func (p pather) full(path string) string {
	if p.prefix == "" {
		return path
	}
	if path == "/" {
		return p.prefix
	}
	return p.prefix + path
}

// node maps the path of a node to create to the server's path: as full,
// but "/" (a sequential create's, named by its sequence number alone)
// names a node directly under the root, "prefix/", as "/a/" does under /a.
func (p pather) node(path string) string {
	if path == "/" {
		return p.prefix + "/"
	}
	return p.full(path)
}

// user maps a server path back to the caller's; paths outside the prefix
// are returned unchanged.
func (p pather) user(path string) string {
	if p.prefix == "" {
		return path
	}
	if path == p.prefix {
		return "/"
	}
	if strings.HasPrefix(path, p.prefix+"/") {
		return path[len(p.prefix):]
	}
	return path
}

// aclPath maps a server path to the path an ACLProvider sees: relative to
// the chroot (as ZooKeeper's Java client sees it), including the namespace.
func (p pather) aclPath(full string) string {
	if p.chroot == "" {
		return full
	}
	if full == p.chroot {
		return "/"
	}
	return strings.TrimPrefix(full, p.chroot)
}

// zkSubtree is ZooKeeper's own subtree: its quotas (/zookeeper/quota) and
// dynamic configuration (/zookeeper/config).
const zkSubtree = "/zookeeper"

// CheckCreatePath returns nil if Create takes path as the path of a node
// to make (sequential modes aside, where it may end with "/"), and recipes
// as the path they make their nodes under: a valid path (ValidatePath)
// that the server does not see as ZooKeeper's own subtree, /zookeeper or
// under it, once the client's chroot and namespace are applied. The error
// wraps curator.ErrInvalidPath for an invalid path, else
// curator.ErrInvalidArgument. ZooKeeper 3.8 takes any create under
// /zookeeper but the config node; Curator refuses none: we refuse them
// all, nothing of a client's belongs there. With a chroot or namespace,
// "/zookeeper" is an ordinary path of the client's.
func (c *Client) CheckCreatePath(path string) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	return c.paths.checkOwn(path)
}

// checkCreate is the check of a node to create, before any I/O: Create,
// CreateNode and a Multi's CreateOp (sequential: the mode is, so the path
// may end with "/", and "/" names a node under the root).
func (p pather) checkCreate(path string, sequential bool) error {
	if err := validatePath(path, sequential); err != nil {
		return err
	}
	if path == "/" && !sequential {
		return errCreateRoot
	}
	return p.checkOwn(path)
}

// checkOwn refuses a path the server sees in ZooKeeper's subtree (an
// error wrapping curator.ErrInvalidArgument): checkCreate and
// CheckCreatePath, the one check for them all.
func (p pather) checkOwn(path string) error {
	full := p.full(path)
	if full == zkSubtree || strings.HasPrefix(full, zkSubtree+"/") {
		return fmt.Errorf("%w: the server path %q is in ZooKeeper's own subtree %s",
			curator.ErrInvalidArgument, shortPath(full), zkSubtree)
	}
	return nil
}
