package openapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestContract: the answers of conditional requests, of the
// configuration document, of conflicts and of the other errors match the
// document as servicetest checks them (each 4xx listed by its operation,
// with the problem types of its status and its headers; Retry-After exactly
// on a retryable problem), and answers that break it do not.
func TestContract(t *testing.T) {
	var z bytes.Buffer
	gz := gzip.NewWriter(&z)
	if _, err := gz.Write([]byte(`{"theme":"dark","limits":{"cart":99}}`)); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	const tag = `"AbCdEfGhIjKlMnOpQrStUv-v1"`
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             []string
		body               []byte
		ok                 bool
	}{
		{"user", "GET", "/users/7", 200, []string{"ETag", tag, "Content-Type", "application/json"},
			[]byte(`{"id":7,"email":"a@example.com","role":"customer","status":"ACTIVE","balance":0,"first_name":"A","last_name":"B","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","_links":{}}`), true},
		{"not modified", "GET", "/api/v2/products/3", 304, []string{"ETag", tag, "Cache-Control", "private, no-cache", "Vary", "Accept"}, nil, true},
		{"config", "GET", "/config", 200, []string{"ETag", tag, "Cache-Control", "private, no-cache", "Content-Type", "application/vnd.quire.v2+json"},
			[]byte(`{"theme":"dark"}`), true},
		{"config gzip", "GET", "/api/v2/config", 200, []string{"ETag", `"AbCdEfGhIjKlMnOpQrStUv-v2-gzip"`, "Content-Encoding", "gzip", "Content-Type", "application/json"},
			z.Bytes(), true},
		{"config created", "PUT", "/admin/config", 201, []string{"ETag", tag, "Location", "https://api.example.com/config"}, nil, true},
		{"config replaced", "PUT", "/api/v1/admin/config", 204, []string{"ETag", tag}, nil, true},
		{"precondition failed", "PUT", "/users/7/profile", 412, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/precondition","title":"Precondition failed","status":412}`), true},

		{"collision", "POST", "/pay", 409, []string{"Content-Type", "application/problem+json", "Retry-After", "1"},
			[]byte(`{"type":"https://quire.dev/problems/conflict","title":"Conflict","status":409}`), true},
		{"refusal", "POST", "/pay", 409, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/cart-empty","title":"Cart empty","status":409}`), true},
		{"unavailable", "GET", "/users/7", 503, []string{"Content-Type", "application/problem+json", "Retry-After", "1"},
			[]byte(`{"type":"https://quire.dev/problems/unavailable","title":"Service unavailable","status":503}`), true},
		{"not found", "GET", "/api/v2/users/7", 404, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/not-found","title":"Not found","status":404}`), true},
		{"unauthorized", "GET", "/cart", 401, []string{"Content-Type", "application/problem+json", "WWW-Authenticate", `Bearer realm="quire"`},
			[]byte(`{"type":"https://quire.dev/problems/unauthorized","title":"Unauthorized","status":401}`), true},
		{"locked login", "POST", "/login", 429, []string{"Content-Type", "application/problem+json", "Retry-After", "600"},
			[]byte(`{"type":"https://quire.dev/problems/throttled","title":"Too many requests","status":429}`), true},
		{"throttled by the web ACL", "POST", "/users", 429, []string{"Content-Type", "application/json", "Retry-After", "300"},
			[]byte(`{"type":"https://quire.dev/problems/throttled","title":"Too many requests","status":429,"detail":"Too many requests from this address to this route."}`), true},

		{"user without ETag", "GET", "/users/7", 200, []string{"Content-Type", "application/json"},
			[]byte(`{"id":7,"email":"a@example.com","role":"customer","status":"ACTIVE","balance":0,"first_name":"A","last_name":"B","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","_links":{}}`), false},
		{"weak ETag", "PUT", "/admin/config", 204, []string{"ETag", "W/" + tag}, nil, false},
		{"config array", "GET", "/config", 200, []string{"ETag", tag, "Content-Type", "application/json"}, []byte(`[]`), false},
		{"config created without ETag", "PUT", "/admin/config", 201, []string{"Location", "https://api.example.com/config"}, nil, false},
		{"collision without Retry-After", "POST", "/pay", 409, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/conflict","title":"Conflict","status":409}`), false},
		{"refusal with Retry-After", "POST", "/pay", 409, []string{"Content-Type", "application/problem+json", "Retry-After", "1"},
			[]byte(`{"type":"https://quire.dev/problems/cart-empty","title":"Cart empty","status":409}`), false},
		{"a refusal of another route", "POST", "/cart", 409, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/insufficient-funds","title":"Insufficient funds","status":409}`), false},
		{"unavailable without Retry-After", "GET", "/users/7", 503, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/unavailable","title":"Service unavailable","status":503}`), false},
		{"unknown problem type", "GET", "/users/7", 404, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/gone-fishing","title":"Gone fishing","status":404}`), false},
		{"a status the operation does not list", "GET", "/health", 404, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/not-found","title":"Not found","status":404}`), false},
		{"a problem of another status", "DELETE", "/users/7", 404, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/forbidden","title":"Forbidden","status":403}`), false},
		{"unauthorized without a challenge", "GET", "/cart", 401, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/unauthorized","title":"Unauthorized","status":401}`), false},
		{"throttled without Retry-After", "GET", "/cart", 429, []string{"Content-Type", "application/problem+json"},
			[]byte(`{"type":"https://quire.dev/problems/throttled","title":"Too many requests","status":429}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == http.MethodPut {
				body = strings.NewReader("{}")
			}
			req := httptest.NewRequest(tc.method, tc.path, body)
			if body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			header := http.Header{}
			for i := 0; i+1 < len(tc.header); i += 2 {
				header.Set(tc.header[i], tc.header[i+1])
			}
			err := servicetest.CheckContract(req, tc.status, header, tc.body)
			if (err == nil) != tc.ok {
				t.Errorf("%s %s = %d: %v, want ok %v", tc.method, tc.path, tc.status, err, tc.ok)
			}
		})
	}
}
