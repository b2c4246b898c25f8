//go:build unix && !linux

package ddblocal

import (
	"os"
	"syscall"
)

// sysProcAttr leaves the JVM in its parent's process group: without Linux's
// parent-death signal, Ctrl-C reaching it too is what keeps it from
// outliving an interrupted parent.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate asks the JVM to exit.
func terminate(p *os.Process) error {
	return p.Signal(syscall.SIGTERM)
}
