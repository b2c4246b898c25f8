package service_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/httpapi"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// lostAnswer is a write whose DynamoDB answer is lost once: DynamoDB
// applies the write, the connection drops before its answer, and the SDK
// sends the same call again.
type lostAnswer struct {
	route string // the route key, without version prefix
	name  string
	op    string // the DynamoDB operation whose answer is lost
	table string // on this table only, when not ""
	admin bool
	// session sends Grace's token of the demo session
	// (demo.CustomerSessionID), as login and refresh issue them.
	session bool
	method  string
	path    string
	body    string
	header  []string
	status  int
	answer  []string // in the answer's body
	events  []string // the types of the events it publishes
	check   func(t *testing.T, admin, grace *servicetest.Client)
	// answered, when set, checks what the answer r leads to (a refresh
	// token's use) on api.
	answered func(t *testing.T, api *servicetest.API, r servicetest.Response)
}

// refresh trades a refresh token at POST /tokens; it fails the test unless
// the answer is status, and returns the new pair on a 200.
func refresh(t *testing.T, api *servicetest.API, token string, status int) httpapi.TokenResponse {
	t.Helper()
	body, _ := json.Marshal(httpapi.RefreshRequest{RefreshToken: &token})
	r := api.Do(t, "POST", "/tokens", string(body))
	if r.StatusCode != status {
		t.Fatalf("POST /tokens = %d %s, want %d", r.StatusCode, r.Body, status)
	}
	var tr httpapi.TokenResponse
	if status == http.StatusOK {
		if err := json.Unmarshal([]byte(r.Body), &tr); err != nil || tr.RefreshToken == "" {
			t.Fatalf("POST /tokens answered %s: %v", r.Body, err)
		}
	}
	return tr
}

// refreshOf returns the refresh token of a login's or refresh's answer r.
func refreshOf(t *testing.T, r servicetest.Response) string {
	t.Helper()
	var tr httpapi.TokenResponse
	if err := json.Unmarshal([]byte(r.Body), &tr); err != nil || tr.RefreshToken == "" {
		t.Fatalf("no refresh token in %s: %v", r.Body, err)
	}
	return tr.RefreshToken
}

// contains fails unless GET path as c answers 200 with each of want, n
// times each (once when n is 0).
func contains(t *testing.T, c *servicetest.Client, path string, n int, want ...string) {
	t.Helper()
	body := c.Expect(t, "GET", path, "", http.StatusOK).Body
	for _, w := range want {
		if got := strings.Count(body, w); got != max(n, 1) {
			t.Errorf("GET %s has %q %d times, want %d:\n%s", path, w, got, max(n, 1), body)
		}
	}
}

var lostAnswers = []lostAnswer{
	{route: "POST /login", op: "TransactWriteItems", table: "sessions", method: "POST", path: "/login",
		body:   `{"email": "grace@quire.example", "password": "` + demo.CustomerPassword + `"}`,
		status: http.StatusOK, answer: []string{`"refresh_token":`},
		answered: func(t *testing.T, api *servicetest.API, r servicetest.Response) {
			refresh(t, api, refreshOf(t, r), http.StatusOK)
		}},
	{route: "POST /login", name: "its guess's count", op: "UpdateItem", table: "sessions", method: "POST", path: "/login",
		body:   `{"email": "grace@quire.example", "password": "` + demo.CustomerPassword + `"}`,
		status: http.StatusOK, answer: []string{`"refresh_token":`},
		answered: func(t *testing.T, api *servicetest.API, r servicetest.Response) {
			refresh(t, api, refreshOf(t, r), http.StatusOK)
		}},
	{route: "POST /tokens", op: "UpdateItem", table: "sessions", method: "POST", path: "/tokens",
		body:   `{"refresh_token": "` + demo.CustomerRefreshToken + `"}`,
		status: http.StatusOK, answer: []string{`"refresh_token":`},
		answered: func(t *testing.T, api *servicetest.API, r servicetest.Response) {
			// The rotation took effect once: the new token is the live one
			// (and rotates again), the old one is dead.
			next := refresh(t, api, refreshOf(t, r), http.StatusOK)
			refresh(t, api, demo.CustomerRefreshToken, http.StatusUnauthorized)
			refresh(t, api, next.RefreshToken, http.StatusUnauthorized) // the reuse ended the session
		}},
	{route: "DELETE /session", op: "TransactWriteItems", table: "sessions", session: true, method: "DELETE", path: "/session",
		status: http.StatusNoContent,
		answered: func(t *testing.T, api *servicetest.API, _ servicetest.Response) {
			refresh(t, api, demo.CustomerRefreshToken, http.StatusUnauthorized)
			api.InSession(t, 2, quire.RoleCustomer, demo.CustomerSessionID).Expect(t, "DELETE", "/session", "", http.StatusNotFound)
		}},
	{events: []string{"user.created"}, route: "POST /users", name: "sign-up", op: "TransactWriteItems", method: "POST", path: "/users",
		body:   `{"email": "new@example.com", "first_name": "New", "last_name": "Reader", "password": "a long passphrase"}`,
		status: http.StatusCreated, answer: []string{`"email":"new@example.com"`},
		check: func(t *testing.T, admin, _ *servicetest.Client) {
			contains(t, admin, "/users?limit=100", 1, `"email":"new@example.com"`)
		}},
	{events: []string{"user.changed"}, route: "PUT /users/{id}", name: "same email", op: "TransactWriteItems", method: "PUT", path: "/users/2",
		body:   `{"email": "grace@quire.example", "first_name": "Amazing", "last_name": "Grace"}`,
		status: http.StatusOK, answer: []string{`"first_name":"Amazing"`},
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/users/2", 1, `"first_name":"Amazing"`, `"balance":50.00`)
		}},
	{events: []string{"user.changed"}, route: "PUT /users/{id}", name: "new email", op: "TransactWriteItems", method: "PUT", path: "/users/2",
		body:   `{"email": "hopper@example.com", "first_name": "Grace", "last_name": "Hopper", "current_password": "` + demo.CustomerPassword + `"}`,
		status: http.StatusOK, answer: []string{`"email":"hopper@example.com"`},
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/users/2", 1, `"email":"hopper@example.com"`)
		}},
	{events: []string{"user.deleted"}, route: "DELETE /users/{id}", op: "TransactWriteItems", admin: true, method: "DELETE", path: "/users/3",
		status: http.StatusNoContent,
		check: func(t *testing.T, admin, _ *servicetest.Client) {
			admin.Expect(t, "GET", "/users/3", "", http.StatusNotFound)
		}},
	{events: []string{"user.changed"}, route: "PUT /users/{id}/profile", op: "TransactWriteItems", method: "PUT", path: "/users/2/profile",
		body:   `{"bio": "Rear admiral", "location": "Arlington", "website": "https://example.com", "newsletter": true}`,
		status: http.StatusOK, answer: []string{`"bio":"Rear admiral"`},
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/users/2/profile", 1, `"bio":"Rear admiral"`)
		}},
	{events: []string{"user.funded"}, route: "POST /users/{id}/deposit", name: "no key", op: "TransactWriteItems", admin: true, method: "POST", path: "/users/2/deposit",
		body: `{"amount": 5.00}`, status: http.StatusOK, answer: []string{`"balance":55.00`},
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/users/2", 1, `"balance":55.00`)
		}},
	{events: []string{"user.funded"}, route: "POST /users/{id}/deposit", name: "key", op: "TransactWriteItems", admin: true, method: "POST", path: "/users/2/deposit",
		body: `{"amount": 5.00}`, header: []string{"Idempotency-Key", "deposit-1"}, status: http.StatusOK, answer: []string{`"balance":55.00`},
		check: func(t *testing.T, admin, grace *servicetest.Client) {
			r := admin.Do(t, "POST", "/users/2/deposit", `{"amount": 5.00}`, "Idempotency-Key", "deposit-1")
			if r.StatusCode != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("the key's second request = %d, Idempotent-Replayed %q, want its replay", r.StatusCode, r.Header.Get("Idempotent-Replayed"))
			}
			contains(t, grace, "/users/2", 1, `"balance":55.00`)
		}},
	{events: []string{"user.closed"}, route: "POST /users/{id}/close", op: "TransactWriteItems", method: "POST", path: "/users/2/close",
		status: http.StatusOK, answer: []string{`"status":"CLOSED"`},
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/users/2", 1, `"status":"CLOSED"`)
		}},
	{events: []string{"author.created"}, route: "POST /admin/authors", op: "TransactWriteItems", admin: true, method: "POST", path: "/admin/authors",
		body: `{"name": "Octavia Butler"}`, status: http.StatusCreated, answer: []string{`"name":"Octavia Butler"`},
		check: func(t *testing.T, admin, _ *servicetest.Client) {
			contains(t, admin, "/authors?limit=100", 1, `"name":"Octavia Butler"`)
		}},
	{events: []string{"product.created"}, route: "POST /admin/products", op: "TransactWriteItems", admin: true, method: "POST", path: "/admin/products",
		body:   `{"name": "Kindred", "price": 9.99, "status": "AVAILABLE", "author_id": 1}`,
		status: http.StatusCreated, answer: []string{`"name":"Kindred"`},
		check: func(t *testing.T, admin, _ *servicetest.Client) {
			contains(t, admin, "/products?limit=100", 1, `"name":"Kindred"`)
		}},
	{events: []string{"product.changed"}, route: "PUT /admin/products/{id}", op: "TransactWriteItems", admin: true, method: "PUT", path: "/admin/products/1",
		body:   `{"name": "Frankenstein; or, The Modern Prometheus", "price": 14.99, "status": "AVAILABLE", "author_id": 1}`,
		status: http.StatusOK, answer: []string{`"price":14.99`},
		check: func(t *testing.T, admin, _ *servicetest.Client) {
			contains(t, admin, "/products/1", 1, `"price":14.99`)
		}},
	{route: "POST /cart", op: "TransactWriteItems", method: "POST", path: "/cart",
		body: `{"product_id": 1, "quantity": 2}`, status: http.StatusOK, answer: []string{`"product_id":1,`},
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/cart", 1, `"product_id":1,`, `"quantity":2,`)
		}},
	{route: "DELETE /cart/items/{product_id}", op: "TransactWriteItems", method: "DELETE", path: "/cart/items/3",
		status: http.StatusNoContent,
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/cart", 1, `"product_id":5,`)
			if body := grace.Expect(t, "GET", "/cart", "", http.StatusOK).Body; strings.Contains(body, `"product_id":3,`) {
				t.Errorf("book 3 is still in the cart: %s", body)
			}
		}},
	{events: []string{"order.placed"}, route: "POST /products/{id}/buy", op: "TransactWriteItems", method: "POST", path: "/products/1/buy",
		body: `{"quantity": 1}`, status: http.StatusCreated, answer: []string{`"total":12.99`},
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/orders", 2, `"user_id":2`)
			contains(t, grace, "/users/2", 1, `"balance":37.01`)
		}},
	{events: []string{"order.placed"}, route: "POST /pay", op: "TransactWriteItems", method: "POST", path: "/pay",
		header: []string{"Idempotency-Key", "pay-1"}, status: http.StatusCreated, answer: []string{`"total":24.49`},
		check: func(t *testing.T, _, grace *servicetest.Client) {
			contains(t, grace, "/orders", 2, `"user_id":2`)
			contains(t, grace, "/users/2", 1, `"balance":25.51`)
			contains(t, grace, "/cart", 1, `"items":[]`)
		}},
	{events: []string{"config.changed"}, route: "PUT /admin/config", op: "TransactWriteItems", admin: true, method: "PUT", path: "/admin/config",
		body: `{"theme": "dark", "limits": {"cart": 50}}`, status: http.StatusNoContent,
		check: func(t *testing.T, admin, _ *servicetest.Client) {
			contains(t, admin, "/config", 1, `"theme":"dark"`)
		}},
}

// A write whose DynamoDB answer is lost, and which the SDK sends again,
// has its effect once and answers as if nothing had been lost, with or
// without an idempotency key: a transaction's retry carries the same
// ClientRequestToken, which DynamoDB answers without applying it again (a
// logout's too), and a single-item PUT's retry finds its own content hash
// and stops, as a refresh's rotation finds its own refresh token's hash. A
// login's guess counted twice is one guess more, cleared by the login.
func TestLostAnswersTakeEffectOnce(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	covered := map[string]bool{}
	for _, c := range lostAnswers {
		covered[c.route] = true
		name := c.route
		if c.name != "" {
			name += " " + c.name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, api, admin, grace := faultyShop(t)
			who := grace
			switch {
			case c.admin:
				who = admin
			case c.session:
				who = api.InSession(t, 2, quire.RoleCustomer, demo.CustomerSessionID)
			}
			p.Set(ddbfault.Rule{Fault: ddbfault.Lost, Operation: c.op, Table: c.table, Count: 1})
			calls, published := p.Calls(c.op), len(api.Events(t))
			r := who.Do(t, c.method, c.path, c.body, c.header...)
			if r.StatusCode != c.status {
				t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, r.StatusCode, r.Body, c.status)
			}
			for _, w := range c.answer {
				if !strings.Contains(r.Body, w) {
					t.Errorf("answer %s lacks %s", r.Body, w)
				}
			}
			if n := p.Injected()[ddbfault.Lost]; n != 1 {
				t.Fatalf("%d answers lost, want 1", n)
			}
			if n := p.Calls(c.op) - calls; n < 2 {
				t.Errorf("%d %s calls: the lost one was not sent again", n, c.op)
			}
			if c.check != nil {
				c.check(t, admin, grace)
			}
			// Its event, if it has one, is published once too.
			if evs := api.Events(t)[published:]; len(evs) != len(c.events) {
				t.Errorf("published %v, want %v", evs, c.events)
			} else {
				for i, ev := range evs {
					if ev.Type != c.events[i] {
						t.Errorf("published %s, want %s", ev.Type, c.events[i])
					}
				}
			}
			if c.answered != nil {
				c.answered(t, api, r)
			}
		})
	}
	for _, rt := range routes.All() {
		key := rt.Resource().Key()
		if rt.Method != "GET" && !covered[key] {
			t.Errorf("write route %s has no lost-answer case", key)
			covered[key] = true
		}
	}
}
