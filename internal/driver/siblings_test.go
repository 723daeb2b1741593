package driver

import (
	"testing"

	"github.com/gocurator/curator/framework"
)

// A contender's first decision on the parent's stat read behind its create
// (siblings) counts only when nothing under the path changed between the
// two: the stat's pzxid is the create's zxid. Our node deleted and another
// made in between leaves a NumChildren of 1 that is not ours.
func TestParentStatDecidesOnlyUnchanged(t *testing.T) {
	d := &Driver{name: "lock-", names: []string{"lock-"}, handoffs: newHandoffs()}
	for _, c := range []struct {
		zxid, pzxid int64
		siblings    int
	}{{zxid: 7, pzxid: 7, siblings: 1}, {zxid: 7, pzxid: 9, siblings: 0}, {zxid: 0, pzxid: 0, siblings: 0}} {
		h, _, _ := d.handoffs.create(nil, "/p")
		n := &framework.Created{Path: "/p/_c_6d7b3f51-0f1d-4b5e-8f5c-3f0c2b6a9e11-lock-0000000003", Zxid: c.zxid,
			Parent: &framework.Stat{NumChildren: 1, Pzxid: c.pzxid, Czxid: 2}}
		ct, err := d.enqueued(n, nil, h)
		if err != nil {
			t.Fatal(err)
		}
		if ct.siblings != c.siblings || ct.czxid != 2 {
			t.Errorf("create zxid %d, parent pzxid %d: siblings %d, czxid %d; want %d, 2", c.zxid, c.pzxid, ct.siblings, ct.czxid, c.siblings)
		}
	}
}
