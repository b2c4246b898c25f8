package events

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// faultEvents are, per function, a sample event whose handling reads
// DynamoDB.
var faultEvents = map[string]string{
	routes.GroupUsers:   "get.json",
	routes.GroupCatalog: "product-v1.json",
	routes.GroupCarts:   "get.json",
	routes.GroupOrders:  "orders.json",
	routes.GroupConfig:  "get.json",
	routes.GroupAuth:    "login.json",
	routes.GroupHealth:  "health.json",
}

// Through each function's Lambda handler, as Lambda runs it: a DynamoDB
// that throttles, fails or hangs gets a 503 problem with Retry-After,
// before the invocation's deadline, never a handler error (which API
// Gateway would turn into a 502).
func TestFunctionsUnderFaults(t *testing.T) {
	// No request reaches DynamoDB through the proxy: the cases share one
	// set of tables with the demo data.
	demoCfg := servicetest.DemoConfig(t, servicetest.Option{DynamoDB: true})
	all := samples(t)
	for _, g := range routes.Groups() {
		file, ok := faultEvents[g.Name]
		if !ok {
			t.Errorf("function %s has no fault event", g.Name)
			continue
		}
		var ev events.APIGatewayProxyRequest
		for _, s := range all {
			if s.group == g.Name && s.file == file {
				ev = s.event
			}
		}
		for _, c := range []struct {
			name     string
			rule     ddbfault.Rule
			lifetime time.Duration // the invocation's remaining time
		}{
			{"throttled", ddbfault.Rule{Fault: ddbfault.Throttle}, 10 * time.Second},
			{"server error", ddbfault.Rule{Fault: ddbfault.Internal}, 10 * time.Second},
			{"reset", ddbfault.Rule{Fault: ddbfault.Reset}, 10 * time.Second},
			{"hanging", ddbfault.Rule{Fault: ddbfault.Delay, Delay: time.Minute}, 1500 * time.Millisecond},
			{"refused", ddbfault.Rule{}, 10 * time.Second}, // no rule: the proxy's port is closed
		} {
			t.Run(g.Name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				cfg := demoCfg
				p, err := ddbfault.Start(dynamotest.Endpoint(t), 1)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				if c.rule.Fault != "" {
					p.Set(c.rule)
				} else if err := p.Refuse(); err != nil {
					t.Fatal(err)
				}
				cfg.DynamoDB.Endpoint = p.URL()
				fns, err := api.Handlers(cfg)
				if err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(c.lifetime)
				ctx, cancel := context.WithDeadline(t.Context(), deadline)
				defer cancel()
				resp, err := fns[g.Name](ctx, ev)
				if err != nil {
					t.Fatalf("handler error (a 502 from API Gateway): %v", err)
				}
				if time.Now().After(deadline) {
					t.Errorf("the handler answered after the invocation's deadline: Lambda would have stopped it")
				}
				h := http.Header(resp.MultiValueHeaders)
				var prob rest.Problem
				if err := json.Unmarshal([]byte(resp.Body), &prob); err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != http.StatusServiceUnavailable || h.Get("Retry-After") == "" ||
					h.Get("Content-Type") != rest.ProblemMediaType || prob.Type != rest.ProblemType(quire.EUNAVAILABLE) {
					t.Errorf("%d, Retry-After %q, Content-Type %q: %s; want a 503 problem with Retry-After",
						resp.StatusCode, h.Get("Retry-After"), h.Get("Content-Type"), resp.Body)
				}
				if c.rule.Fault != "" && len(p.Injected()) == 0 {
					t.Error("no fault was injected")
				}
			})
		}
	}
}
