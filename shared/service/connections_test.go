package service_test

import (
	"net/http"
	"testing"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/service/servicetest"
)

// Warm functions keep their connections to DynamoDB: once a route has been
// served, more of its requests reuse them. A route that reads several items
// at once (a payment's buyer, cart and books) holds one connection for each
// call it makes at once; its first request opens them. On a quiet machine
// 200 more requests open none. Beside other tests some answers' connections
// do not go back to net/http's pool (httptrace reports no PutIdleConn, and
// no error): up to a tenth of them here. So the test allows a quarter: a
// connection that is never kept (no keep-alive, an answer not read to its
// end) opens one a request.
func TestWarmRequestsKeepTheirConnections(t *testing.T) {
	const starved = 50 // of 200
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
			t.Errorf("%s %s: 200 warm requests opened %d new connections to DynamoDB: it keeps none", c.method, c.path, n)
		} else if n > 0 {
			t.Logf("%s %s: 200 warm requests opened %d new connections", c.method, c.path, n)
		}
	}
}
