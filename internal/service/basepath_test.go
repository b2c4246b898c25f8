package service_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// shopAt is Quire with the demo data, served under base (none when "").
func shopAt(t *testing.T, base string) *servicetest.API {
	t.Helper()
	api := servicetest.New(t, servicetest.Option{BasePath: base, Demo: true})
	return api
}

// Behind a custom domain's base path mapping (api.example.com/shop/v1 to the
// stage) the API answers as it does at the root: the same statuses, headers
// and bodies, but for its links, which keep the base path; and a path
// outside the base path is 404.
func TestBasePath(t *testing.T) {
	const base = "/shop/v1"
	root := shopAt(t, "")
	keys, err := root.Keys.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	under := servicetest.New(t, servicetest.Option{BasePath: base, Config: func(c *service.Config) {
		c.DynamoDB.Tables, c.SigningKeys = root.Tables, string(keys) // the same data and keys
		if root.DB == nil {
			c.Stores = &root.Stores // on memory, the same store
		}
	}})
	type request struct {
		id             quire.ID // the caller: 0 none, 1 the demo admin, 2 the demo customer
		method, path   string
		body           string
		header         []string
		links, headers bool // the answer has links in its body, in Link
		list           bool // the answer is a collection
	}
	var links int
	for _, rq := range []request{
		{method: "GET", path: "/health"},
		{method: "GET", path: "/landing", links: true, list: true},
		{id: 2, method: "GET", path: "/products?limit=2", links: true, headers: true, list: true},
		{id: 2, method: "GET", path: "/products/1", links: true},
		{id: 2, method: "GET", path: "/api/v2/products/1", links: true},
		{id: 2, method: "GET", path: "/authors/1/books", links: true, list: true},
		{id: 1, method: "GET", path: "/users?limit=1", links: true, headers: true, list: true},
		{id: 1, method: "GET", path: "/admin/users?limit=1", links: true, headers: true, list: true},
		{id: 2, method: "GET", path: "/users/2", links: true},
		{id: 2, method: "GET", path: "/api/v2/users/2", links: true},
		{id: 2, method: "GET", path: "/users/2", header: []string{"Accept", "application/vnd.quire.v2+json"}, links: true},
		{id: 2, method: "HEAD", path: "/users/2"},
		{id: 2, method: "GET", path: "/cart"},
		{id: 2, method: "GET", path: "/orders"},
		{id: 2, method: "GET", path: "/config"},
		{id: 2, method: "GET", path: "/users/3"},
		{id: 2, method: "GET", path: "/users/nope"},
		{id: 2, method: "POST", path: "/pay"},
		{method: "GET", path: "/users/2"},
		{method: "DELETE", path: "/health"},
		{method: "OPTIONS", path: "/users/2", header: []string{"Origin", "http://localhost:3000", "Access-Control-Request-Method", "PUT"}},
		{method: "GET", path: "/docs"},
		{method: "GET", path: "/docs/quire.js"},
		{method: "GET", path: "/openapi.json"},
		{method: "GET", path: "/.well-known/jwks.json"},
	} {
		do := func(api *servicetest.API) servicetest.Response {
			if rq.id == 0 {
				return api.Do(t, rq.method, rq.path, rq.body, rq.header...)
			}
			role := map[quire.ID]quire.Role{1: quire.RoleAdmin, 2: quire.RoleCustomer}[rq.id]
			return api.As(t, rq.id, role).Do(t, rq.method, rq.path, rq.body, rq.header...)
		}
		want, got := do(root), do(under)
		name := rq.method + " " + rq.path
		// Every link of the answer under the base path keeps it.
		var found []string
		if rq.links {
			found = servicetest.Links([]byte(got.Body))
		}
		if rq.headers {
			found = append(found, got.Header.Values("Link")...)
		}
		if (rq.links || rq.headers) && len(found) == 0 {
			t.Errorf("%s: no links in %s", name, got.Body)
		}
		for _, l := range found {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "<"), under.URL[:len(under.URL)-len(base)])
			if !strings.HasPrefix(l, base+"/") {
				t.Errorf("%s: the link %q does not keep the base path %s", name, l, base)
			}
			links++
		}
		// Otherwise, the same answer.
		same := func(api *servicetest.API, r servicetest.Response, base string) map[string]string {
			host := strings.TrimSuffix(api.URL, base)
			out := map[string]string{"status": http.StatusText(r.StatusCode)}
			for _, k := range []string{"Content-Type", "ETag", "Vary", "Cache-Control", "Allow",
				"WWW-Authenticate", "Link", "Location", "Retry-After", "Access-Control-Allow-Methods"} {
				out[k] = strings.ReplaceAll(r.Header.Get(k), host+base, "http://api")
			}
			if rq.list {
				out["ETag"] = "" // a collection's is a hash of its body, links included
			}
			body := requestID.ReplaceAllString(strings.ReplaceAll(r.Body, host+base, "http://api"), "")
			if base != "" {
				body = strings.ReplaceAll(body, `"`+base+`/`, `"/`)
			}
			out["body"] = body
			return out
		}
		if diff := cmp.Diff(same(root, want, ""), same(under, got, base)); diff != "" {
			t.Errorf("%s: at the root (-) and under %s (+):\n%s", name, base, diff)
		}
	}
	if links == 0 {
		t.Error("no links checked")
	}

	// A sign-up's Location keeps the base path, and leads to the new user.
	r := under.Do(t, "POST", "/users", `{"email":"ida@quire.example","first_name":"Ida","last_name":"Rhodes","password":"a long passphrase"}`)
	loc := r.Header.Get("Location")
	if r.StatusCode != http.StatusCreated || !strings.HasPrefix(loc, under.URL+"/users/") {
		t.Fatalf("sign-up under %s: %d, Location %q", base, r.StatusCode, loc)
	}
	var u struct{ ID quire.ID }
	if err := json.Unmarshal([]byte(r.Body), &u); err != nil {
		t.Fatal(err)
	}
	if got := under.As(t, u.ID, quire.RoleCustomer).Do(t, "GET", strings.TrimPrefix(loc, under.URL), ""); got.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d %s", loc, got.StatusCode, got.Body)
	}

	// Paths outside the base path are not the API's (the base path alone
	// is its root).
	outside := strings.TrimSuffix(under.URL, base)
	for _, path := range []string{"/health", "/users/2", "/shop", "/shop/v1x/health", "/shop/v1health", "/shop/health"} {
		r, err := http.Get(outside + path)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusNotFound || r.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("GET %s: %d %s, want a 404 problem", path, r.StatusCode, r.Header.Get("Content-Type"))
		}
	}
}

// requestID is the request id of a problem, which differs between any two.
var requestID = regexp.MustCompile(`"request_id":"[^"]*"`)
