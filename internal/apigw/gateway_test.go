package apigw

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// recorder is a function that records the event it gets and answers with a
// fixed response.
type recorder struct {
	got  events.APIGatewayProxyRequest
	resp events.APIGatewayProxyResponse
	err  error
}

func (f *recorder) handle(_ context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	f.got = ev
	return f.resp, f.err
}

func newGateway(t *testing.T, fns map[string]Handler) *httptest.Server {
	t.Helper()
	a := &fakeAuthorizer{policy: "Allow", role: "customer"}
	srv := httptest.NewServer(&Gateway{Functions: fns, Authorizer: a.handle})
	t.Cleanup(srv.Close)
	return srv
}

func TestGatewayEvent(t *testing.T) {
	f := &recorder{resp: events.APIGatewayProxyResponse{
		StatusCode: 201,
		MultiValueHeaders: map[string][]string{
			"Set-Cookie":   {"a=1", "b=2"},
			"Content-Type": {"application/octet-stream"},
		},
		Body:            base64.StdEncoding.EncodeToString([]byte{0xff, 0x00, 0x01}),
		IsBase64Encoded: true,
	}}
	srv := newGateway(t, map[string]Handler{routes.GroupUsers: f.handle})
	req, _ := http.NewRequest("PUT", srv.URL+"/users/42?tag=a&tag=b&x=1", strings.NewReader("\xff\xfe"))
	req.Header.Set("Authorization", "Bearer good-1")
	req.Header.Add("X-Multi", "one")
	req.Header.Add("X-Multi", "two")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	if resp.StatusCode != 201 || string(body) != "\xff\x00\x01" {
		t.Errorf("response %d %q", resp.StatusCode, body)
	}
	if diff := cmp.Diff([]string{"a=1", "b=2"}, resp.Header.Values("Set-Cookie")); diff != "" {
		t.Errorf("Set-Cookie (-want +got):\n%s", diff)
	}
	ev := f.got
	rc := ev.RequestContext
	if ev.Resource != "/users/{id}" || ev.Path != "/users/42" || ev.HTTPMethod != "PUT" ||
		rc.ResourcePath != "/users/{id}" || rc.Stage != Stage || rc.RequestID == "" || rc.RequestID != resp.Header.Get("X-Amzn-Requestid") {
		t.Errorf("event: resource %q path %q method %q context %+v", ev.Resource, ev.Path, ev.HTTPMethod, rc)
	}
	if diff := cmp.Diff(map[string]string{"id": "42"}, ev.PathParameters); diff != "" {
		t.Errorf("path parameters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ev.MultiValueQueryStringParameters["tag"]); diff != "" || ev.QueryStringParameters["tag"] != "b" {
		t.Errorf("query: %v %v", ev.MultiValueQueryStringParameters, ev.QueryStringParameters)
	}
	if diff := cmp.Diff([]string{"one", "two"}, ev.MultiValueHeaders["X-Multi"]); diff != "" || ev.Headers["X-Multi"] != "two" {
		t.Errorf("headers: %v %v", ev.MultiValueHeaders, ev.Headers)
	}
	if !ev.IsBase64Encoded || ev.Body != base64.StdEncoding.EncodeToString([]byte("\xff\xfe")) {
		t.Errorf("binary body: %q base64 %v", ev.Body, ev.IsBase64Encoded)
	}
}

// TestGatewayRequestBody: as the deployed API, whose binary media type is
// "*/*", the gateway passes a JSON body base64-encoded, and the function's
// handler reads it decoded.
func TestGatewayRequestBody(t *testing.T) {
	var ev events.APIGatewayProxyRequest
	echo := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, r.Body) // what arrives is what the test reads back
	}), nil)
	srv := newGateway(t, map[string]Handler{routes.GroupConfig: func(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		ev = e
		return echo(ctx, e)
	}})
	for _, tc := range []struct {
		method, path, body string
		wantBase64         bool
	}{
		{"PUT", "/admin/config", `{"theme":"dark","limits":{"cart":20}}`, true},
		{"GET", "/config", "", false},
	} {
		t.Run(tc.method, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer good-1")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			echoed, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if ev.IsBase64Encoded != tc.wantBase64 || ev.Body != base64.StdEncoding.EncodeToString([]byte(tc.body)) {
				t.Errorf("event body %q, base64 %v; want %q base64-encoded: %v", ev.Body, ev.IsBase64Encoded, tc.body, tc.wantBase64)
			}
			if resp.StatusCode != 200 || string(echoed) != tc.body {
				t.Errorf("handler read %d %q, want %q", resp.StatusCode, echoed, tc.body)
			}
		})
	}
}

// TestGatewayBinaryResponse: a gzip-compressed body, which the proxy
// returns base64-encoded, reaches the client byte for byte with its
// Content-Encoding.
func TestGatewayBinaryResponse(t *testing.T) {
	var doc bytes.Buffer
	zw := gzip.NewWriter(&doc)
	if _, err := zw.Write([]byte(`{"theme":"dark"}`)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	var proxied events.APIGatewayProxyResponse
	h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(doc.Bytes())
	}), nil)
	srv := newGateway(t, map[string]Handler{routes.GroupConfig: func(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		resp, err := h(ctx, ev)
		proxied = resp
		return resp, err
	}})
	req, _ := http.NewRequest("GET", srv.URL+"/config", nil)
	req.Header.Set("Authorization", "Bearer good-1")
	req.Header.Set("Accept-Encoding", "gzip") // asked for, so the client leaves the body compressed
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !proxied.IsBase64Encoded {
		t.Errorf("the proxy returned the gzip body as text: %q", proxied.Body)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(body, doc.Bytes()) {
		t.Errorf("response %d, Content-Encoding %q, body %x; want 200, gzip, %x",
			resp.StatusCode, resp.Header.Get("Content-Encoding"), body, doc.Bytes())
	}
}

func TestGatewayErrors(t *testing.T) {
	failing := &recorder{err: io.ErrUnexpectedEOF}
	ok := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 405, Headers: map[string]string{"Allow": "GET"}}}
	srv := newGateway(t, map[string]Handler{routes.GroupUsers: failing.handle, routes.GroupHealth: ok.handle})
	for _, tc := range []struct {
		method, path string
		status       int
		problemType  string
	}{
		{"GET", "/nope", 404, rest.ProblemType("not-found")},
		{"GET", "/users/1/2", 404, rest.ProblemType("not-found")},
		{"GET", "/users", 502, rest.ProblemType("gateway")},
		{"DELETE", "/health", 405, ""}, // forwarded to the path's owner, which answers
		{"GET", "/users?cursor=%%%", 400, rest.ProblemType("invalid")},
		{"GET", "/users?limit=5;cursor=x", 400, rest.ProblemType("invalid")},
		{"GET", "/nope?x=%zz", 400, rest.ProblemType("invalid")}, // read before it is routed
		// A URL longer than API Gateway takes: its path is a problem's
		// instance, and its query a next page's link.
		{"GET", "/users?x=" + strings.Repeat("a", rest.MaxURLLen), 400, rest.ProblemType("invalid")},
		{"GET", "/" + strings.Repeat("a", rest.MaxURLLen), 400, rest.ProblemType("invalid")},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		req.Header.Set("Authorization", "Bearer good-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p rest.Problem
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil && tc.problemType != "" { // the fake owner answers no body
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || p.Type != tc.problemType {
			t.Errorf("%s %s = %d %q; want %d %q", tc.method, tc.path, resp.StatusCode, p.Type, tc.status, tc.problemType)
		}
		if tc.problemType != "" && (p.RequestID == "" || p.RequestID != resp.Header.Get("X-Amzn-Requestid")) {
			t.Errorf("%s %s: request id %q in body, %q in header", tc.method, tc.path, p.RequestID, resp.Header.Get("X-Amzn-Requestid"))
		}
	}
	if ok.got.HTTPMethod != "DELETE" || ok.got.Resource != "/health" {
		t.Errorf("the owner got %s %s", ok.got.HTTPMethod, ok.got.Resource)
	}
	// A host longer than a DNS name with a port, which links would carry.
	req, _ := http.NewRequest("GET", srv.URL+"/health", nil)
	req.Host = strings.Repeat("a", rest.MaxHostLen+1)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a host of %d characters: %d, want 400", len(req.Host), resp.StatusCode)
	}
}

func TestGatewayBodyLimit(t *testing.T) {
	f := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 200}}
	srv := newGateway(t, map[string]Handler{routes.GroupUsers: f.handle})
	resp, err := http.Post(srv.URL+"/users", "application/json", strings.NewReader(strings.Repeat("a", MaxRequestBytes+1)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || f.got.HTTPMethod != "" {
		t.Errorf("status %d; function called: %v", resp.StatusCode, f.got.HTTPMethod != "")
	}
}

// TestHandlerEscapesPath: API Gateway sends paths decoded; characters that
// mean something in a URL must reach the handler as path, not as a 502.
func TestHandlerEscapesPath(t *testing.T) {
	var got string
	h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.URL.Path; w.WriteHeader(200) }), nil)
	for _, p := range []string{"/users/%", "/users/%zz", "/users/a?b", "/users/a#b", "/users/a b"} {
		resp, err := h(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: p})
		if err != nil || resp.StatusCode != 200 || got != p {
			t.Errorf("path %q: status %d, err %v, handler saw %q", p, resp.StatusCode, err, got)
		}
	}
}

// Behind a custom domain's base path mapping, API Gateway's event has the
// client's path, base path included, and the route it matched: the function
// serves that route, and its links keep the base path, as they keep the
// stage's on the default endpoint.
func TestHandlerServesTheMatchedRoute(t *testing.T) {
	var path, link string
	h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, link = r.URL.Path, rest.URL(r, "/users/1")
		w.WriteHeader(200)
	}), nil)
	for _, tc := range []struct {
		name                 string
		resource, path, sent string // sent: requestContext.path
		params               map[string]string
		wantPath, wantLink   string
	}{
		{"custom domain", "/users/{id}", "/shop/users/2", "/shop/users/2", map[string]string{"id": "2"}, "/users/2", "https://api.example.com/shop/users/1"},
		{"two segments", "/api/v2/users/{id}", "/shop/eu/api/v2/users/2", "/shop/eu/api/v2/users/2", map[string]string{"id": "2"}, "/api/v2/users/2", "https://api.example.com/shop/eu/users/1"},
		{"root mapping", "/users/{id}", "/users/2", "/users/2", map[string]string{"id": "2"}, "/users/2", "https://api.example.com/users/1"},
		{"default endpoint", "/users/{id}", "/users/2", "/prod/users/2", map[string]string{"id": "2"}, "/users/2", "https://api.example.com/prod/users/1"},
		{"trailing slash", "/users", "/shop/users/", "/shop/users/", nil, "/users", "https://api.example.com/shop/users/1"},
		{"escaped parameter", "/users/{id}", "/shop/users/a?b", "/shop/users/a?b", map[string]string{"id": "a?b"}, "/users/a?b", "https://api.example.com/shop/users/1"},
		{"a generic sample event", "/{proxy+}", "/users/2", "/prod/users/2", map[string]string{"proxy": "users/2"}, "/users/2", "https://api.example.com/prod/users/1"},
	} {
		resp, err := h(context.Background(), events.APIGatewayProxyRequest{
			HTTPMethod: "GET", Resource: tc.resource, Path: tc.path, PathParameters: tc.params,
			Headers:        map[string]string{"Host": "api.example.com"},
			RequestContext: events.APIGatewayProxyRequestContext{Path: tc.sent, ResourcePath: tc.resource, DomainName: "api.example.com"},
		})
		if err != nil || resp.StatusCode != 200 || path != tc.wantPath || link != tc.wantLink {
			t.Errorf("%s: status %d, err %v; handler saw %q and links %q, want %q and %q", tc.name, resp.StatusCode, err, path, link, tc.wantPath, tc.wantLink)
		}
	}
}

// Under BasePath, the gateway sends what a custom domain's mapping sends:
// the client's path with the route's resource and parameters, and the
// authorizer the route's method ARN; a path outside it is 404.
func TestGatewayBasePath(t *testing.T) {
	f := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 204}}
	a := &fakeAuthorizer{policy: "Allow", role: "customer"}
	gw := &Gateway{Functions: map[string]Handler{routes.GroupUsers: f.handle}, Authorizer: a.handle,
		BasePath: "/shop"}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	if resp, _ := get(t, srv.URL+"/shop/users/42", "Bearer good-1"); resp.StatusCode != 204 {
		t.Fatalf("GET /shop/users/42: %d", resp.StatusCode)
	}
	ev := f.got
	if ev.Resource != "/users/{id}" || ev.Path != "/shop/users/42" || ev.RequestContext.Path != "/shop/users/42" ||
		ev.PathParameters["id"] != "42" || a.got.MethodArn != MethodARN("GET", "/users/42") {
		t.Errorf("event: resource %q path %q context path %q params %v; method ARN %q",
			ev.Resource, ev.Path, ev.RequestContext.Path, ev.PathParameters, a.got.MethodArn)
	}
	for _, path := range []string{"/users/42", "/shopusers/42", "/shop/shop/users/42", "/x/shop/users/42"} {
		if resp, _ := get(t, srv.URL+path, "Bearer good-1"); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
}

func TestParseBasePath(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "/": "", "//": "", "shop": "/shop", "/shop": "/shop", "/shop/": "/shop", "shop/v1": "/shop/v1", "/a-b_c.d~e": "/a-b_c.d~e",
	} {
		if got, err := ParseBasePath(in); err != nil || got != want {
			t.Errorf("ParseBasePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"/shop//v1", "/..", "/shop/.", "/a b", "/a?b", "/a%2Fb", "/é"} {
		if got, err := ParseBasePath(in); err == nil {
			t.Errorf("ParseBasePath(%q) = %q, want an error", in, got)
		}
	}
}

// FuzzParseBasePath: what ParseBasePath accepts is a base path it gives
// back unchanged, which the gateway can cut from a request's path.
func FuzzParseBasePath(f *testing.F) {
	for _, s := range []string{"", "/", "shop", "/shop/v1/", "//", "/a b", "/.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseBasePath(s)
		if err != nil || p == "" {
			return
		}
		if again, err := ParseBasePath(p); err != nil || again != p || !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") ||
			(&url.URL{Path: p}).EscapedPath() != p {
			t.Errorf("ParseBasePath(%q) = %q, which gives %q, %v", s, p, again, err)
		}
	})
}

// Each invocation gets the deadline Lambda would give it, and one that
// runs past it is the gateway's 502, as API Gateway answers for a function
// Lambda stopped.
func TestGatewayTimeout(t *testing.T) {
	lefts, release := make(chan time.Duration, 1), make(chan struct{})
	slow := func(ctx context.Context, _ events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		d, ok := ctx.Deadline()
		if !ok {
			return events.APIGatewayProxyResponse{}, errors.New("no deadline")
		}
		lefts <- time.Until(d)
		<-release // ignores its deadline, as a hung function would, until the gateway has answered
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}
	a := &fakeAuthorizer{policy: "Allow", role: "customer"}
	srv := httptest.NewServer(&Gateway{Functions: map[string]Handler{routes.GroupHealth: slow}, Authorizer: a.handle,
		Timeout: 200 * time.Millisecond})
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/health")
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p rest.Problem
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadGateway || p.Type != rest.ProblemType("gateway") {
		t.Errorf("a function past its timeout: %d %+v, want the 502 gateway problem", resp.StatusCode, p)
	}
	if left := <-lefts; left <= 0 || left > 200*time.Millisecond {
		t.Errorf("the function had %v left at its start, want up to the gateway's 200ms", left)
	}
}

// NewHandler ends the request's context DeadlineMargin before the
// invocation's deadline, so that the answer is written in time.
func TestHandlerDeadline(t *testing.T) {
	var left time.Duration
	h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _ := r.Context().Deadline()
		left = time.Until(d)
		w.WriteHeader(http.StatusNoContent)
	}), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if _, err := h(ctx, events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/health"}); err != nil {
		t.Fatal(err)
	}
	if want := 3*time.Second - DeadlineMargin; left > want || left < want-time.Second {
		t.Errorf("the request had %v left, want just under %v", left, want)
	}
}

// TestRouteOf: a request's route is the table's, without its version
// prefix, HEAD its GET route's path; OPTIONS and methods a path does not
// have get one name each, so that the metrics per route stay few.
func TestRouteOf(t *testing.T) {
	for _, tc := range []struct{ method, resource, want string }{
		{"GET", "/users/{id}", "GET /users/{id}"},
		{"GET", "/api/v2/users/{id}", "GET /users/{id}"},
		{"GET", "/api/{version}/users/{id}", "GET /users/{id}"}, // as API Gateway names it
		{"HEAD", "/api/{version}/users/{id}", "HEAD /users/{id}"},
		{"PUT", "/api/v1/admin/products/{id}", "PUT /admin/products/{id}"},
		{"GET", "/health", "GET /health"},
		{"HEAD", "/api/v1/users/{id}", "HEAD /users/{id}"},
		{"HEAD", "/landing", "HEAD /landing"},
		{"HEAD", "/pay", "other"},
		{"OPTIONS", "/cart", "OPTIONS"},
		{"PATCH", "/users/{id}", "other"},
		{"GET", "/api/v3/users/{id}", "other"},
	} {
		if got := routeOf(tc.method, tc.resource); got != tc.want {
			t.Errorf("routeOf(%s, %s) = %q, want %q", tc.method, tc.resource, got, tc.want)
		}
	}
}
