package zktest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/testing/zktest"
)

// A server started with session timeout bounds runs with them (conf says
// so) and SessionTimeoutFor clamps a request into them, as ZooKeeper does.
func TestSessionTimeouts(t *testing.T) {
	t.Parallel()
	s, err := zktest.NewServer(zktest.WithSessionTimeouts(time.Second, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	conf, err := s.FourLetter("conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"minSessionTimeout=1000", "maxSessionTimeout=2000"} {
		if !strings.Contains(conf, want) {
			t.Fatalf("conf lacks %s:\n%s", want, conf)
		}
	}
	for req, want := range map[time.Duration]time.Duration{
		20 * time.Second:        2 * time.Second,
		100 * time.Millisecond:  time.Second,
		1500 * time.Millisecond: 1500 * time.Millisecond,
	} {
		if got, err := s.SessionTimeoutFor(req); err != nil || got != want {
			t.Errorf("SessionTimeoutFor(%v) = %v, %v; want %v", req, got, err, want)
		}
	}
	for _, bad := range [][2]time.Duration{{0, time.Second}, {2 * time.Second, time.Second}} {
		if _, err := zktest.NewServer(zktest.WithSessionTimeouts(bad[0], bad[1])); err == nil {
			t.Errorf("WithSessionTimeouts(%v, %v) accepted", bad[0], bad[1])
		}
	}
}
