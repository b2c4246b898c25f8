package main

import (
	"net"
	"testing"
)

// make run listens on loopback unless HOST says otherwise.
func TestListen(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		loopback bool
	}{
		{map[string]string{"PORT": "0"}, true},
		{map[string]string{"PORT": "0", "HOST": "0.0.0.0"}, false},
	} {
		ln, err := listen(func(k string) string { return c.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		ip := ln.Addr().(*net.TCPAddr).IP
		ln.Close()
		if ip.IsLoopback() != c.loopback {
			t.Errorf("%v: listens on %v, want loopback %v", c.env, ip, c.loopback)
		}
	}
}
