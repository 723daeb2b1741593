package shared_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func sharedPath(t testing.TB) string { return testenv.Path(t, "/sharedtest") }
