package locks

import (
	"strings"

	"github.com/gocurator/curator/framework"
)

// Contender names of the read-write lock, as Curator's (equal length).
const (
	ReadLockName  = "__READ__"
	WriteLockName = "__WRIT__"
)

// ReadWriteLock is Curator's InterProcessReadWriteLock: any number of
// readers, or one writer. Readers and writers share one queue under the
// lock path ("_c_<uuid>-__READ__<seq>", "_c_<uuid>-__WRIT__<seq>"): a writer
// holds when it is first; a reader holds when no writer is queued before it,
// and waits only on the first such writer, so interleaved readers and
// writers never stall (unlike kazoo 2.8, python-zk/kazoo#649).
//
// Each half is a Mutex: goroutines sharing one ReadWriteLock value take its
// halves one at a time, exactly like Mutex; for concurrent readers in one
// process, give each goroutine its own ReadWriteLock (NewReadWriteLock does
// no I/O).
//
// Downgrade: Read().Lock with the context handed out by Write().Acquire or
// Write().Do takes the read lock at once, even while another goroutine of
// the same ReadWriteLock waits for the read lock (that goroutine then gets
// it once the downgraded hold is released); its node takes the writer's
// place in the queue (CURATOR-621), so writers queued behind stay blocked
// after the write lock is released. Read().Participants and
// Write().Participants list that half's nodes only, as Curator's
// getParticipantNodes does. Upgrade (Write().Lock with a context handed
// out by Read()) fails with ErrUpgrade instead of blocking forever as in
// Curator.
type ReadWriteLock struct {
	read, write *Mutex
}

// NewReadWriteLock returns a read-write lock on path.
func NewReadWriteLock(client *framework.Client, path string, opts ...Option) (*ReadWriteLock, error) {
	o := buildOptions(opts)
	wd, err := NewDriver(client, path, WriteLockName, MaxLeases(1), ReadLockName, WriteLockName)
	if err != nil {
		return nil, err
	}
	rd, err := NewDriver(client, path, ReadLockName, readPredicate, ReadLockName, WriteLockName)
	if err != nil {
		return nil, err
	}
	rw := &ReadWriteLock{write: newMutex(wd, o), read: newMutex(rd, o)}
	rw.read.rw, rw.write.rw = rw, rw
	return rw, nil
}

// readPredicate: held iff no writer is queued before us; else wait on the
// first writer before us (Curator's readLockPredicate).
func readPredicate(contenders []string, ours int) (Decision, error) {
	for i := 0; i < ours; i++ {
		if strings.Contains(contenders[i], WriteLockName) {
			return Decision{Watch: contenders[i]}, nil
		}
	}
	return Decision{Held: true}, nil
}

// Read returns the read half (Curator's readLock()).
func (rw *ReadWriteLock) Read() *Mutex { return rw.read }

// Write returns the write half (Curator's writeLock()).
func (rw *ReadWriteLock) Write() *Mutex { return rw.write }

// downgradeName is the name of a read node that takes the place of the
// write node h holds: "__READ__<writer's sequence>".
func (rw *ReadWriteLock) downgradeName(h *hold) string {
	seq, _ := rw.write.d.sequence(h.c.name) // a held node always has one
	return ReadLockName + seq
}
