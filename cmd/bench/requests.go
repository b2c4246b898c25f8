package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/dynamotest"
)

// requestCase is one request of a route, with the count it should make.
type requestCase struct {
	route, name    string
	method, path   string
	body, as       string      // as: "admin", "customer", "session" (the customer's, of demo.CustomerSessionID) or "" for no token
	status, target int         // target 0: no target
	header         http.Header // more request headers, or nil
}

// cases returns a request for every route of the groups that touch
// DynamoDB. They run in order on the demo data (users 1 to 3 and the demo
// configuration document) and moreBooks.
func cases() ([]requestCase, error) {
	demoTag, err := configETag([]byte(demo.Config))
	if err != nil {
		return nil, err
	}
	put := `{"email":"grace@quire.example","first_name":"Grace","last_name":"Hopper","role":"customer","status":"ACTIVE"}`
	moved := strings.Replace(put, "grace@", "grace.hopper@", 1)
	movedBack := fmt.Sprintf(`{"email":"grace@quire.example","first_name":"Grace","last_name":"Hopper","current_password":%q}`, demo.CustomerPassword)
	login := func(email, pw string) string { return fmt.Sprintf(`{"email":%q,"password":%q}`, email, pw) }
	refresh := fmt.Sprintf(`{"refresh_token":%q}`, demo.CustomerRefreshToken)
	return []requestCase{
		{"GET /health", "", "GET", "/health", "", "", 200, 1, nil},
		{"GET /status", "", "GET", "/status", "", "", 200, 1, nil},
		{"GET /openapi.json", "", "GET", "/openapi.json", "", "", 200, 0, nil},
		{"GET /", "", "GET", "/", "", "", 302, 0, nil},
		{"GET /docs", "", "GET", "/docs", "", "", 200, 0, nil},
		{"GET /docs/{file}", "Swagger UI's script", "GET", "/docs/swagger-ui-bundle.js", "", "", 200, 0, nil},
		{"GET /favicon.ico", "", "GET", "/favicon.ico", "", "", 200, 0, nil},
		{"POST /login", "success", "POST", "/login", login(demo.CustomerEmail, demo.CustomerPassword), "", 200, 3, nil},
		{"POST /login", "wrong password", "POST", "/login", login(demo.CustomerEmail, "wrong password"), "", 401, 2, nil},
		{"POST /login", "unknown email", "POST", "/login", login("nobody@quire.example", "wrong password"), "", 401, 2, nil},
		{"POST /tokens", "the demo session's refresh token", "POST", "/tokens", refresh, "", 200, 2, nil},
		{"DELETE /session", "the demo session", "DELETE", "/session", "", "session", 204, 2, nil},
		{"POST /tokens", "the demo session's, ended", "POST", "/tokens", refresh, "", 401, 1, nil},
		{"GET /.well-known/jwks.json", "", "GET", "/.well-known/jwks.json", "", "", 200, 0, nil},
		{"GET /landing", "", "GET", "/landing", "", "", 200, 2, nil},
		{"GET /authors", "one page of 2", "GET", "/authors?limit=2", "", "customer", 200, 3, nil},
		{"GET /authors/{id}", "", "GET", "/authors/1", "", "customer", 200, 2, nil},
		{"GET /authors/{id}/books", "", "GET", "/authors/2/books", "", "customer", 200, 2, nil},
		{"GET /products", "one page of 2", "GET", "/products?limit=2", "", "customer", 200, 3, nil},
		{"GET /products", "a page of 20 (the default)", "GET", "/products", "", "customer", 200, 3, nil},
		{"GET /products/{id}", "v1", "GET", "/api/v1/products/1", "", "customer", 200, 2, nil},
		{"POST /admin/authors", "", "POST", "/admin/authors", `{"name":"Virginia Woolf"}`, "admin", 201, 2, nil},
		{"POST /admin/products", "", "POST", "/admin/products", `{"name":"Mathilda","price":8.50,"status":"AVAILABLE","author_id":1}`, "admin", 201, 3, nil},
		{"PUT /admin/products/{id}", "archive (v2)", "PUT", "/api/v2/admin/products/4", `{"name":"Emma","price":8.75,"status":"ARCHIVED","author_id":2}`, "admin", 200, 3, nil},
		{"GET /users/{id}", "", "GET", "/users/1", "", "admin", 200, 2, nil},
		{"GET /users/{id}", "v2, with its profile", "GET", "/api/v2/users/1?embed=profile", "", "admin", 200, 2, nil},
		{"GET /users", "admin: one page of 2", "GET", "/users?limit=2", "", "admin", 200, 3, nil},
		{"GET /users", "admin: ?role=customer, one page of 2", "GET", "/users?role=customer&limit=2", "", "admin", 200, 3, nil},
		{"GET /users", "admin: ?embed=profile, one page of 2", "GET", "/users?embed=profile&limit=2", "", "admin", 200, 3, nil},
		{"GET /users", "customer: their own", "GET", "/users", "", "customer", 200, 2, nil},
		{"GET /admin/users", "one page of 2", "GET", "/admin/users?limit=2", "", "admin", 200, 3, nil},
		{"POST /users", "", "POST", "/users", `{"email":"new@example.com","first_name":"N","last_name":"U","password":"correct horse"}`, "", 201, 1, nil},
		{"GET /users/{id}/profile", "", "GET", "/users/2/profile", "", "customer", 200, 2, nil},
		{"PUT /users/{id}/profile", "", "PUT", "/users/2/profile", `{"bio":"Admiral.","newsletter":true}`, "customer", 200, 3, nil},
		{"POST /users/{id}/deposit", "", "POST", "/users/2/deposit", `{"amount":25.00}`, "admin", 200, 3, nil},
		{"POST /users/{id}/close", "", "POST", "/users/2/close", "", "customer", 200, 3, nil},
		{"PUT /users/{id}", "same email", "PUT", "/users/2", put, "admin", 200, 3, nil},
		{"PUT /users/{id}", "new email", "PUT", "/users/2", moved, "admin", 200, 3, nil},
		{"PUT /users/{id}", "one's own new email, with the current password", "PUT", "/users/2", movedBack, "customer", 200, 4, nil},
		{"GET /cart", "", "GET", "/cart", "", "customer", 200, 3, nil},
		{"POST /cart", "", "POST", "/cart", `{"product_id":1,"quantity":1}`, "customer", 200, 4, nil},
		{"DELETE /cart/items/{product_id}", "", "DELETE", "/cart/items/1", "", "customer", 204, 3, nil},
		{"POST /products/{id}/buy", "", "POST", "/products/3/buy", `{"quantity":1}`, "customer", 201, 4, nil},
		{"POST /pay", "a cart of 2 books, first", "POST", "/pay", "", "customer", 201, 6, http.Header{"Idempotency-Key": {"bench-pay-1"}}},
		{"POST /pay", "the same key again: a replay", "POST", "/pay", "", "customer", 201, 4, http.Header{"Idempotency-Key": {"bench-pay-1"}}},
		{"GET /orders", "", "GET", "/orders", "", "customer", 200, 2, nil},
		{"GET /orders/{id}", "", "GET", "/orders/1", "", "customer", 200, 2, nil},
		{"DELETE /users/{id}", "", "DELETE", "/users/3", "", "admin", 204, 4, nil},
		{"GET /config", "the demo's, 568 B", "GET", "/config", "", "customer", 200, 3, nil},
		{"GET /config", "If-None-Match: its ETag", "GET", "/config", "", "customer", 304, 2, http.Header{"If-None-Match": {demoTag}}},
		{"PUT /admin/config", "replace it", "PUT", "/admin/config", `{"shop":{"name":"Quire Books","currency":"EUR"}}`, "admin", 204, 3, nil},
	}, nil
}

type requestRow struct {
	requestCase
	ops      []string
	capacity float64 // capacity units, as DynamoDB Local reports them
	calls    []call  // as the recorder saw them
	trips    int     // sequential round trips
	// steady is calls once the functions' caches are warm: a GET's second
	// run, right after the first; a write's only run.
	steady      []call
	steadyTrips int
	took        time.Duration // median, of the steady runs
}

// timingPasses is how many times countRequests runs the cases again, on
// fresh tables and without the recorder, whose reads around each request
// take time, to time them: each case's time is the median of its steady
// runs.
const timingPasses = 3

// countRequests runs every case through the local gateway with every
// group's handler on fresh tables with the demo data and moreBooks,
// counting and recording DynamoDB requests, a GET twice (see steady), then
// timingPasses times more to time them; it fails when a route has no case.
func countRequests(ctx context.Context, cfg service.Config) ([]requestRow, error) {
	all, err := cases()
	if err != nil {
		return nil, err
	}
	rows := make([]requestRow, len(all))
	times := make([][]time.Duration, len(all))
	for pass := range 1 + timingPasses {
		record := pass == 0
		cfg.DynamoDB.Tables = dynamo.PrefixedTableNames(fmt.Sprintf("bench-count-%d-%d-", time.Now().Unix(), pass))
		if err := seed(ctx, cfg.DynamoDB); err != nil {
			return nil, err
		}
		l, err := newLocalAPI(cfg, record)
		if err != nil {
			return nil, err
		}
		if err := moreBooks(l); err != nil {
			return nil, err
		}
		for i, rc := range all {
			runs := 1
			if rc.method == "GET" {
				runs = 2 // as it comes, and again on warm caches
			}
			for run := range runs {
				calls, ops, capacity, took, err := l.run(rc)
				if err != nil {
					return nil, err
				}
				last := run == runs-1
				if !record {
					if last {
						times[i] = append(times[i], took)
					}
					continue
				}
				if run == 0 {
					rows[i] = requestRow{requestCase: rc, ops: ops, capacity: capacity, calls: calls, trips: roundTrips(spans(calls))}
				}
				if last {
					rows[i].steady, rows[i].steadyTrips = calls, roundTrips(spans(calls))
				}
			}
		}
	}
	covered := map[string]bool{}
	for i := range rows {
		rows[i].took = median(times[i])
		covered[rows[i].route] = true
	}
	var missing []string
	for _, r := range routes.All() {
		if key := r.Resource().Key(); !covered[key] {
			missing, covered[key] = append(missing, key), true
		}
	}
	if missing != nil {
		return nil, fmt.Errorf("routes without a request count case: %s", strings.Join(missing, ", "))
	}
	return rows, nil
}

// run sends rc through the gateway and returns what the recorder recorded
// (nil without one), what the counter counted and how long it took.
func (l *localAPI) run(rc requestCase) ([]call, []string, float64, time.Duration, error) {
	_, took, err := l.do(rc.method, rc.path, rc.body, rc.as, rc.header, rc.status)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	ops, capacity := l.counter.Take()
	var calls []call
	if l.recorder != nil {
		if calls, err = l.recorder.Take(); err != nil {
			return nil, nil, 0, 0, fmt.Errorf("%s %s: %w", rc.method, rc.path, err)
		}
	}
	return calls, ops, capacity, took, nil
}

func spans(calls []call) []span {
	out := make([]span, len(calls))
	for i, c := range calls {
		out[i] = c.span
	}
	return out
}

// moreBooks adds 20 books by author 3 to the demo's 5, so that a page of
// products has as many as a real catalog's (rest.DefaultLimit), without
// changing what the cases' other pages, the landing page or the carts
// hold; it discards what they count.
func moreBooks(l *localAPI) error {
	for i := range rest.DefaultLimit {
		body := fmt.Sprintf(`{"name":"The Piazza Tales, volume %d","price":12.50,"status":"AVAILABLE","author_id":3}`, i+1)
		if _, _, err := l.do("POST", "/admin/products", body, "admin", nil, http.StatusCreated); err != nil {
			return err
		}
	}
	l.counter.Take()
	if l.recorder != nil {
		if _, err := l.recorder.Take(); err != nil {
			return err
		}
	}
	return nil
}

// roundTripTarget is the most sequential round trips a request should
// take: 1 for a GET of one resource (0 for none), 2 for a write, 3 for
// POST /pay and for a change proved by the current password, whose guess
// is counted between the read that finds the email and the commit; and
// one more on a route that takes a token, whose router reads the caller's
// account first (see access.Callers).
func roundTripTarget(c requestCase) int {
	n := 1
	switch method, _, _ := strings.Cut(c.route, " "); {
	case c.route == "POST /pay", strings.Contains(c.body, `"current_password"`):
		n = 3
	case method != "GET":
		n = 2
	case collections[c.route]:
		return 0
	}
	if c.as != "" {
		n++
	}
	return n
}

// collections are the GET routes of collections: a page may take a Query
// and a read of its items.
var collections = map[string]bool{
	"GET /authors": true, "GET /products": true, "GET /authors/{id}/books": true,
	"GET /users": true, "GET /admin/users": true, "GET /orders": true,
}

// localAPI is the whole API behind the local gateway, with the authorizer,
// on DynamoDB clients whose requests counter counts and, when it is not
// nil, recorder records.
type localAPI struct {
	gw       *apigw.Gateway
	counter  *dynamotest.Counter
	recorder *recorder
	tokens   map[string]string // by role: "admin", "customer"
}

func newLocalAPI(cfg service.Config, record bool) (*localAPI, error) {
	l := &localAPI{counter: &dynamotest.Counter{}}
	cfg.DynamoDBOptions = []func(*dynamodb.Options){l.counter.Option}
	if record {
		r, err := newRecorder(cfg.DynamoDB)
		if err != nil {
			return nil, err
		}
		l.recorder = r
		cfg.DynamoDBOptions = append(cfg.DynamoDBOptions, r.Option)
	}
	var err error
	if l.gw, err = api.Gateway(cfg); err != nil {
		return nil, err
	}
	if l.tokens, err = demoTokens(cfg); err != nil {
		return nil, err
	}
	return l, nil
}

// do sends a request through the gateway, with a JSON body unless body is
// empty, the token of as unless it is empty and header, and returns the
// answer and how long the gateway took to give it: an error unless it has
// status.
func (l *localAPI) do(method, path, body, as string, header http.Header, status int) (*httptest.ResponseRecorder, time.Duration, error) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, vs := range header {
		for _, v := range vs {
			req.Header.Add(name, v)
		}
	}
	if as != "" {
		req.Header.Set("Authorization", "Bearer "+l.tokens[as])
	}
	rec := httptest.NewRecorder()
	start := time.Now()
	l.gw.ServeHTTP(rec, req)
	took := time.Since(start)
	if rec.Code != status {
		return nil, 0, fmt.Errorf("%s %s = %d, want %d: %.500s", method, path, rec.Code, status, rec.Body)
	}
	return rec, took, nil
}

// demoTokens signs a token for the demo admin (id 1) and customer (id 2),
// and one of the customer in the demo session.
func demoTokens(cfg service.Config) (map[string]string, error) {
	keys, err := auth.ParseKeySet([]byte(cfg.SigningKeys))
	if err != nil {
		return nil, err
	}
	issuer, err := auth.NewIssuer(keys, cfg.Tokens)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, u := range map[string]struct {
		id   quire.ID
		role quire.Role
	}{"admin": {1, quire.RoleAdmin}, "customer": {2, quire.RoleCustomer}} {
		if out[name], err = issuer.Issue(u.id, u.role); err != nil {
			return nil, err
		}
	}
	if out["session"], err = issuer.IssueInSession(2, quire.RoleCustomer, demo.CustomerSessionID); err != nil {
		return nil, err
	}
	return out, nil
}
