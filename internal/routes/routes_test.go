package routes

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		path     string
		template string
		params   map[string]string
		ok       bool
	}{
		{"/users", "/users", map[string]string{}, true},
		{"/users/42", "/users/{id}", map[string]string{"id": "42"}, true},
		{"/users/abc", "/users/{id}", map[string]string{"id": "abc"}, true},
		{"/health", "/health", map[string]string{}, true},
		{"/users/", "", nil, false},
		{"/users/42/x", "", nil, false},
		{"/", "/", map[string]string{}, true},
		{"/nope", "", nil, false},
		{"", "", nil, false},
	} {
		template, params, ok := Match(tc.path)
		if template != tc.template || ok != tc.ok || !cmp.Equal(params, tc.params) {
			t.Errorf("Match(%q) = %q, %v, %v; want %q, %v, %v", tc.path, template, params, ok, tc.template, tc.params, tc.ok)
		}
	}
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		template string
		params   map[string]string
		path     string
		ok       bool
	}{
		{"/users", nil, "/users", true},
		{"/users/{id}", map[string]string{"id": "42"}, "/users/42", true},
		{"/api/v2/users/{id}/deposit", map[string]string{"id": "7"}, "/api/v2/users/7/deposit", true},
		{"/users/{id}", map[string]string{"id": "1?x=1 %/"}, "/users/1%3Fx=1%20%25%2F", true},
		{"/users/{id}", map[string]string{}, "", false},
		{"/users/{id}", map[string]string{"id": ""}, "", false},
		{"/{proxy+}", map[string]string{"proxy": "users/2"}, "", false},
		{"/nope", nil, "", false},
	} {
		path, ok := Resolve(tc.template, tc.params)
		if path != tc.path || ok != tc.ok {
			t.Errorf("Resolve(%q, %v) = %q, %v; want %q, %v", tc.template, tc.params, path, ok, tc.path, tc.ok)
		}
	}
	// Every path of the table resolves to a path that Match takes back to
	// it, with the same parameters.
	for _, template := range Paths() {
		params := map[string]string{}
		for _, s := range split(template) {
			if isParam(s) {
				params[s[1:len(s)-1]] = "12 ?#"
			}
		}
		path, ok := Resolve(template, params)
		if !ok {
			t.Errorf("Resolve(%q) failed", template)
			continue
		}
		decoded, err := url.PathUnescape(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, gotParams, ok := Match(decoded); !ok || got != template || !cmp.Equal(gotParams, params) {
			t.Errorf("Match(%q) = %q, %v, %v; want %q, %v", decoded, got, gotParams, ok, template, params)
		}
	}
}

func TestAllowAndOwner(t *testing.T) {
	if diff := cmp.Diff([]string{"DELETE", "GET", "HEAD", "OPTIONS", "PUT"}, Allow("/users/{id}")); diff != "" {
		t.Errorf("Allow(/users/{id}) (-want +got):\n%s", diff)
	}
	if got := Owner("/status"); got != GroupHealth {
		t.Errorf("Owner(/status) = %q", got)
	}
}

// TestTable checks the table's own consistency: no route twice, every route
// in a known group, every group with routes and grants on known tables.
func TestTable(t *testing.T) {
	groups := map[string]bool{}
	for _, g := range Groups() {
		groups[g.Name] = true
		if len(ForGroup(g.Name)) == 0 {
			t.Errorf("group %s has no routes", g.Name)
		}
		for _, gr := range g.Grants {
			if !slices.Contains([]string{TableUsers, TableCatalog, TableCarts, TableOrders, TableIdempotency, TableConfig, TableSessions, TableEvents}, gr.Table) {
				t.Errorf("group %s has a grant on unknown table %s", g.Name, gr.Table)
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range All() {
		if seen[r.Key()] {
			t.Errorf("route %s is in the table twice", r.Key())
		}
		seen[r.Key()] = true
		if !groups[r.Group] {
			t.Errorf("route %s is in unknown group %q", r.Key(), r.Group)
		}
		switch r.Access {
		case Public, User, Admin:
		default:
			t.Errorf("route %s has unknown access %q", r.Key(), r.Access)
		}
		if tmpl, _, ok := Match(r.Path); !ok || tmpl != r.Path {
			t.Errorf("Match(%q) = %q, %v", r.Path, tmpl, ok)
		}
	}
}

func FuzzMatch(f *testing.F) {
	for _, p := range []string{"/users", "/users/42", "/users/", "//", "/health/x", ""} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		template, params, ok := Match(path)
		if !ok {
			return
		}
		if len(Allow(template)) == 0 || Owner(template) == "" {
			t.Fatalf("Match(%q) = %q, which has no routes", path, template)
		}
		for name, v := range params {
			if v == "" || !strings.Contains(template, "{"+name+"}") {
				t.Fatalf("Match(%q) = %q with params %v", path, template, params)
			}
		}
	})
}

func TestPathAccess(t *testing.T) {
	for path, want := range map[string]Access{
		"/users":       Public, // POST /users is sign-up
		"/users/{id}":  User,
		"/admin/users": Admin,
		"/login":       Public,
		"/nope":        "",
	} {
		if got := PathAccess(path); got != want {
			t.Errorf("PathAccess(%s) = %q, want %q", path, got, want)
		}
	}
}

// TestGateway: API Gateway has every version's routes as one tree,
// /api/{version}/..., whose events name the version in a parameter; a
// version the API does not have resolves to no route.
func TestGateway(t *testing.T) {
	for path, want := range map[string][2]string{
		"/api/v1/users/{id}":   {"/api/{version}/users/{id}", "v1"},
		"/api/v2/openapi.json": {"/api/{version}/openapi.json", "v2"},
		"/users/{id}":          {"/users/{id}", ""},
		"/api/v10/users":       {"/api/v10/users", ""},
		"/api/v1x/users/{id}":  {"/api/v1x/users/{id}", ""},
	} {
		if resource, version := Gateway(path); resource != want[0] || version != want[1] {
			t.Errorf("Gateway(%s) = %s, %q; want %s, %q", path, resource, version, want[0], want[1])
		}
	}
	for _, p := range GatewayPaths() {
		if strings.HasPrefix(p, "/api/v") {
			t.Errorf("GatewayPaths has %s, a version's own path", p)
		}
	}
	for _, tc := range []struct {
		version, want string
		ok            bool
	}{{"v1", "/api/v1/users/7", true}, {"v2", "/api/v2/users/7", true}, {"v9", "", false}, {"", "", false}, {"1", "", false}} {
		got, ok := Resolve("/api/{version}/users/{id}", map[string]string{"id": "7", VersionParam: tc.version})
		if got != tc.want || ok != tc.ok {
			t.Errorf("Resolve of version %q = %q, %v; want %q, %v", tc.version, got, ok, tc.want, tc.ok)
		}
	}
	if r, ok := Find("PUT", "/api/{version}/users/{id}"); !ok || r.Resource().Key() != "PUT /users/{id}" {
		t.Errorf("Find(PUT, /api/{version}/users/{id}) = %v, %v", r, ok)
	}
	if Owner("/api/{version}/cart") != GroupCarts || PathAccess("/api/{version}/users") != Public {
		t.Errorf("Owner and PathAccess do not read API Gateway's paths")
	}
}

// TestGrow: a grown table serves another version and more routes until it
// is put back.
func TestGrow(t *testing.T) {
	before := len(All())
	restore := Grow([]int{3}, []Route{{Method: "GET", Path: "/shelves", Group: GroupCatalog, Access: User}})
	if _, ok := Find("GET", "/api/v3/shelves"); !ok || len(Versions) != 3 {
		t.Errorf("the grown table has no GET /api/v3/shelves (versions %v)", Versions)
	}
	restore()
	if _, ok := Find("GET", "/shelves"); ok || len(All()) != before || len(Versions) != 2 {
		t.Errorf("the table is not put back: %d routes, versions %v", len(All()), Versions)
	}
}

// TestRetirements: every declared retirement is one the API can carry
// out, and Check refuses each way one can be wrong.
func TestRetirements(t *testing.T) {
	for v, r := range Retirements {
		if err := r.Check(v); err != nil {
			t.Error(err)
		}
	}
	day := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	good := Retirement{Deprecated: day, Sunset: day.AddDate(0, 6, 0), Changelog: "https://example.com/CHANGELOG.md#v1"}
	if err := good.Check(1); err != nil {
		t.Errorf("a sound retirement of v1: %v", err)
	}
	for name, c := range map[string]struct {
		v int
		r Retirement
	}{
		"no such version":        {9, good},
		"the newest version":     {slices.Max(Versions), good},
		"sunset before":          {1, Retirement{Deprecated: day, Sunset: day.AddDate(0, -1, 0), Changelog: good.Changelog}},
		"no changelog":           {1, Retirement{Deprecated: day, Sunset: good.Sunset}},
		"a relative changelog":   {1, Retirement{Deprecated: day, Sunset: good.Sunset, Changelog: "contracts/CHANGELOG.md"}},
		"a plain-HTTP changelog": {1, Retirement{Deprecated: day, Sunset: good.Sunset, Changelog: "http://example.com/c"}},
	} {
		if err := c.r.Check(c.v); err == nil {
			t.Errorf("%s: Check(%d) = nil, want an error", name, c.v)
		}
	}
}

// TestWritesSayTheirEvents: every write route names the events it
// publishes, each a type of quire.EventTypes, or says why it publishes
// none; and every type of event has a route that publishes it.
func TestWritesSayTheirEvents(t *testing.T) {
	published := map[string]bool{}
	for _, r := range All() {
		if r.Method == "GET" {
			if r.Events != nil || r.NoEvents != "" {
				t.Errorf("%s, a read, says it publishes %v (%q)", r.Key(), r.Events, r.NoEvents)
			}
			continue
		}
		if (len(r.Events) == 0) == (r.NoEvents == "") {
			t.Errorf("%s: events %v, and why none %q: want one of them", r.Key(), r.Events, r.NoEvents)
		}
		for _, typ := range r.Events {
			if !slices.Contains(quire.EventTypes, typ) {
				t.Errorf("%s publishes %q, no type of event", r.Key(), typ)
			}
			published[typ] = true
		}
	}
	for _, typ := range quire.EventTypes {
		if !published[typ] {
			t.Errorf("no route publishes %s", typ)
		}
	}
}
