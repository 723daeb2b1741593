package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// Op is one operation of a Multi (Curator's transactionOp).
type Op interface {
	request(c *Client) (any, error)
	path() string
}

// CreateOp creates a node in a Multi. Container and TTL modes are not
// available in a transaction (go-zookeeper has no such multi op).
type CreateOp struct {
	Path string
	Data []byte
	Mode CreateMode
	ACL  []ACL // nil: the client's ACL provider's
}

// DeleteOp deletes a node in a Multi if its version matches (-1: any).
type DeleteOp struct {
	Path    string
	Version int32
}

// SetDataOp sets a node's data in a Multi if its version matches (-1: any).
type SetDataOp struct {
	Path    string
	Data    []byte
	Version int32
}

// CheckOp fails the whole Multi unless the node exists with this version
// (-1: any version, i.e. it only has to exist). Guarded writes use it.
type CheckOp struct {
	Path    string
	Version int32
}

func (o CreateOp) path() string  { return o.Path }
func (o DeleteOp) path() string  { return o.Path }
func (o SetDataOp) path() string { return o.Path }
func (o CheckOp) path() string   { return o.Path }

func (o CreateOp) request(c *Client) (any, error) {
	if err := c.paths.checkCreate(o.Path, o.Mode.Sequential()); err != nil {
		return nil, err
	}
	switch o.Mode {
	case ModePersistent, ModeEphemeral, ModePersistentSequential, ModeEphemeralSequential:
	default:
		return nil, fmt.Errorf("%w: mode %d in a transaction", curator.ErrInvalidArgument, o.Mode)
	}
	full := c.paths.node(o.Path)
	acl := o.ACL
	if acl == nil {
		acl = c.opts.acl.ForPath(c.paths.aclPath(full))
	}
	return &zk.CreateRequest{Path: full, Data: o.Data, Acl: acl, Flags: o.Mode.flags()}, nil
}

func (o DeleteOp) request(c *Client) (any, error) {
	if err := validatePath(o.Path, false); err != nil {
		return nil, err
	}
	if o.Path == "/" { // the namespace or chroot itself, as Delete refuses
		return nil, fmt.Errorf("%w: cannot delete /", curator.ErrInvalidPath)
	}
	return &zk.DeleteRequest{Path: c.paths.full(o.Path), Version: o.Version}, nil
}

func (o SetDataOp) request(c *Client) (any, error) {
	if err := validatePath(o.Path, false); err != nil {
		return nil, err
	}
	return &zk.SetDataRequest{Path: c.paths.full(o.Path), Data: o.Data, Version: o.Version}, nil
}

func (o CheckOp) request(c *Client) (any, error) {
	if err := validatePath(o.Path, false); err != nil {
		return nil, err
	}
	return &zk.CheckVersionRequest{Path: c.paths.full(o.Path), Version: o.Version}, nil
}

// OpResult is the outcome of one operation of a Multi.
type OpResult struct {
	Path string // created path for CreateOp, as the caller names paths
	Stat *Stat  // for SetDataOp
	Err  error  // this op's error when the transaction failed
}

// Multi runs ops as one transaction: all or none (Curator's
// transaction().forOperations). It is retried on connection loss only when
// it holds no CreateOp (a retried create cannot tell its own earlier success
// from a conflict). On failure the error is the first failing op's, and the
// results say which one.
func (c *Client) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	if len(ops) == 0 {
		return nil, &OpError{"multi", "", fmt.Errorf("%w: no operations", curator.ErrInvalidArgument)}
	}
	reqs := make([]any, len(ops))
	idempotent := true
	size := reqHeader + multiHeader
	for i, op := range ops {
		if op == nil {
			return nil, &OpError{"multi", "", fmt.Errorf("%w: nil operation %d", curator.ErrInvalidArgument, i)}
		}
		r, err := op.request(c)
		if err != nil {
			return nil, &OpError{"multi", op.path(), err}
		}
		if _, ok := op.(CreateOp); ok {
			idempotent = false
		}
		reqs[i] = r
		size += multiHeader + opSize(r)
	}
	if err := c.checkSize("multi", ops[0].path(), size); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, &OpError{"multi", "", fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)}
	}
	if err := c.ensureRoot(ctx); err != nil {
		return nil, &OpError{"multi", "", err}
	}
	type multiResult struct {
		res []zk.MultiResponse
		err error // the transaction's own failure (an op refused)
	}
	tried := false
	v, err := call(c, ctx, "multi", ops[0].path(), func(conn *zk.Conn) (multiResult, error) {
		if tried && !idempotent {
			return multiResult{}, errNoRetry
		}
		tried = true
		res, err := conn.Multi(reqs...)
		if err != nil && retryable(classify(err, false)) {
			return multiResult{}, err
		}
		// The server answered: keep the per-op results with the failure.
		return multiResult{res, err}, nil
	})
	if errors.Is(err, errNoRetry) {
		err = &OpError{"multi", ops[0].path(), &codedError{curator.ErrConnectionLoss, errNoRetry}}
	}
	if err == nil && v.err != nil {
		err = &OpError{"multi", ops[0].path(), v.err}
	}
	out := make([]OpResult, len(v.res))
	for i, r := range v.res {
		out[i] = OpResult{Path: c.paths.user(r.String), Stat: r.Stat, Err: r.Error}
	}
	return out, err
}

// opSize is the size of one operation's request in a multi.
func opSize(r any) int {
	switch r := r.(type) {
	case *zk.CreateRequest:
		return createSize(r.Path, r.Data, r.Acl, false) - reqHeader
	case *zk.DeleteRequest:
		return strSize(r.Path) + 4
	case *zk.SetDataRequest:
		return strSize(r.Path) + dataSize(r.Data) + 4
	case *zk.CheckVersionRequest:
		return strSize(r.Path) + 4
	}
	return 0 // not reached: request makes only the requests above
}

var errNoRetry = errors.New("a transaction with creates is not retried after a connection loss")
