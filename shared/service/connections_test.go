package service_test

import (
	"net/http"
	"testing"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/service/servicetest"
)

// Warm functions keep their connections to DynamoDB: once a route has been
// served, 200 more of its requests open none, on a quiet machine or a busy
// one. A route that reads several items at once (a payment's buyer, cart
// and books) holds one connection for each call it makes at once; its
// first request opens them. A connection that is not kept (no keep-alive,
// an answer not read to its end, a request body's drain taken for a failed
// write: see awsenv.KeepConnections) opens one a request.
func TestWarmRequestsKeepTheirConnections(t *testing.T) {
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
		if n := p.Connections() - before; n > 0 {
			t.Errorf("%s %s: 200 warm requests opened %d new connections to DynamoDB, want none", c.method, c.path, n)
		}
	}
}
