package dynamotest

import (
	"os"
	"path/filepath"
	"syscall"
)

// take returns one of endpoints that no other test binary holds, waiting
// for one when all are held, and the function that lets it go. A binary
// holds an endpoint by an exclusive lock of a file named for it in the
// temporary directory, which the kernel releases when the binary exits
// however it ends. With one endpoint there is nothing to choose: every
// binary shares it.
func take(endpoints []string) (string, func(), error) {
	if len(endpoints) == 1 {
		return endpoints[0], func() {}, nil
	}
	files := make([]*os.File, len(endpoints))
	closeAll := func(except int) {
		for i, f := range files {
			if f != nil && i != except {
				f.Close()
			}
		}
	}
	for i, ep := range endpoints {
		u, err := parseEndpoint(ep)
		if err != nil {
			closeAll(-1)
			return "", nil, err
		}
		name := filepath.Join(os.TempDir(), "quire-dynamotest-"+u.Hostname()+"-"+u.Port()+".lock")
		if files[i], err = os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600); err != nil {
			closeAll(-1)
			return "", nil, err
		}
		if syscall.Flock(int(files[i].Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			closeAll(i)
			return ep, func() { files[i].Close() }, nil
		}
	}
	// All are held: wait for the one this process's id points to.
	i := os.Getpid() % len(endpoints)
	if err := syscall.Flock(int(files[i].Fd()), syscall.LOCK_EX); err != nil {
		closeAll(-1)
		return "", nil, err
	}
	closeAll(i)
	return endpoints[i], func() { files[i].Close() }, nil
}
