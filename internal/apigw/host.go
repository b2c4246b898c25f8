package apigw

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Hosts returns the hosts a local gateway listening at addr serves, as
// Gateway.Hosts holds them: addr itself; localhost when addr is a loopback
// address; localhost, 127.0.0.1 and [::1] when addr is every interface's
// (0.0.0.0); and each of names, a comma-separated list of host names or
// addresses, each with a port or with addr's. It returns an error for a
// name that is not a host with an optional port.
func Hosts(addr *net.TCPAddr, names string) ([]string, error) {
	port := strconv.Itoa(addr.Port)
	hosts := []string{addr.IP.String()}
	switch {
	case addr.IP.IsUnspecified():
		hosts = append(hosts, "localhost", "127.0.0.1", "::1")
	case addr.IP.IsLoopback():
		hosts = append(hosts, "localhost")
	}
	for i, h := range hosts {
		hosts[i] = net.JoinHostPort(h, port)
	}
	for _, name := range strings.Split(names, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		h, ok := authority(name, port)
		if !ok {
			return nil, fmt.Errorf("host %q: want a name or address, with or without a port (api.example.com, 192.168.1.5:8080, [::1])", name)
		}
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	return slices.Compact(hosts), nil
}

// serves reports whether g answers a request whose Host header is host:
// one of g.Hosts, or any host when g.Hosts is empty.
//
// A Host without a port names port 80, plain HTTP's default (RFC 9110,
// section 4.2.1): the gateway's links carry the Host's port, so a Host
// must name the port the client reached, or links would lead to a port
// nobody serves, or to another server of this machine. A proxy in front of
// the gateway that sends its own port or none is named with that port
// (name:80).
func (g *Gateway) serves(host string) bool {
	if len(g.Hosts) == 0 {
		return true
	}
	h, ok := authority(host, "80")
	return ok && slices.Contains(g.Hosts, h)
}

// authority returns host, a Host header's value or a name of Hosts, as
// Gateway.Hosts holds it: host:port, the name in lower case, with port def
// when host has none. ok is false for anything but a host with an optional
// port.
func authority(host, def string) (string, bool) {
	u, err := url.Parse("http://" + host)
	if err != nil || u.Host != host || u.Hostname() == "" {
		return "", false
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), cmp.Or(u.Port(), def)), true
}
