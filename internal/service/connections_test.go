package service_test

import (
	"net/http"
	"testing"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// Warm functions keep their connections to DynamoDB: once a route has been
// served, its next requests open none. A route that reads several items at
// once (a payment's buyer, cart and books) holds one connection for each
// call it makes at once; its first request opens them. A connection that
// is not kept (no keep-alive, an answer not read to its end) opens one a
// request, which 20 show. A request body's drain taken for a failed write
// closes one only when the answer comes first, as it may at a fraction of a
// CPU: awsenv's TestKeepConnections makes that happen every time, and
// make bench counts the connections of 200 warm requests at a deployed
// function's share.
func TestWarmRequestsKeepTheirConnections(t *testing.T) {
	const warmRequests = 20
	p, faults := servicetest.Faults(t)
	api := servicetest.New(t, faults, servicetest.Option{Demo: true})
	customer, admin := api.As(t, 2, quire.RoleCustomer), api.As(t, 1, quire.RoleAdmin)
	for _, c := range []struct {
		who          *servicetest.Client
		method, path string
		body         string
		status       int
	}{
		{api.Anonymous(), "GET", "/health", "", http.StatusOK},
		{customer, "GET", "/users/2", "", http.StatusOK},
		{customer, "GET", "/cart", "", http.StatusOK},
		{admin, "POST", "/users/3/deposit", `{"amount": 0.01}`, http.StatusOK},
	} {
		c.who.Expect(t, c.method, c.path, c.body, c.status) // opens what the route needs
		before := p.Connections()
		for range warmRequests {
			c.who.Expect(t, c.method, c.path, c.body, c.status)
		}
		if n := p.Connections() - before; n > 0 {
			t.Errorf("%s %s: %d warm requests opened %d new connections to DynamoDB, want none", c.method, c.path, warmRequests, n)
		}
	}
}
