//go:build !unix

package ddblocal

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate ends the JVM; there is no SIGTERM to ask it politely.
func terminate(p *os.Process) error {
	return p.Kill()
}
