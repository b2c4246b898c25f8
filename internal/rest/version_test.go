package rest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

func TestNegotiate(t *testing.T) {
	const v1, v2 = "application/vnd.quire.v1+json", "application/vnd.quire.v2+json"
	for _, tc := range []struct {
		pathVersion int
		accept      string
		version     int
		mediaType   string
		detail      string // of the 406, when version is 0
	}{
		{0, "", 1, "application/json", ""},
		{0, "*/*", 1, "application/json", ""},
		{0, "application/json", 1, "application/json", ""},
		{0, "application/*", 1, "application/json", ""},
		{0, v1, 1, v1, ""},
		{0, v2, 2, v2, ""},
		{0, "APPLICATION/VND.QUIRE.V2+JSON", 2, v2, ""},
		{0, v2 + ", application/json;q=0.5", 2, v2, ""},
		{0, "application/json, " + v2 + ";q=0.9", 1, "application/json", ""},
		{0, "text/html, " + v2 + ";q=0.1", 2, v2, ""},
		{0, "application/json;q=0, */*", 1, v1, ""},
		{0, v2 + ";q=0, */*;q=0.5", 1, "application/json", ""},
		{0, v2 + "; charset=utf-8", 2, v2, ""},
		{0, "application/vnd.quire.v3+json", 0, "", "API version 3 does not exist"},
		{0, "text/html", 0, "", "Nothing the Accept header takes"},
		{0, "application/json;q=0", 0, "", "Nothing the Accept header takes"},
		{0, v2 + ";q=2", 0, "", "Nothing the Accept header takes"},
		{0, "garbage", 0, "", "Nothing the Accept header takes"},
		{2, "", 2, "application/json", ""},
		{2, "*/*", 2, "application/json", ""},
		{2, v2, 2, v2, ""},
		{2, v1, 0, "", "This path serves API version 2"},
		{1, v1 + ", " + v2, 1, v1, ""},
	} {
		r := httptest.NewRequest("GET", "/users/7", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		got := wrap(r)
		err := negotiate(httptest.NewRecorder(), got, tc.pathVersion)
		if tc.version == 0 {
			if quire.ErrorCode(err) != quire.ENOTACCEPTABLE || !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("path v%d, Accept %q: error %v, want 406 saying %q", tc.pathVersion, tc.accept, err, tc.detail)
			}
			continue
		}
		if err != nil || got.Version != tc.version || got.MediaType != tc.mediaType {
			t.Errorf("path v%d, Accept %q = v%d %s, %v; want v%d %s",
				tc.pathVersion, tc.accept, got.Version, got.MediaType, err, tc.version, tc.mediaType)
		}
	}
}

func TestPathKeepsTheVersionPrefix(t *testing.T) {
	for pathVersion, want := range map[int]string{0: "/users/7/deposit", 1: "/api/v1/users/7/deposit", 2: "/api/v2/users/7/deposit"} {
		r := wrap(httptest.NewRequest("GET", "/users/7", nil))
		err := negotiate(httptest.NewRecorder(), r, pathVersion)
		if err != nil || r.Path("/users/7/deposit") != want {
			t.Errorf("path v%d: Path = %q, %v; want %q", pathVersion, r.Path("/users/7/deposit"), err, want)
		}
	}
}

// TestVersionedRoutes: every versioned route is served without a prefix and
// under each version's, with Vary: Accept and the negotiated Content-Type.
func TestVersionedRoutes(t *testing.T) {
	h := usersRouter(t)
	customer := caller("7", "customer", time.Now().Add(time.Minute))
	for _, tc := range []struct {
		path, accept string
		status       int
		contentType  string
	}{
		{"/users/7", "", 200, "application/json"},
		{"/users/7", "application/vnd.quire.v2+json", 200, "application/vnd.quire.v2+json"},
		{"/users/7", "application/vnd.quire.v9+json", 406, ProblemMediaType},
		{"/api/v1/users/7", "", 200, "application/json"},
		{"/api/v2/users/7", "application/vnd.quire.v2+json", 200, "application/vnd.quire.v2+json"},
		{"/api/v2/users/7", "application/vnd.quire.v1+json", 406, ProblemMediaType},
		{"/api/v3/users/7", "", 404, ProblemMediaType},
	} {
		r := proxyRequest(t, "GET", tc.path, customer)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.status || rec.Header().Get("Content-Type") != tc.contentType {
			t.Errorf("GET %s Accept %q = %d %s; want %d %s", tc.path, tc.accept, rec.Code, rec.Header().Get("Content-Type"), tc.status, tc.contentType)
		}
		if tc.status != 404 && rec.Header().Get("Vary") != "Accept" {
			t.Errorf("GET %s: Vary %q", tc.path, rec.Header().Get("Vary"))
		}
	}
}

func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json;q=0.5, text/*;q=0", "a/b;q=1.000;x=y", "*/x", ";;,,", "a/b;q=0.0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		ranges := ParseAccept(h)
		for _, mr := range ranges {
			main, sub, ok := strings.Cut(mr.Type, "/")
			if !ok || !isToken(main) || !isToken(sub) || mr.Q < 0 || mr.Q > 1 || mr.Type != strings.ToLower(mr.Type) {
				t.Fatalf("ParseAccept(%q) gave %+v", h, mr)
			}
		}
		r := httptest.NewRequest("GET", "/x", nil)
		r.Header.Set("Accept", h)
		for _, pv := range []int{0, 1, 2} {
			got := wrap(r)
			if err := negotiate(httptest.NewRecorder(), got, pv); err != nil {
				if quire.ErrorCode(err) != quire.ENOTACCEPTABLE {
					t.Fatalf("negotiate(%q) error %v", h, err)
				}
				continue
			}
			if v := got.Version; v < 1 || v > 2 || (pv != 0 && v != pv) {
				t.Fatalf("negotiate(%q) on v%d = v%d", h, pv, v)
			}
		}
	})
}

// TestLinksOnTheStage: behind API Gateway's default endpoint, links and
// Location keep the stage prefix once and the version prefix of the path.
func TestLinksOnTheStage(t *testing.T) {
	hr, err := (&core.RequestAccessor{}).EventToRequestWithContext(t.Context(), events.APIGatewayProxyRequest{
		HTTPMethod: "POST", Path: "/api/v2/users",
		RequestContext: events.APIGatewayProxyRequestContext{
			Path: "/prod/api/v2/users", DomainName: "abc.execute-api.eu-west-1.amazonaws.com",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := wrap(hr)
	if err = negotiate(httptest.NewRecorder(), r, 2); err != nil {
		t.Fatal(err)
	}
	if got := r.Path("/users/7/deposit"); got != "/prod/api/v2/users/7/deposit" {
		t.Errorf("Path = %s", got)
	}
	if _, err := r.Created("/users/7", struct{}{}); err != nil {
		t.Fatal(err)
	}
	if got := http.Header(r.resp.Header).Get("Location"); got != "https://abc.execute-api.eu-west-1.amazonaws.com/prod/api/v2/users/7" {
		t.Errorf("Location = %s", got)
	}
}

// wrap is r as the router hands it to a handler of a route outside the
// versioned ones, before negotiate.
func wrap(r *http.Request) *Request {
	return &Request{Request: r, Version: routes.Versions[0], MediaType: MediaTypeJSON}
}
