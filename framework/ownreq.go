package framework

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// The framework's own requests: what go-zookeeper v1.0.4 cannot send
// (addWatch, removeWatches), written by the link on the current connection
// between go-zookeeper's packets (under sock.wmu, as every write), their
// replies read and kept from go-zookeeper (sock.packet).
//
// Xids. go-zookeeper numbers its requests from 1 up, masked to 31 bits
// (Conn.nextXid: never negative); the server echoes a request's xid and
// gives negative ones no meaning of its own. Java's client reserves a few
// small negative ones (notification -1, ping -2, auth -4, SetWatches -8,
// which the link uses too). Our own requests take xids from a private
// counter in [ownXidMin, ownXidMin+ownXidSpan): far below every reserved
// one, so that no reply can be taken for another's.
const (
	ownXidMin  = math.MinInt32
	ownXidSpan = 1 << 24
)

func isOwnXid(xid int32) bool { return xid >= ownXidMin && xid < ownXidMin+ownXidSpan }

// Op codes of the own requests (ZooDefs.OpCode) and of SetWatches2, which
// the link writes instead of SetWatches when persistent watches are held.
const (
	opRemoveWatches = 18
	opSetWatches2   = 105
	opAddWatch      = 106
)

// ownCall is one own request written and not yet answered: the reply's
// error code goes to ch (closed, with no code, if the connection is gone
// first); onReply, if set, runs on the reading goroutine when the reply is
// read, before any packet behind it (in the order of the server).
type ownCall struct {
	ch      chan ownResult
	onReply func(code int32)
	body    bool // the reply's body is wanted (else it is skipped)
}

// ownResult is an own request's reply: its error code and, if asked for,
// its body (after the reply header).
type ownResult struct {
	code int32
	body []byte
}

// errOwnLost is an own request's connection gone before its reply: its
// outcome is unknown, a connection loss, retried by the retry loop.
var errOwnLost = &codedError{curator.ErrConnectionLoss, errors.New("framework: connection lost before the reply")}

// send writes the own request (op code, body) on the link's current
// connection and waits for its reply (its error code, and its body if
// wantBody). A link with no live connection, a connection gone before the
// reply or one whose credentials are not yet written fail as a connection
// loss (errOwnLost), which the retry loop retries; send is only called
// from a call's attempt.
func (l *link) send(op int32, body []byte, onReply func(int32), wantBody bool) (ownResult, error) {
	l.mu.Lock()
	s := l.cur
	l.mu.Unlock()
	if s == nil {
		return ownResult{}, errOwnLost
	}
	xid := int32(ownXidMin + int64(l.ownSeq.Add(1)%ownXidSpan))
	call := &ownCall{ch: make(chan ownResult, 1), onReply: onReply, body: wantBody}
	p := make([]byte, 0, 12+len(body))
	p = binary.BigEndian.AppendUint32(p, uint32(8+len(body)))
	p = binary.BigEndian.AppendUint32(p, uint32(xid))
	p = binary.BigEndian.AppendUint32(p, uint32(op))
	p = append(p, body...)
	s.wmu.Lock()
	s.ownMu.Lock()
	if s.ownDead || !s.sent || s.auths < l.needAuth {
		s.ownMu.Unlock()
		s.wmu.Unlock()
		return ownResult{}, errOwnLost
	}
	s.own[xid] = call
	s.ownMu.Unlock()
	s.stamp(p, nil)
	_, err := s.Conn.Write(p)
	s.wmu.Unlock()
	if err != nil {
		s.failOwn()
		s.Conn.Close() // go-zookeeper's reader ends, and with it the connection
	}
	r, ok := <-call.ch
	if !ok {
		return ownResult{}, errOwnLost
	}
	return r, nil
}

// ownReply reads the reply (total bytes, its header peeked) of an own
// request and hands it to its waiter (on the reading goroutine).
func (s *sock) ownReply(xid, code int32, total int) error {
	s.ownMu.Lock()
	call := s.own[xid]
	delete(s.own, xid)
	s.ownMu.Unlock()
	var body []byte
	if call != nil && call.body {
		if err := s.skip(20); err != nil {
			return err
		}
		body = make([]byte, total-20)
		if err := s.take(body); err != nil {
			return err
		}
	} else if err := s.skip(total); err != nil {
		return err
	}
	if call == nil {
		return nil
	}
	if call.onReply != nil {
		call.onReply(code)
	}
	call.ch <- ownResult{code, body}
	return nil
}

// take reads len(b) bytes of the stream into b.
func (s *sock) take(b []byte) error {
	for len(b) > 0 {
		if s.rpos == s.rend {
			if err := s.peek(1); err != nil {
				return err
			}
		}
		k := copy(b, s.rbuf[s.rpos:s.rend])
		s.rpos += k
		b = b[k:]
	}
	return nil
}

// failOwn fails every own request of the connection not yet answered:
// the connection is gone.
func (s *sock) failOwn() {
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	s.ownDead = true
	for xid, call := range s.own {
		close(call.ch)
		delete(s.own, xid)
	}
}

// ZooKeeper error codes of the own requests' replies.
const (
	codeOK            = 0
	codeUnimplemented = -6
	codeBadArguments  = -8
	codeNoWatcher     = -121
)

// errNoWatcher is removeWatches' reply when the server holds no such
// watch (KeeperException.NoWatcherException).
var errNoWatcher = errors.New("zk: no such watcher (NOWATCHER)")

// codeError maps an own request's reply code to an error (nil for OK).
// UNIMPLEMENTED, a server older than the request (addWatch before
// ZooKeeper 3.6), is curator.ErrUnimplemented.
func codeError(code int32) error {
	switch code {
	case codeOK:
		return nil
	case codeUnimplemented:
		return fmt.Errorf("%w: the server does not know this request (ZooKeeper before 3.6 has no addWatch)", curator.ErrUnimplemented)
	case codeNoWatcher:
		return errNoWatcher
	case codeBadArguments:
		return zk.ErrBadArguments
	case errNoNode:
		return zk.ErrNoNode
	case -4:
		return errOwnLost
	case -112:
		return zk.ErrSessionExpired
	case -118:
		return zk.ErrSessionMoved
	case -102:
		return zk.ErrNoAuth
	}
	return fmt.Errorf("zk: server error code %d", code)
}
