package service_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// retire declares version v's retirement for one test, which must not run
// in parallel: routes.Retirements is the API's one declaration.
func retire(t *testing.T, v int, r routes.Retirement) {
	was, had := routes.Retirements[v]
	routes.Retirements[v] = r
	t.Cleanup(func() {
		if had {
			routes.Retirements[v] = was
		} else {
			delete(routes.Retirements, v)
		}
	})
}

// demoAPI is Quire with the demo data.
func demoAPI(t *testing.T) *servicetest.API {
	api := servicetest.New(t, servicetest.Option{Demo: true})
	return api
}

// TestNoVersionIsRetired: nothing is deprecated unless a fork says so.
func TestNoVersionIsRetired(t *testing.T) {
	if len(routes.Retirements) != 0 {
		t.Errorf("routes.Retirements = %v, want none", routes.Retirements)
	}
	r := demoAPI(t).As(t, 2, quire.RoleCustomer).Do(t, "GET", "/api/v1/users/2", "")
	if r.StatusCode != http.StatusOK || r.Header.Get("Deprecation") != "" || r.Header.Get("Sunset") != "" {
		t.Errorf("GET /api/v1/users/2 = %d, Deprecation %q, Sunset %q", r.StatusCode, r.Header.Get("Deprecation"), r.Header.Get("Sunset"))
	}
}

// TestDeprecatedVersion: once a version's retirement is declared, every
// answer of it, by its prefix or by Accept (or by default, as the oldest
// version), says when it is deprecated and when it goes, with a link to
// its changelog; the other version's say nothing.
func TestDeprecatedVersion(t *testing.T) {
	deprecated, sunset := time.Now().Add(-24*time.Hour).Truncate(time.Second), time.Now().Add(90*24*time.Hour).Truncate(time.Second)
	const changelog = "https://github.com/example/quire/blob/main/contracts/CHANGELOG.md#v1"
	retire(t, 1, routes.Retirement{Deprecated: deprecated, Sunset: sunset, Changelog: changelog})
	grace := demoAPI(t).As(t, 2, quire.RoleCustomer)
	for _, tc := range []struct {
		path   string
		header []string
	}{
		{"/api/v1/users/2", nil},
		{"/users/2", nil},
		{"/users/2", []string{"Accept", rest.VendorType(1)}},
	} {
		r := grace.Do(t, "GET", tc.path, "", tc.header...)
		if r.StatusCode != http.StatusOK || r.Header.Get("Deprecation") != "@"+strconv.FormatInt(deprecated.Unix(), 10) ||
			r.Header.Get("Sunset") != sunset.UTC().Format(http.TimeFormat) ||
			!strings.Contains(r.Header.Get("Link"), "<"+changelog+`>; rel="deprecation"`) {
			t.Errorf("GET %s %v = %d, Deprecation %q, Sunset %q, Link %q", tc.path, tc.header, r.StatusCode,
				r.Header.Get("Deprecation"), r.Header.Get("Sunset"), r.Header.Get("Link"))
		}
	}
	for _, tc := range [][]string{{"/api/v2/users/2"}, {"/users/2", "Accept", rest.VendorType(2)}} {
		if r := grace.Do(t, "GET", tc[0], "", tc[1:]...); r.StatusCode != http.StatusOK || r.Header.Get("Deprecation") != "" || r.Header.Get("Sunset") != "" {
			t.Errorf("GET %v (version 2) = %d, Deprecation %q, Sunset %q", tc, r.StatusCode, r.Header.Get("Deprecation"), r.Header.Get("Sunset"))
		}
	}
}

// TestVersionPastItsSunset: a version past its sunset answers 410, a
// problem that names its successor, with a Link to the resource there; a
// request that names no version gets the oldest one not gone; and nothing
// is written.
func TestVersionPastItsSunset(t *testing.T) {
	retire(t, 1, routes.Retirement{Deprecated: time.Now().Add(-200 * 24 * time.Hour), Sunset: time.Now().Add(-time.Hour)})
	grace := demoAPI(t).As(t, 2, quire.RoleCustomer)
	for _, tc := range []struct {
		method, path, body string
		header             []string
		successor          string
	}{
		{"GET", "/api/v1/users/2", "", nil, "/api/v2/users/2"},
		{"GET", "/users/2", "", []string{"Accept", rest.VendorType(1)}, "/api/v2/users/2"},
		{"POST", "/api/v1/cart", `{"product_id":1,"quantity":1}`, nil, "/api/v2/cart"},
	} {
		r := grace.Do(t, tc.method, tc.path, tc.body, tc.header...)
		p := servicetest.WantProblem(t, r, http.StatusGone, quire.EGONE)
		if link := r.Header.Get("Link"); link != "<"+tc.successor+`>; rel="successor-version"` || !strings.Contains(p.Detail, tc.successor) {
			t.Errorf("%s %s: Link %q, detail %q; want the resource in version 2, %s", tc.method, tc.path, link, p.Detail, tc.successor)
		}
	}
	cart := servicetest.Decode[struct{ Items []struct{ Quantity int } }](t, grace.Do(t, "GET", "/api/v2/cart", ""))
	if n := len(cart.Items); n != 2 {
		t.Errorf("after a refused addition to the cart, it holds %d books, want the demo's 2", n)
	}
	r := grace.Do(t, "GET", "/users/2", "")
	user := servicetest.Decode[map[string]any](t, r)
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != rest.MediaTypeJSON || user["name"] == nil || r.Header.Get("Deprecation") != "" {
		t.Errorf("GET /users/2 without a version = %d %s %v; want version 2, the oldest not gone", r.StatusCode, r.Header.Get("Content-Type"), user)
	}
}
