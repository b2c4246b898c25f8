package rest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCORS(t *testing.T) {
	for _, tc := range []struct {
		list    string
		origins []string // canonical; nil with wantErr
		wantErr bool
	}{
		{list: "", origins: []string{}},
		{list: "*", origins: []string{"*"}},
		{list: "https://shop.example.com", origins: []string{"https://shop.example.com"}},
		{list: " https://shop.example.com , http://localhost:* ", origins: []string{"https://shop.example.com", "http://localhost:*"}},
		{list: "https://shop.example.com:443,http://a.example:80", origins: []string{"https://shop.example.com", "http://a.example"}},
		{list: "http://[::1]:3000,http://[::1]:*", origins: []string{"http://[::1]:3000", "http://[::1]:*"}},
		{list: "shop.example.com", wantErr: true},
		{list: "ftp://shop.example.com", wantErr: true},
		{list: "https://shop.example.com/", wantErr: true},
		{list: "https://shop.example.com/app", wantErr: true},
		{list: "https://shop.example.com?x", wantErr: true},
		{list: "https://user@shop.example.com", wantErr: true},
		{list: "https://Shop.example.com", wantErr: true},
		{list: "https://shop.example.com:0", wantErr: true},
		{list: "https://shop.example.com:65536", wantErr: true},
		{list: "https://shop.example.com:080", wantErr: true},
		{list: "https://shop.example.com:", wantErr: true},
		{list: "https://*.example.com", wantErr: true},
		{list: "https://", wantErr: true},
		{list: "https://" + strings.Repeat("a", 254), wantErr: true}, // no DNS name is longer than 253
	} {
		c, err := ParseCORS(tc.list)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseCORS(%q) error %v, want error %v", tc.list, err, tc.wantErr)
			continue
		}
		if !tc.wantErr {
			if diff := cmp.Diff(tc.origins, c.Origins()); diff != "" {
				t.Errorf("ParseCORS(%q) origins (-want +got):\n%s", tc.list, diff)
			}
		}
	}
}

func TestCORSAllows(t *testing.T) {
	c, err := ParseCORS("https://shop.example.com,http://localhost:*")
	if err != nil {
		t.Fatal(err)
	}
	for origin, want := range map[string]bool{
		"https://shop.example.com":      true,
		"https://shop.example.com:8443": false,
		"http://shop.example.com":       false,
		"https://shop.example.com.evil": false,
		"https://evil.shop.example.com": false,
		"http://localhost":              true,
		"http://localhost:3000":         true,
		"http://localhost:03000":        false,
		"http://localhost:99999":        false,
		"http://localhost.evil:3000":    false,
		"https://localhost:3000":        false,
		"null":                          false,
		"":                              false,
	} {
		if got := c.Allows(origin); got != want {
			t.Errorf("Allows(%q) = %v, want %v", origin, got, want)
		}
	}
	if any, _ := ParseCORS("*"); !any.Allows("https://anywhere.example") || any.Allows("") || any.Allows("https://"+strings.Repeat("a", MaxOriginLen)) {
		t.Error(`"*" must allow any origin a browser sends, and no request without one, nor an origin longer than any`)
	}
}

// The handler answers preflights without calling next, with the path's
// methods; a disallowed origin gets no CORS header, on preflights and
// answers alike; OPTIONS without a preflight is 204 with Allow.
func TestCORSHandler(t *testing.T) {
	c, err := ParseCORS("https://shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	called := 0
	h := c.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called++
		w.WriteHeader(http.StatusUnauthorized)
	}))
	serve := func(method, path, origin string, preflight bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if preflight {
			r.Header.Set("Access-Control-Request-Method", "PUT")
			r.Header.Set("Access-Control-Request-Headers", "authorization,content-type,if-match")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}

	rec := serve("OPTIONS", "/users/7", "https://shop.example.com", true)
	want := http.Header{
		"Vary":                          {"Origin"},
		"Access-Control-Allow-Origin":   {"https://shop.example.com"},
		"Access-Control-Expose-Headers": {strings.Join(CORSExposeHeaders, ", ")},
		"Access-Control-Allow-Methods":  {"DELETE, GET, HEAD, OPTIONS, PUT"},
		"Access-Control-Allow-Headers":  {"Accept, Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, X-Idempotency-Key"},
		"Access-Control-Max-Age":        {"7200"},
		"Allow":                         {"DELETE, GET, HEAD, OPTIONS, PUT"},
		"Cache-Control":                 {"no-store"},
	}
	if diff := cmp.Diff(want, rec.Header()); rec.Code != http.StatusNoContent || diff != "" || called != 0 {
		t.Errorf("a preflight: %d, next called %d times, headers (-want +got):\n%s", rec.Code, called, diff)
	}

	rec = serve("OPTIONS", "/users/7", "https://evil.example", true)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "" || rec.Header().Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("a disallowed origin's preflight: %d %v; want 204 without CORS headers", rec.Code, rec.Header())
	}
	rec = serve("OPTIONS", "/users/7", "", false)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Allow") != "DELETE, GET, HEAD, OPTIONS, PUT" || rec.Header().Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("OPTIONS without a preflight: %d %v; want 204 with Allow only", rec.Code, rec.Header())
	}
	if serve("OPTIONS", "/nowhere", "https://shop.example.com", true); called != 1 {
		t.Errorf("OPTIONS on an unknown path did not go on to the router's 404")
	}

	rec = serve("GET", "/users/7", "https://shop.example.com", false)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Access-Control-Allow-Origin") != "https://shop.example.com" ||
		rec.Header().Get("Access-Control-Expose-Headers") == "" {
		t.Errorf("an error answer to an allowed origin: %d %v; want the CORS headers", rec.Code, rec.Header())
	}
	rec = serve("GET", "/users/7", "https://evil.example", false)
	if rec.Header().Get("Access-Control-Allow-Origin") != "" || rec.Header().Get("Vary") != "Origin" {
		t.Errorf("an answer to a disallowed origin: %v; want Vary: Origin and no CORS header", rec.Header())
	}

	none, _ := ParseCORS("")
	rec = httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/users/7", nil)
	r.Header.Set("Origin", "https://shop.example.com")
	none.Handler(http.NotFoundHandler()).ServeHTTP(rec, r)
	if len(rec.Header().Values("Vary")) != 0 || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("with no origin allowed: %v; want no CORS header and no Vary", rec.Header())
	}
}

// FuzzParseCORS: any list either fails to parse or gives origins that parse
// again to themselves, and an origin allowed by a pattern without "*" is
// exactly one of them.
func FuzzParseCORS(f *testing.F) {
	for _, s := range []string{"", "*", "https://shop.example.com", "http://localhost:*,https://a.example:8443", "http://[::1]:*", "https://a.example:443"} {
		f.Add(s, "https://shop.example.com")
	}
	f.Fuzz(func(t *testing.T, list, origin string) {
		c, err := ParseCORS(list)
		if err != nil {
			return
		}
		again, err := ParseCORS(strings.Join(c.Origins(), ","))
		if err != nil {
			t.Fatalf("the canonical origins %q of %q do not parse: %v", c.Origins(), list, err)
		}
		if diff := cmp.Diff(c.Origins(), again.Origins()); diff != "" {
			t.Fatalf("origins of %q changed when parsed again (-first +again):\n%s", list, diff)
		}
		if c.Allows(origin) != again.Allows(origin) {
			t.Fatalf("%q and its canonical form disagree on %q", list, origin)
		}
		if c.Allows(origin) && !strings.Contains(list, "*") {
			found := false
			for _, o := range c.Origins() {
				found = found || o == origin
			}
			if !found {
				t.Fatalf("%q allowed %q, which is none of %q", list, origin, c.Origins())
			}
		}
	})
}
