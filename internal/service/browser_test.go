package service_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

const shopOrigin = "https://shop.example.com"

// browsable returns Quire with the demo data, allowing pages of shopOrigin.
func browsable(t *testing.T) *servicetest.API {
	t.Helper()
	api := servicetest.New(t, servicetest.Option{Config: func(c *service.Config) {
		var err error
		if c.CORS, err = rest.ParseCORS(shopOrigin); err != nil {
			t.Fatal(err)
		}
	}})
	ctx := t.Context()
	if _, err := demo.Seed(ctx, api.Stores.Users, servicetest.DemoOptions()); err != nil {
		t.Fatal(err)
	}
	api.SeedCatalog(t)
	return api
}

// A browser's preflight on any path, protected ones included, is answered
// without a token, with the path's methods; and every answer to an allowed
// origin, whoever made it (the function, or the gateway's 401, 403 and
// 404), carries the CORS headers, while another origin gets none.
func TestCORS(t *testing.T) {
	api := browsable(t)
	for _, path := range routes.Paths() {
		concrete := strings.NewReplacer("{id}", "2", "{product_id}", "1").Replace(path)
		r := api.Do(t, "OPTIONS", concrete, "", "Origin", shopOrigin, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization,content-type,idempotency-key")
		methods := strings.Join(routes.Allow(path), ", ")
		if r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != shopOrigin ||
			r.Header.Get("Access-Control-Allow-Methods") != methods || r.Header.Get("Allow") != methods ||
			!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Idempotency-Key") ||
			r.Header.Get("Access-Control-Max-Age") != strconv.Itoa(rest.CORSMaxAge) {
			t.Errorf("preflight of %s: %d %v; want 204 allowing %s", concrete, r.StatusCode, r.Header, methods)
		}
		r = api.Do(t, "OPTIONS", concrete, "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
		if r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("another origin's preflight of %s got CORS headers: %v", concrete, r.Header)
		}
	}

	grace := api.As(t, 2, quire.RoleCustomer)
	for _, tc := range []struct {
		name   string
		do     func(header ...string) servicetest.Response
		status int
	}{
		{"a function's 200", func(h ...string) servicetest.Response { return grace.Do(t, "GET", "/users/2", "", h...) }, 200},
		{"a function's 404", func(h ...string) servicetest.Response { return grace.Do(t, "GET", "/products/999", "", h...) }, 404},
		{"a function's 409", func(h ...string) servicetest.Response {
			return grace.Do(t, "POST", "/pay", "", append(h, "Idempotency-Key", "k1")...)
		}, 409},
		{"the gateway's 401", func(h ...string) servicetest.Response { return api.Do(t, "GET", "/users/2", "", h...) }, 401},
		{"the gateway's 403", func(h ...string) servicetest.Response { return grace.Do(t, "GET", "/admin/users", "", h...) }, 403},
		{"the gateway's 404", func(h ...string) servicetest.Response { return api.Do(t, "GET", "/nowhere", "", h...) }, 404},
	} {
		r := tc.do("Origin", shopOrigin)
		if r.StatusCode != tc.status || r.Header.Get("Access-Control-Allow-Origin") != shopOrigin ||
			!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "ETag") || !strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "Origin") {
			t.Errorf("%s to an allowed origin: %d %v; want %d with the CORS headers", tc.name, r.StatusCode, r.Header, tc.status)
		}
		r = tc.do("Origin", "https://evil.example")
		if r.StatusCode != tc.status || r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Expose-Headers") != "" {
			t.Errorf("%s to another origin: %d %v; want %d without CORS headers", tc.name, r.StatusCode, r.Header, tc.status)
		}
	}
}

// HEAD on every GET route answers what the GET answers, status and headers
// (Content-Length, ETag, Content-Type, Vary) alike, without a body; it
// honours If-None-Match; and Allow lists it.
func TestHEAD(t *testing.T) {
	api := browsable(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	ignored := map[string]bool{"Date": true, "X-Amzn-Requestid": true}
	for _, rt := range routes.All() {
		if rt.Method != http.MethodGet {
			continue
		}
		path := strings.NewReplacer("{id}", "1", "{product_id}", "1").Replace(rt.Path)
		for _, accept := range []string{"", "gzip"} {
			get := admin.Do(t, "GET", path, "", "Accept-Encoding", accept)
			head := admin.Do(t, "HEAD", path, "", "Accept-Encoding", accept)
			want, got := get.Header.Clone(), head.Header.Clone()
			for k := range ignored {
				want.Del(k)
				got.Del(k)
			}
			if want.Get("Content-Length") == "" {
				want.Set("Content-Length", strconv.Itoa(len(get.Body)))
			}
			if diff := cmp.Diff(want, got); head.StatusCode != get.StatusCode || diff != "" || head.Body != "" {
				t.Errorf("HEAD %s (Accept-Encoding %q) = %d, %d bytes; GET = %d; headers (-GET +HEAD):\n%s",
					path, accept, head.StatusCode, len(head.Body), get.StatusCode, diff)
			}
			if tag := get.Header.Get("ETag"); tag != "" && get.StatusCode == http.StatusOK {
				if r := admin.Do(t, "HEAD", path, "", "Accept-Encoding", accept, "If-None-Match", tag); r.StatusCode != http.StatusNotModified || r.Body != "" {
					t.Errorf("HEAD %s with If-None-Match: its ETag = %d, want 304", path, r.StatusCode)
				}
			}
		}
	}
	r := admin.Do(t, "PATCH", "/users/1", "{}")
	if allow := r.Header.Get("Allow"); r.StatusCode != http.StatusMethodNotAllowed || allow != "DELETE, GET, HEAD, OPTIONS, PUT" {
		t.Errorf("PATCH /users/1 = %d, Allow %q; want 405 allowing HEAD and OPTIONS", r.StatusCode, allow)
	}
}
