package service_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/swaggerui"
	"github.com/quireapi/quire/internal/telemetry"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestEveryRouteLogs: every route's request gets one line from its
// function: the route's template without its version prefix, the status
// it answered, the caller, the version served, the trace, and its metrics
// in the embedded metric format.
func TestEveryRouteLogs(t *testing.T) {
	api := servicetest.New(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	api.As(t, 2, quire.RoleCustomer) // the user the routes of a user close and delete, not the admin
	fill := strings.NewReplacer("{id}", "1", "{product_id}", "1", "{file}", "quire.js")
	for _, r := range routes.All() {
		t.Run(r.Key(), func(t *testing.T) {
			if err := swaggerui.Built(); err != nil && strings.HasPrefix(r.Path, "/docs") {
				t.Skipf("the docs page is not in this build: run `make deps` (npm ci, which needs Node): %v", err)
			}
			body := ""
			if r.Method == "POST" || r.Method == "PUT" {
				body = "{}"
			}
			client := admin
			if r.Access == routes.Public {
				client = api.Anonymous()
			}
			path := fill.Replace(r.Path)
			if strings.HasPrefix(r.Resource().Path, "/users/{id}") {
				path = strings.Replace(r.Path, "{id}", "2", 1)
			}
			resp := client.Do(t, r.Method, path, body)
			line := servicetest.Line(t, resp.Header.Get("X-Amzn-Requestid"))
			want := map[string]any{
				"level": "INFO", "function": r.Group, "route": r.Resource().Key(), "status": float64(resp.StatusCode),
				"Requests": 1.0,
			}
			if resp.StatusCode >= 500 {
				t.Errorf("%s answered %d: %s", r.Key(), resp.StatusCode, resp.Body)
			}
			if r.Access != routes.Public {
				want["caller"], want["role"] = "1", "admin"
			}
			if r.Versioned {
				want["version"] = float64(max(r.Version, 1))
			}
			for k, v := range want {
				if line[k] != v {
					t.Errorf("%s = %v, want %v", k, line[k], v)
				}
			}
			if trace, _ := line["trace_id"].(string); !strings.HasPrefix(trace, "1-") {
				t.Errorf("trace_id %q", trace)
			}
			if ms, ok := line["latency_ms"].(float64); !ok || ms <= 0 || ms != line[telemetry.Latency] {
				t.Errorf("latency_ms %v, Latency %v", line["latency_ms"], line[telemetry.Latency])
			}
			b, _ := json.Marshal(line)
			if err := telemetry.ValidateEMF(b, time.Now()); err != nil {
				t.Errorf("not EMF: %v: %s", err, b)
			}
		})
	}
}

// TestMetricsCountWhatHappened: a wrong password is a failed login, a
// replayed key an idempotent replay, and each transaction conflict the
// proxy injects into concurrent deposits is counted once, in the line of
// the request that met it.
func TestMetricsCountWhatHappened(t *testing.T) {
	p, conflicts := servicetest.Conflicts(t)
	api := servicetest.New(t, conflicts, servicetest.Option{Demo: true})
	metric := func(r servicetest.Response, name string) float64 {
		t.Helper()
		v, _ := servicetest.Line(t, r.Header.Get("X-Amzn-Requestid"))[name].(float64)
		return v
	}

	wrong := api.Do(t, "POST", "/login", fmt.Sprintf(`{"email":%q,"password":"not her password"}`, demo.CustomerEmail))
	right := api.Do(t, "POST", "/login", fmt.Sprintf(`{"email":%q,"password":%q}`, demo.CustomerEmail, demo.CustomerPassword))
	if wrong.StatusCode != 401 || metric(wrong, telemetry.FailedLogins) != 1 || right.StatusCode != 200 || metric(right, telemetry.FailedLogins) != 0 {
		t.Errorf("failed logins: %d counted %v, %d counted %v", wrong.StatusCode, metric(wrong, telemetry.FailedLogins), right.StatusCode, metric(right, telemetry.FailedLogins))
	}

	admin := api.As(t, 1, quire.RoleAdmin)
	first := admin.Do(t, "POST", "/users/3/deposit", `{"amount": 1.00}`, "Idempotency-Key", "metrics-1")
	again := admin.Do(t, "POST", "/users/3/deposit", `{"amount": 1.00}`, "Idempotency-Key", "metrics-1")
	if first.StatusCode != 200 || metric(first, telemetry.IdempotentReplays) != 0 || again.Header.Get("Idempotent-Replayed") != "true" || metric(again, telemetry.IdempotentReplays) != 1 {
		t.Errorf("replays: first %v, again %v", metric(first, telemetry.IdempotentReplays), metric(again, telemetry.IdempotentReplays))
	}

	before := p.Injected()[ddbfault.Conflict]
	answers := make([]servicetest.Response, 20)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = admin.Do(t, "POST", "/users/2/deposit", `{"amount": 1.00}`) })
	}
	wg.Wait()
	counted := 0.0
	for _, a := range answers {
		if a.StatusCode != 200 {
			t.Errorf("a deposit answered %d: %s", a.StatusCode, a.Body)
		}
		counted += metric(a, telemetry.DynamoDBConflicts)
	}
	injected := p.Injected()[ddbfault.Conflict] - before
	if injected == 0 || counted != float64(injected) {
		t.Errorf("%v conflicts counted in the lines, %d injected", counted, injected)
	}
}
