package framework_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// ValidateName takes one path component ZooKeeper accepts, and refuses
// the rest with ErrInvalidPath (an ErrInvalidArgument).
func TestValidateName(t *testing.T) {
	for _, ok := range []string{"a", "member-1", "_c_x-lock-", "é"} {
		if err := framework.ValidateName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "/", ".", "..", "a\x00", "\u0001"} {
		err := framework.ValidateName(bad)
		if !errors.Is(err, curator.ErrInvalidPath) || !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%q: %v, want ErrInvalidPath", bad, err)
		}
	}
}
