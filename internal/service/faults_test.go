package service_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// faultyShop runs Quire with the demo data behind a fault proxy, and
// returns it with clients of the demo admin and of Grace (id 2).
func faultyShop(t *testing.T) (p *ddbfault.Proxy, api *servicetest.API, admin, grace *servicetest.Client) {
	t.Helper()
	p, opt := servicetest.Faults(t)
	api = servicetest.New(t, opt, servicetest.Option{Demo: true})
	return p, api, api.As(t, 1, quire.RoleAdmin), api.As(t, 2, quire.RoleCustomer)
}

// wantUnavailable fails unless r is a 503 problem of type unavailable with
// Retry-After.
func wantUnavailable(t *testing.T, r servicetest.Response) {
	t.Helper()
	var p rest.Problem
	if err := json.Unmarshal([]byte(r.Body), &p); err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Content-Type") != rest.ProblemMediaType ||
		p.Type != rest.ProblemType(quire.EUNAVAILABLE) || r.Header.Get("Retry-After") == "" {
		t.Errorf("%s %s = %d %q, Retry-After %q: %s; want 503 problem %s with Retry-After",
			r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Retry-After"),
			r.Body, quire.EUNAVAILABLE)
	}
}

// Every way DynamoDB fails a call, after the SDK's bounded retries, is a
// 503 problem with Retry-After, never a 500 or the gateway's 502, and a
// write it fails changes nothing and publishes nothing.
func TestDynamoDBFailuresAre503(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	for _, c := range []struct {
		name     string
		rule     ddbfault.Rule
		method   string
		path     string
		body     string
		attempts int  // calls of rule's operation the request makes; 0: not counted
		admin    bool // sent by the admin (a deposit), not by Grace
	}{
		{"throttled read", ddbfault.Rule{Fault: ddbfault.Throttle, Operation: "GetItem", Table: "users"}, "GET", "/users/2", "", dynamo.MaxAttempts, false},
		{"throughput exceeded", ddbfault.Rule{Fault: ddbfault.Throughput, Operation: "GetItem"}, "GET", "/products/1", "", dynamo.MaxAttempts, false},
		{"server error on a query", ddbfault.Rule{Fault: ddbfault.Internal, Operation: "Query"}, "GET", "/orders", "", dynamo.MaxAttempts, false},
		{"connection reset", ddbfault.Rule{Fault: ddbfault.Reset}, "GET", "/cart", "", 0, false},
		{"throttled transaction", ddbfault.Rule{Fault: ddbfault.TransactionThrottle, Operation: "TransactWriteItems"}, "POST", "/users/2/deposit", `{"amount": 5.00}`, dynamo.MaxAttempts, true},
		{"throttled cart write", ddbfault.Rule{Fault: ddbfault.Throttle, Operation: "TransactWriteItems"}, "POST", "/cart", `{"product_id": 1, "quantity": 1}`, dynamo.MaxAttempts, false},
		{"throttled payment", ddbfault.Rule{Fault: ddbfault.Throttle, Operation: "TransactWriteItems", Table: "orders"}, "POST", "/products/1/buy", `{"quantity": 1}`, dynamo.MaxAttempts, false},
		{"slow configuration", ddbfault.Rule{Fault: ddbfault.Delay, Delay: 15 * time.Second, Operation: "GetItem", Table: "config"}, "GET", "/config", "", 1 + dynamo.MaxAttempts, false}, // the caller's account, then the head's attempts
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, api, admin, grace := faultyShop(t)
			who := grace
			if c.admin {
				who = admin
			}
			published := len(api.Events(t))
			before := grace.Expect(t, "GET", "/users/2", "", http.StatusOK).Body
			cart := grace.Expect(t, "GET", "/cart", "", http.StatusOK).Body
			calls := p.Calls(c.rule.Operation)
			p.Set(c.rule)
			wantUnavailable(t, who.Do(t, c.method, c.path, c.body))
			if c.attempts > 0 {
				if got := p.Calls(c.rule.Operation) - calls; got != c.attempts {
					t.Errorf("%d %s calls, want %d: the SDK's attempts, bounded", got, c.rule.Operation, c.attempts)
				}
			}
			if p.Injected()[c.rule.Fault] == 0 {
				t.Fatal("no fault was injected")
			}
			p.Set()
			if after := grace.Expect(t, "GET", "/users/2", "", http.StatusOK).Body; after != before {
				t.Errorf("the user changed:\n%s\n%s", before, after)
			}
			if after := grace.Expect(t, "GET", "/cart", "", http.StatusOK).Body; after != cart {
				t.Errorf("the cart changed:\n%s\n%s", cart, after)
			}
			orders := grace.Expect(t, "GET", "/orders", "", http.StatusOK).Body
			if n := strings.Count(orders, `"user_id"`); n != 1 {
				t.Errorf("%d orders after a failed request, want the demo's 1", n)
			}
			if evs := api.Events(t); len(evs) != published {
				t.Errorf("a failed request published %v", evs[published:])
			}
		})
	}
}

// A DynamoDB that refuses connections is a 503, and Quire recovers once it
// takes them again.
func TestRefusedConnectionsAre503(t *testing.T) {
	p, _, admin, grace := faultyShop(t)
	if err := p.Refuse(); err != nil {
		t.Fatal(err)
	}
	wantUnavailable(t, grace.Do(t, "GET", "/users/2", ""))
	wantUnavailable(t, admin.Do(t, "POST", "/users/2/deposit", `{"amount": 5.00}`))
	if err := p.Accept(); err != nil {
		t.Fatal(err)
	}
	r := grace.Expect(t, "GET", "/users/2", "", http.StatusOK)
	if !strings.Contains(r.Body, `"balance":50.00`) {
		t.Errorf("balance changed by a refused deposit: %s", r.Body)
	}
}

// The health check answers 503 with Retry-After when its GetItem fails,
// without retrying it.
func TestHealthWhenDynamoDBFails(t *testing.T) {
	p, api, _, _ := faultyShop(t)
	p.Set(ddbfault.Rule{Fault: ddbfault.Internal, Operation: "GetItem"})
	r := api.Do(t, "GET", "/health", "")
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("GET /health = %d, Retry-After %q, want 503 with Retry-After", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if n := p.Calls("GetItem"); n != 1 {
		t.Errorf("the health check made %d GetItem calls, want 1", n)
	}
}

// A throttled request is logged once: its request line, a warning naming
// the operation and the table, with the throttled attempts counted, and
// never as an internal error.
func TestThrottlingIsLoggedOnce(t *testing.T) {
	p, api, _, grace := faultyShop(t)
	p.Set(ddbfault.Rule{Fault: ddbfault.Throttle, Operation: "GetItem", Table: "users"})
	r := grace.Do(t, "GET", "/users/2", "")
	wantUnavailable(t, r)
	id := r.Header.Get("X-Amzn-Requestid")
	line := servicetest.Line(t, id)
	msg, _ := line["error"].(string)
	if line["level"] != "WARN" || !strings.Contains(msg, "GetItem") || !strings.Contains(msg, api.Tables.Physical("users")) ||
		!strings.Contains(msg, "ThrottlingException") || line["problem"] != rest.ProblemType(quire.EUNAVAILABLE) {
		t.Errorf("request line %v, want a warning naming GetItem, the users table and ThrottlingException", line)
	}
	if line["DynamoDBThrottles"] != float64(dynamo.MaxAttempts) || line["DynamoDBRetries"] != float64(dynamo.MaxAttempts-1) || line["ServerErrors"] != 1.0 {
		t.Errorf("metrics: throttles %v, retries %v, server errors %v", line["DynamoDBThrottles"], line["DynamoDBRetries"], line["ServerErrors"])
	}
	for _, b := range servicetest.Lines() {
		if strings.Contains(string(b), id) && !strings.Contains(string(b), `"msg":"request"`) && !strings.Contains(string(b), `"level":"DEBUG"`) {
			t.Errorf("another line of the request: %s", b)
		}
	}
}

// One failed attempt is retried by the SDK, and the request succeeds with
// its effect once, and its event once.
func TestOneFailedAttemptIsRetried(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	for _, fault := range []ddbfault.Kind{ddbfault.Throttle, ddbfault.Throughput, ddbfault.Internal, ddbfault.TransactionThrottle, ddbfault.Reset, ddbfault.Lost} {
		t.Run(string(fault), func(t *testing.T) {
			t.Parallel()
			p, api, admin, grace := faultyShop(t)
			published := len(api.Events(t))
			p.Set(ddbfault.Rule{Fault: fault, Operation: "TransactWriteItems", Count: 1})
			r := admin.Expect(t, "POST", "/users/2/deposit", `{"amount": 5.00}`, http.StatusOK)
			if !strings.Contains(r.Body, `"balance":55.00`) {
				t.Errorf("answer %s, want the balance 55.00", r.Body)
			}
			if p.Injected()[fault] != 1 {
				t.Fatalf("faults injected: %v", p.Injected())
			}
			contains(t, grace, "/users/2", 1, `"balance":55.00`)
			if evs := api.Events(t)[published:]; len(evs) != 1 || evs[0].Type != quire.EventUserFunded {
				t.Errorf("published %v, want one user.funded", evs)
			}
		})
	}
}
