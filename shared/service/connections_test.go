package service_test

import (
	"net/http"
	"testing"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/service/servicetest"
)

// Warm functions keep their connections to DynamoDB: once a route has been
// served, 200 more of its requests open no new connection. A route that
// reads several items at once (a payment's buyer, cart and books) holds
// one connection for each call it makes at once; its first request opens
// them.
//
// starved connections are allowed: net/http drops a connection when the
// write of its request is not confirmed within 50 ms of reading the answer
// (maxWriteWaitBeforeConnReuse), which happens only when the process waits
// that long for a CPU. Here that takes other work on every core at once;
// a connection that is not kept (no keep-alive, an answer not read to its
// end) opens one per request.
func TestWarmRequestsKeepTheirConnections(t *testing.T) {
	const starved = 2
	p, faults := servicetest.Faults(t)
	api := servicetest.New(t, faults)
	api.LoadDemo(t)
	customer, admin := api.As(t, 2, quire.RoleCustomer), api.As(t, 1, quire.RoleAdmin)
	for _, c := range []struct {
		who          *servicetest.Client
		method, path string
		body         string
		status       int
	}{
		{api.Bearer(""), "GET", "/health", "", http.StatusOK},
		{customer, "GET", "/users/2", "", http.StatusOK},
		{customer, "GET", "/cart", "", http.StatusOK},
		{admin, "POST", "/users/3/deposit", `{"amount": 0.01}`, http.StatusOK},
	} {
		c.who.Expect(t, c.method, c.path, c.body, c.status) // opens what the route needs
		before := p.Connections()
		for range 200 {
			c.who.Expect(t, c.method, c.path, c.body, c.status)
		}
		if n := p.Connections() - before; n > starved {
			t.Errorf("%s %s: 200 warm requests opened %d new connections to DynamoDB, want none", c.method, c.path, n)
		} else if n > 0 {
			t.Logf("%s %s: 200 warm requests opened %d new connections, starved of CPU", c.method, c.path, n)
		}
	}
}
