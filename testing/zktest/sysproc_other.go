//go:build unix && !linux

package zktest

import "syscall"

// sysProcAttr puts the JVM in its own process group. Without Linux's
// parent-death signal a JVM outlives a test process that is killed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
