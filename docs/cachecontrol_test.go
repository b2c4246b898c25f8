package docs

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/quireapi/quire/docs/markdown"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/swaggerui"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestCacheControl: the table of Cache-Control by route in conventions.md
// has a row for each GET route without a version prefix (the prefixed
// ones answer alike), and each row says what the route answers, on the
// demo data, to the caller it names.
func TestCacheControl(t *testing.T) {
	rows := markdown.MustTable(t, "conventions.md", "route", "caller", "Cache-Control")
	api := servicetest.New(t, servicetest.Option{Demo: true})
	callers := map[string]*servicetest.Client{
		"anyone":   api.Bearer(""),
		"customer": api.As(t, 2, quire.RoleCustomer),
		"admin":    api.As(t, 1, quire.RoleAdmin),
	}
	var orders []struct{ ID quire.ID }
	if r := callers["customer"].Expect(t, "GET", "/orders", "", http.StatusOK); json.Unmarshal([]byte(r.Body), &orders) != nil || len(orders) == 0 {
		t.Fatalf("the demo customer has no order: %s", r.Body)
	}
	// The last parameter of each path, where it has one.
	params := map[string]string{"/users/{id}": "2", "/users/{id}/profile": "2", "/products/{id}": "1", "/authors/{id}": "1",
		"/authors/{id}/books": "1", "/orders/{id}": orders[0].ID.String(), "/docs/{file}": "swagger-ui.css"}
	var got, want []string
	for _, r := range routes.All() {
		if r.Method == http.MethodGet && !strings.HasPrefix(r.Path, "/api/") {
			want = append(want, r.Method+" "+r.Path)
		}
	}
	for _, row := range rows {
		route, caller, cc := markdown.CodeSpans(row.Cells[0]), row.Cells[1], markdown.CodeSpans(row.Cells[2])
		if len(route) != 1 || len(cc) != 1 || callers[caller] == nil {
			t.Errorf("%s: want a route and a Cache-Control in backticks, and one of the callers %v", row, slices.Sorted(maps.Keys(callers)))
			continue
		}
		got = append(got, route[0])
		t.Run(route[0], func(t *testing.T) {
			path := strings.TrimPrefix(route[0], "GET ")
			if strings.HasPrefix(path, "/docs") && swaggerui.Built() != nil {
				t.Skip("the docs page is not in this build: run `make deps` (npm ci, which needs Node)")
			}
			if v, ok := params[path]; ok {
				i := strings.Index(path, "{")
				path = path[:i] + v + path[strings.Index(path[i:], "}")+i+1:]
			}
			r := callers[caller].Do(t, "GET", path, "")
			if r.StatusCode != http.StatusOK && r.StatusCode != http.StatusFound {
				t.Fatalf("GET %s as %s = %d %s", path, caller, r.StatusCode, r.Body)
			}
			if h := r.Header.Get("Cache-Control"); h != cc[0] {
				t.Errorf("GET %s as %s: Cache-Control %q, the table says %q", path, caller, h, cc[0])
			}
		})
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the table's routes:\n%v\nthe GET routes:\n%v", got, want)
	}
}
