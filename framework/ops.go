package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// Stat is ZooKeeper's node metadata (go-zookeeper's type).
type Stat = zk.Stat

// ACL is one ZooKeeper access control entry (go-zookeeper's type).
type ACL = zk.ACL

// checkPath validates a caller's path and maps it to the server's. The
// request must fit in the server's jute.maxbuffer with the path alone (and
// a version or watch flag); see checkSize.
func (c *Client) checkPath(op, path string) (string, error) {
	full := c.paths.full(path)
	if err := c.checkSize(op, path, reqHeader+strSize(full)+4); err != nil {
		return "", err
	}
	if err := validatePath(path, false); err != nil {
		return "", &OpError{op, path, err}
	}
	return full, nil
}

// Request sizes as ZooKeeper counts them against jute.maxbuffer: the packet
// after its 4-byte length, i.e. the request header (xid, op code) and the
// request's fields, strings and byte slices with a 4-byte length each.
const (
	reqHeader   = 8
	multiHeader = 9 // op type, done flag, error code
)

func strSize(s string) int  { return 4 + len(s) }
func dataSize(b []byte) int { return 4 + len(b) }

func aclSize(acl []ACL) int {
	n := 4
	for _, a := range acl {
		n += 4 + strSize(a.Scheme) + strSize(a.ID)
	}
	return n
}

// createSize is the size of a create request (ttl: a TTL create's 8 more bytes).
func createSize(full string, data []byte, acl []ACL, ttl bool) int {
	n := reqHeader + strSize(full) + dataSize(data) + aclSize(acl) + 4
	if ttl {
		n += 8
	}
	return n
}

// checkSize refuses, before any I/O, a request of size bytes that the server
// would not read: a packet longer than its jute.maxbuffer makes it drop the
// connection, which would be a connection loss, retried, and every lock on
// the connection suspended or lost for one bad request.
func (c *Client) checkSize(op, path string, size int) error {
	if max := c.opts.juteMaxBuffer; size > max {
		return &OpError{op, path, fmt.Errorf("%w: request of %d bytes exceeds the server's jute.maxbuffer of %d (see WithJuteMaxBuffer)", curator.ErrInvalidArgument, size, max)}
	}
	return nil
}

// Get returns a node's data and stat (Curator's getData).
func (c *Client) Get(ctx context.Context, path string) ([]byte, *Stat, error) {
	full, err := c.checkPath("get", path)
	if err != nil {
		return nil, nil, err
	}
	type r struct {
		data []byte
		stat *Stat
	}
	res, err := call(c, ctx, "get", path, func(conn *zk.Conn) (r, error) {
		d, s, err := conn.Get(full)
		return r{d, s}, err
	})
	return res.data, res.stat, err
}

// readW is a read that sets a watch, through our demultiplexer: when a
// server watch of this kind is already armed on the node, it reads without
// arming another. The watched read is go-zookeeper's plain read, its watch
// flag set on the wire (wirewatch.go: go-zookeeper holds no watch).
func readW[T any](c *Client, ctx context.Context, op, path string, kind watchKind,
	read func(*zk.Conn, string) (T, error)) (T, *Watch, error) {
	var zero T
	full, err := c.checkPath(op, path)
	if err != nil {
		return zero, nil, err
	}
	key := watchKey{full, kind}
	w, e, armed := c.watches.add(key, path)
	var r *readsOf
	if !armed {
		r = c.beginWatchedRead(key)
	}
	v, err := call(c, ctx, op, path, func(conn *zk.Conn) (T, error) { return read(conn, full) })
	if r != nil {
		c.endWatchedRead(r, e, err)
	}
	if err != nil {
		c.watches.failed(w, e)
		return zero, nil, err
	}
	return v, w, nil
}

type dataStat struct {
	data []byte
	stat *Stat
}

// GetW is Get that also sets a data watch, which fires when the node's data
// changes or the node is deleted. If the node does not exist, it returns
// zk.ErrNoNode and leaves no watch anywhere (unlike ExistsW): this is the
// watch lock recipes use on their predecessor. Like every read, it runs in
// the retry loop: a read in flight when the session is lost goes on being
// retried (in the new session) until it succeeds, the policy gives up or
// ctx ends; bound it with ctx.
func (c *Client) GetW(ctx context.Context, path string) ([]byte, *Stat, *Watch, error) {
	v, w, err := readW(c, ctx, "get", path, watchData,
		func(conn *zk.Conn, p string) (dataStat, error) {
			d, s, err := conn.Get(p)
			return dataStat{d, s}, err
		})
	return v.data, v.stat, w, err
}

// Set writes a node's data (Curator's setData). Option: WithVersion.
func (c *Client) Set(ctx context.Context, path string, data []byte, opts ...OpOption) (*Stat, error) {
	so, err := opOpts("set", setOpts, opts)
	if err != nil {
		return nil, &OpError{"set", path, err}
	}
	full, err := c.checkPath("set", path)
	if err != nil {
		return nil, err
	}
	if err := c.checkSize("set", path, reqHeader+strSize(full)+dataSize(data)+4); err != nil {
		return nil, err
	}
	unsure := false // WithSendOnce: an attempt sent whose outcome is unknown
	st, err := call(c, ctx, "set", path, func(conn *zk.Conn) (*Stat, error) {
		if unsure {
			return nil, errSentOnce
		}
		st, err := conn.Set(full, data, so.version)
		if so.sendOnce && err != nil {
			ce := classify(err, false)
			unsure = errors.Is(ce, curator.ErrConnectionLoss) || errors.Is(ce, curator.ErrOperationTimeout)
		}
		return st, err
	})
	if errors.Is(err, errSentOnce) {
		err = &OpError{"set", path, &codedError{curator.ErrConnectionLoss, errSentOnce}}
	}
	return st, err
}

var errSentOnce = errors.New("a request sent once (WithSendOnce) is not sent again after a connection loss")

type childrenStat struct {
	children []string
	stat     *Stat
}

// Children returns the names of a node's children (unsorted, as the server
// returns them) and the node's stat.
func (c *Client) Children(ctx context.Context, path string) ([]string, *Stat, error) {
	full, err := c.checkPath("children", path)
	if err != nil {
		return nil, nil, err
	}
	v, err := call(c, ctx, "children", path, func(conn *zk.Conn) (childrenStat, error) {
		ch, s, err := conn.Children(full)
		return childrenStat{ch, s}, err
	})
	return v.children, v.stat, err
}

// ChildrenW is Children that also sets a child watch, which fires when a
// child is added or removed, or the node is deleted.
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, *Stat, *Watch, error) {
	v, w, err := readW(c, ctx, "children", path, watchChild,
		func(conn *zk.Conn, p string) (childrenStat, error) {
			ch, s, err := conn.Children(p)
			return childrenStat{ch, s}, err
		})
	return v.children, v.stat, w, err
}

type existsStat struct {
	ok   bool
	stat *Stat
}

// Exists reports whether a node exists, with its stat when it does.
func (c *Client) Exists(ctx context.Context, path string) (bool, *Stat, error) {
	full, err := c.checkPath("exists", path)
	if err != nil {
		return false, nil, err
	}
	v, err := call(c, ctx, "exists", path, func(conn *zk.Conn) (existsStat, error) {
		ok, s, err := conn.Exists(full)
		return existsStat{ok, s}, err
	})
	if !v.ok {
		v.stat = nil
	}
	return v.ok, v.stat, err
}

// ExistsW is Exists that also sets a watch, which fires when the node is
// created, changed or deleted. Note that on a missing node the server keeps
// this watch until the node is created; recipes use GetW instead.
func (c *Client) ExistsW(ctx context.Context, path string) (bool, *Stat, *Watch, error) {
	v, w, err := readW(c, ctx, "exists", path, watchExist,
		func(conn *zk.Conn, p string) (existsStat, error) {
			ok, s, err := conn.Exists(p)
			return existsStat{ok, s}, err
		})
	if !v.ok {
		v.stat = nil
	}
	return v.ok, v.stat, w, err
}

// Sync asks the server the client is connected to to catch up with the
// leader for path, so that a following read sees every write committed before.
func (c *Client) Sync(ctx context.Context, path string) error {
	full, err := c.checkPath("sync", path)
	if err != nil {
		return err
	}
	_, err = call(c, ctx, "sync", path, func(conn *zk.Conn) (string, error) { return conn.Sync(full) })
	return err
}

// GetACL returns a node's ACL and stat.
func (c *Client) GetACL(ctx context.Context, path string) ([]ACL, *Stat, error) {
	full, err := c.checkPath("getACL", path)
	if err != nil {
		return nil, nil, err
	}
	type r struct {
		acl  []ACL
		stat *Stat
	}
	v, err := call(c, ctx, "getACL", path, func(conn *zk.Conn) (r, error) {
		a, s, err := conn.GetACL(full)
		return r{a, s}, err
	})
	return v.acl, v.stat, err
}

// SetACL sets a node's ACL. Option: WithVersion (of the ACL).
func (c *Client) SetACL(ctx context.Context, path string, acl []ACL, opts ...OpOption) (*Stat, error) {
	so, err := opOpts("setACL", setOpts, opts)
	if err != nil {
		return nil, &OpError{"setACL", path, err}
	}
	full, err := c.checkPath("setACL", path)
	if err != nil {
		return nil, err
	}
	if len(acl) == 0 {
		return nil, &OpError{"setACL", path, fmt.Errorf("%w: empty ACL", curator.ErrInvalidArgument)}
	}
	if err := c.checkSize("setACL", path, reqHeader+strSize(full)+aclSize(acl)+4); err != nil {
		return nil, err
	}
	return call(c, ctx, "setACL", path, func(conn *zk.Conn) (*Stat, error) {
		return conn.SetACL(full, acl, so.version)
	})
}
