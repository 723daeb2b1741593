package zktest

import "syscall"

// sysProcAttr puts the JVM in its own process group (so that a kill reaches
// it and nothing else) and has the kernel SIGKILL it when the thread that
// started it exits, which in practice means when the test process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
