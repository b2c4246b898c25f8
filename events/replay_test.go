// Package events holds sample API Gateway REST proxy events, one per route
// and case, for `sam local invoke`; this test replays each through its
// function's handler against DynamoDB Local and checks the status recorded
// in expected.json beside it.
package events

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/shared/demo"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/dynamo/dynamotest"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service"
	"github.com/quireapi/quire/shared/service/servicetest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// sample is one event file with the status it must produce.
type sample struct {
	group, file string
	status      int
	event       events.APIGatewayProxyRequest
}

// samples reads every group's events and expected statuses, failing on an
// event without a status or a status without an event.
func samples(t *testing.T) []sample {
	t.Helper()
	var out []sample
	for _, g := range routes.Groups() {
		var expected map[string]int
		b, err := os.ReadFile(filepath.Join(g.Name, "expected.json"))
		if err != nil {
			t.Fatalf("group %s has no events: %v", g.Name, err)
		}
		if err := json.Unmarshal(b, &expected); err != nil {
			t.Fatalf("%s/expected.json: %v", g.Name, err)
		}
		files, _ := filepath.Glob(filepath.Join(g.Name, "*.json"))
		var names []string
		for _, f := range files {
			if name := filepath.Base(f); name != "expected.json" {
				names = append(names, name)
			}
		}
		var listed []string
		for name := range expected {
			listed = append(listed, name)
		}
		slices.Sort(listed)
		if diff := cmp.Diff(names, listed); diff != "" {
			t.Errorf("%s: event files (-) and expected.json entries (+) differ:\n%s", g.Name, diff)
		}
		for _, name := range names {
			var ev events.APIGatewayProxyRequest
			b, _ := os.ReadFile(filepath.Join(g.Name, name))
			if err := json.Unmarshal(b, &ev); err != nil {
				t.Fatalf("%s/%s: %v", g.Name, name, err)
			}
			out = append(out, sample{g.Name, name, expected[name], ev})
		}
	}
	return out
}

// TestEveryRouteHasASample checks that each route has an event that
// succeeds, sent to the right group.
func TestEveryRouteHasASample(t *testing.T) {
	covered := map[string]bool{}
	for _, s := range samples(t) {
		if owner := routes.Owner(s.event.Resource); owner == "" {
			t.Errorf("%s/%s: resource %q is not in the route table", s.group, s.file, s.event.Resource)
		}
		key := s.event.HTTPMethod + " " + s.event.Resource
		for _, r := range routes.All() {
			if r.Key() == key && r.Group != s.group {
				t.Errorf("%s/%s: %s belongs to group %s", s.group, s.file, key, r.Group)
			}
		}
		if s.status < 400 {
			covered[key] = true
		}
	}
	for _, r := range routes.All() {
		if !covered[r.Key()] {
			t.Errorf("route %s has no sample event that succeeds", r.Key())
		}
	}
}

func TestReplay(t *testing.T) {
	for _, s := range samples(t) {
		t.Run(s.group+"/"+strings.TrimSuffix(s.file, ".json"), func(t *testing.T) {
			t.Parallel()
			cfg, db, tables := servicetest.Config(t)
			if _, err := demo.Seed(t.Context(), dynamo.NewUserStore(db, tables)); err != nil {
				t.Fatal(err)
			}
			fns, err := service.Handlers(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := fns[s.group](t.Context(), s.event)
			if err != nil {
				t.Fatalf("handler error: %v", err)
			}
			ct := http.Header(resp.MultiValueHeaders).Get("Content-Type")
			if resp.StatusCode != s.status {
				t.Errorf("status %d, want %d; body %s", resp.StatusCode, s.status, resp.Body)
			}
			switch {
			case resp.StatusCode == http.StatusNoContent:
				if resp.Body != "" {
					t.Errorf("204 with a body: %q", resp.Body)
				}
			case resp.StatusCode >= 400 && ct != rest.ProblemMediaType,
				resp.StatusCode < 400 && ct != "application/json":
				t.Errorf("status %d with Content-Type %q", resp.StatusCode, ct)
			}
		})
	}
}
