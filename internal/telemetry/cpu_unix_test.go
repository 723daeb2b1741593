//go:build unix

package telemetry_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used: the
// client's own work, apart from the server's and the network's wait.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
