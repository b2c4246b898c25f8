package ddblocal

import (
	"os"
	"syscall"
)

// sysProcAttr puts the JVM in its own process group, so that Ctrl-C in a
// terminal reaches only the Go program, which then stops the server itself,
// and has the kernel kill the JVM when its parent dies without doing so (a
// test binary killed at its timeout, `kill -9`). Pdeathsig follows the OS
// thread that started the JVM; the Go runtime only ends threads that a
// goroutine locked and did not unlock, which nothing here does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// terminate asks the JVM to exit.
func terminate(p *os.Process) error {
	return p.Signal(syscall.SIGTERM)
}
