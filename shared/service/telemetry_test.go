package service_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service/servicetest"
	"github.com/quireapi/quire/shared/telemetry"
)

// TestEveryRouteLogs: every route's request gets one line from its
// function: the route's template without its version prefix, the status
// it answered, the caller, the version served, the trace, and its metrics
// in the embedded metric format.
func TestEveryRouteLogs(t *testing.T) {
	api := servicetest.New(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	fill := strings.NewReplacer("{id}", "1", "{product_id}", "1", "{file}", "quire.js")
	for _, r := range routes.All() {
		t.Run(r.Key(), func(t *testing.T) {
			body := ""
			if r.Method == "POST" || r.Method == "PUT" {
				body = "{}"
			}
			client := admin
			if r.Access == routes.Public {
				client = api.Bearer("")
			}
			resp := client.Do(t, r.Method, fill.Replace(r.Path), body)
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
