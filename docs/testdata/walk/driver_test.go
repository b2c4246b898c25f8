package events

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/cache"
	"github.com/quireapi/quire/internal/testing/servicetest"
	"github.com/quireapi/quire/internal/walk"
)

// TestWalk sends each sample event WALK_EVENTS names through its
// function's Lambda handler, built as deployed on tables holding the demo
// data, and writes what each request entered to WALK_OUT.
func TestWalk(t *testing.T) {
	var names []string
	if err := json.Unmarshal([]byte(os.Getenv("WALK_EVENTS")), &names); err != nil {
		t.Fatal(err)
	}
	out := map[string][]walk.Entry{}
	for _, name := range names {
		cfg := servicetest.DemoConfig(t, servicetest.Option{DynamoDB: true})
		cfg.CatalogStaleness = cache.DefaultCatalogStaleness
		fns, err := api.Handlers(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		walk.Start()
		resp, err := fns[filepath.Dir(name)](t.Context(), ev)
		entries := walk.Stop()
		if err != nil || resp.StatusCode >= 300 {
			t.Fatalf("%s: %d %v %s", name, resp.StatusCode, err, resp.Body)
		}
		out[name] = entries
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("WALK_OUT"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
