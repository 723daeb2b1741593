package zktest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// portLease is a loopback port picked for a server, reserved against other
// zktest users until release.
//
// Ports come from outside the kernel's ephemeral range when there is room
// (on Linux, usually 10000-32767): a stopped server keeps its port for
// Start, and an ephemeral port could meanwhile be handed to any outgoing
// connection on the machine (or to a client's self-connection to the very
// port it is retrying), which would make the restart fail to bind. Against
// other zktest servers, in this process or others, the port is reserved by
// listening on the Linux abstract unix socket "@gocurator-zktest-port-N",
// which the kernel releases when the process dies.
type portLease struct {
	port int
	lock net.Listener // nil when no reservation is possible
}

func (l *portLease) release() {
	if l != nil && l.lock != nil {
		l.lock.Close()
		l.lock = nil
	}
}

func releaseAll(ls []*portLease) {
	for _, l := range ls {
		l.release()
	}
}

// pickRange returns the range [lo, hi] to pick ports from, or ok=false to
// let the kernel pick.
func pickRange() (lo, hi int, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	elo, err1 := strconv.Atoi(f[0])
	ehi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	const floor = 10000
	switch {
	case elo-floor >= 2000:
		return floor, elo - 1, true
	case 65535-ehi >= 2000:
		return ehi + 1, 65535, true
	}
	return 0, 0, false
}

// reservePorts picks n distinct free loopback ports.
func reservePorts(n int) ([]*portLease, error) {
	lo, hi, ok := pickRange()
	leases := make([]*portLease, 0, n)
	if !ok {
		ports, err := freePorts(n)
		if err != nil {
			return nil, err
		}
		for _, p := range ports {
			leases = append(leases, &portLease{port: p})
		}
		return leases, nil
	}
	for tries := 0; len(leases) < n; tries++ {
		if tries > 5000 {
			releaseAll(leases)
			return nil, fmt.Errorf("zktest: no free loopback port found in %d-%d", lo, hi)
		}
		port := lo + rand.IntN(hi-lo+1)
		var lock net.Listener
		if runtime.GOOS == "linux" {
			l, err := net.Listen("unix", "@gocurator-zktest-port-"+strconv.Itoa(port))
			if err != nil {
				continue // another zktest server has it
			}
			lock = l
		}
		probe, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			if lock != nil {
				lock.Close()
			}
			continue
		}
		probe.Close()
		leases = append(leases, &portLease{port: port, lock: lock})
	}
	return leases, nil
}

// freePorts returns n distinct free loopback ports chosen by the kernel.
// All listeners are held until every port is chosen so that they differ.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("zktest: picking a free port: %w", err)
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
