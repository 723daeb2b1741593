package framework

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// GetResult is one node's outcome in GetMany: its data and stat, or why
// not (zk.ErrNoNode for a missing node, zk.ErrNoAuth...).
type GetResult struct {
	Data []byte
	Stat *Stat
	Err  error
}

// opMultiRead is ZooKeeper 3.6+'s read-only multi (ZooDefs.OpCode
// multiRead, ZOOKEEPER-3120 era): several reads in one request, each with
// its own outcome (unlike a transaction's all-or-nothing).
const opMultiRead = 22

// maxMultiRead bounds the paths of one GetMany request.
const maxMultiRead = 256

// GetMany reads the data and stat of several nodes in one request (no
// watch): ZooKeeper's multiRead (3.6+; go-zookeeper has none, so it is
// one of the framework's own requests). Each path has its own outcome in
// the result, in order; the error is the request's as a whole: bad input,
// the retry loop's, or curator.ErrUnimplemented from a server before 3.6
// (then read the nodes one by one). At most maxMultiRead (256) paths.
// Curator has no counterpart (CuratorCache reads one node per request).
func (c *Client) GetMany(ctx context.Context, paths []string) ([]GetResult, error) {
	const op = "getMany"
	if len(paths) == 0 || len(paths) > maxMultiRead {
		return nil, &OpError{op, "", fmt.Errorf("%w: %d paths (1 to %d)", curator.ErrInvalidArgument, len(paths), maxMultiRead)}
	}
	var body []byte
	for _, p := range paths {
		full, err := c.checkPath(op, p)
		if err != nil {
			return nil, err
		}
		body = appendMultiHeader(body, opGetData, false, -1)
		body = appendString(body, full)
		body = append(body, 0) // no watch
	}
	body = appendMultiHeader(body, -1, true, -1)
	if err := c.checkSize(op, paths[0], reqHeader+len(body)); err != nil {
		return nil, err
	}
	res, err := call(c, ctx, op, paths[0], func(conn *zk.Conn) ([]GetResult, error) {
		reply, err := c.ownRequest(conn, opMultiRead, body, nil, true)
		if err != nil {
			return nil, err
		}
		return parseMultiRead(reply, len(paths))
	})
	return res, err
}

func appendMultiHeader(b []byte, typ int32, done bool, errCode int32) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	if done {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return binary.BigEndian.AppendUint32(b, uint32(errCode))
}

var errBadMultiReply = errors.New("framework: malformed multiRead reply")

// parseMultiRead decodes a MultiResponse of n getData results
// (MultiHeader, then GetDataResponse or ErrorResponse, each).
func parseMultiRead(b []byte, n int) ([]GetResult, error) {
	out := make([]GetResult, 0, n)
	i32 := func() (int32, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		return v, true
	}
	i64 := func() (int64, bool) {
		if len(b) < 8 {
			return 0, false
		}
		v := int64(binary.BigEndian.Uint64(b))
		b = b[8:]
		return v, true
	}
	for {
		typ, ok1 := i32()
		if !ok1 || len(b) < 1 {
			return nil, errBadMultiReply
		}
		done := b[0] != 0
		b = b[1:]
		if _, ok := i32(); !ok {
			return nil, errBadMultiReply
		}
		if done {
			break
		}
		switch typ {
		case -1: // ErrorResponse
			code, ok := i32()
			if !ok {
				return nil, errBadMultiReply
			}
			out = append(out, GetResult{Err: codeError(code)})
		case opGetData:
			k, ok := i32()
			if !ok || int(k) > len(b) {
				return nil, errBadMultiReply
			}
			var data []byte
			if k >= 0 {
				data = make([]byte, k)
				copy(data, b[:k])
				b = b[k:]
			}
			st := &Stat{}
			var okAll = true
			get64 := func(p *int64) {
				v, ok := i64()
				*p, okAll = v, okAll && ok
			}
			get32 := func(p *int32) {
				v, ok := i32()
				*p, okAll = v, okAll && ok
			}
			get64(&st.Czxid)
			get64(&st.Mzxid)
			get64(&st.Ctime)
			get64(&st.Mtime)
			get32(&st.Version)
			get32(&st.Cversion)
			get32(&st.Aversion)
			get64(&st.EphemeralOwner)
			get32(&st.DataLength)
			get32(&st.NumChildren)
			get64(&st.Pzxid)
			if !okAll {
				return nil, errBadMultiReply
			}
			out = append(out, GetResult{Data: data, Stat: st})
		default:
			return nil, errBadMultiReply
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("%w: %d results for %d reads", errBadMultiReply, len(out), n)
	}
	return out, nil
}
