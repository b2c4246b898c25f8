// Package events holds sample API Gateway REST proxy events, one per route
// and case, and sample REQUEST authorizer events, for `sam local invoke`;
// this test replays each through its function's handler against DynamoDB
// Local and checks the outcome recorded in expected.json beside it.
package events

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/swaggerui"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// sample is one event file with the status it must produce and, for a
// problem whose type expected.json names, that type's code.
type sample struct {
	group, file string
	outcome
	event events.APIGatewayProxyRequest
}

// outcome is an entry of expected.json: a status (201), or a status with
// the code of the problem's type ({"status": 409, "type": "cart-empty"}).
type outcome struct {
	status int
	code   string
}

func (o *outcome) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &o.status); err == nil {
		return nil
	}
	var v struct {
		Status int    `json:"status"`
		Type   string `json:"type"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("an outcome is a status or {\"status\", \"type\"}: %w", err)
	}
	o.status, o.code = v.Status, v.Type
	return nil
}

// samples reads every group's events and expected outcomes, failing on an
// event without an outcome or an outcome without an event.
func samples(t *testing.T) []sample {
	t.Helper()
	var out []sample
	for _, g := range routes.Groups() {
		var expected map[string]outcome
		b, err := os.ReadFile(filepath.Join(g.Name, "expected.json"))
		if err != nil {
			t.Fatalf("group %s has no events: %v", g.Name, err)
		}
		if err := json.Unmarshal(b, &expected); err != nil {
			t.Fatalf("%s/expected.json: %v", g.Name, err)
		}
		files, _ := filepath.Glob(filepath.Join(g.Name, "*.json"))
		var names []string
		for _, f := range files {
			if name := filepath.Base(f); name != "expected.json" {
				names = append(names, name)
			}
		}
		var listed []string
		for name := range expected {
			listed = append(listed, name)
		}
		slices.Sort(listed)
		if diff := cmp.Diff(names, listed); diff != "" {
			t.Errorf("%s: event files (-) and expected.json entries (+) differ:\n%s", g.Name, diff)
		}
		for _, name := range names {
			var ev events.APIGatewayProxyRequest
			b, _ := os.ReadFile(filepath.Join(g.Name, name))
			if err := json.Unmarshal(b, &ev); err != nil {
				t.Fatalf("%s/%s: %v", g.Name, name, err)
			}
			out = append(out, sample{g.Name, name, expected[name], ev})
		}
	}
	return out
}

// TestEveryRouteHasASample checks that each route has an event that
// succeeds (for a versioned route, in any version), sent to the right
// group, and that each version prefix has events too.
func TestEveryRouteHasASample(t *testing.T) {
	covered, versions := map[string]bool{}, map[int]bool{}
	for _, s := range samples(t) {
		if owner := routes.Owner(s.event.Resource); owner == "" {
			t.Errorf("%s/%s: resource %q is not in the route table", s.group, s.file, s.event.Resource)
		}
		// A version's routes are API Gateway's one tree, /api/{version}/...:
		// the event's version parameter names the route of the table.
		key := s.event.HTTPMethod + " " + strings.Replace(s.event.Resource, "/api/{"+routes.VersionParam+"}",
			"/api/"+s.event.PathParameters[routes.VersionParam], 1)
		for _, r := range routes.All() {
			if r.Key() == key && r.Group != s.group {
				t.Errorf("%s/%s: %s belongs to group %s", s.group, s.file, key, r.Group)
			}
		}
		for _, r := range routes.All() {
			if r.Key() == key && s.status < 400 {
				covered[r.Resource().Key()], versions[r.Version] = true, true
			}
		}
	}
	for _, r := range routes.All() {
		if !covered[r.Resource().Key()] {
			t.Errorf("route %s has no sample event that succeeds", r.Resource().Key())
			covered[r.Resource().Key()] = true
		}
		if r.Versioned && !versions[r.Version] {
			t.Errorf("no sample event succeeds under %s", routes.VersionPrefix(r.Version))
			versions[r.Version] = true
		}
	}
}

// TestReplay replays every sample event through its function, on memory
// and on DynamoDB Local.
func TestReplay(t *testing.T) {
	servicetest.On(t, func(t *testing.T, on servicetest.Option) {
		// A read changes nothing: the reads share one set of tables,
		// and every other sample has its own.
		reads := servicetest.DemoConfig(t, on)
		if on.DynamoDB {
			var sent accesses
			reads.Sent = sent.add
			t.Cleanup(func() { sent.cover(t) }) // once every sample has run
		}
		for _, s := range samples(t) {
			t.Run(s.group+"/"+strings.TrimSuffix(s.file, ".json"), func(t *testing.T) {
				t.Parallel()
				cfg := reads
				if m := s.event.HTTPMethod; m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions {
					cfg = servicetest.DemoConfig(t, on)
					cfg.Sent = reads.Sent
				}
				replay(t, cfg, s, s.event)
			})
		}
	})
}

// accesses are what each group's function sent to DynamoDB: the group,
// the action and the table, or "<table>/index" for an index of it.
type accesses struct {
	sync.Mutex
	sent map[[3]string]bool
}

func (s *accesses) add(group string, a dynamo.Access) {
	s.Lock()
	defer s.Unlock()
	if s.sent == nil {
		s.sent = map[[3]string]bool{}
	}
	on := a.Table
	if a.Index != "" {
		on += "/index"
	}
	s.sent[[3]string{group, a.Action, on}] = true
}

// cover fails t for each action a group's grants give that its function
// did not send, unless the grant says why no sample sends it: least
// privilege, as the samples show it.
func (s *accesses) cover(t *testing.T) {
	s.Lock()
	defer s.Unlock()
	for _, g := range routes.Groups() {
		for _, gr := range g.Grants {
			for _, a := range gr.Actions {
				if !s.sent[[3]string{g.Name, a, gr.Table}] && gr.Unsent == "" {
					t.Errorf("the %s function may %s on %s, which no sample event sends", g.Name, a, gr.Table)
				}
			}
			if gr.QueryIndexes && !s.sent[[3]string{g.Name, routes.QueryAction, gr.Table + "/index"}] && gr.Unsent == "" {
				t.Errorf("the %s function may %s the indexes of %s, which no sample event does", g.Name, routes.QueryAction, gr.Table)
			}
		}
	}
}

// The base path of a custom domain's mapping, such as
// api.example.com/shop to the stage, in TestReplayOnACustomDomain.
const (
	customDomain = "api.example.com"
	basePath     = "/shop"
)

// TestReplayOnACustomDomain replays every sample that succeeds as API
// Gateway sends it behind a custom domain whose base path mapping names the
// stage: the path the client sent, base path included, with the route's
// resource and parameters. Each gives the status it gives on the stage's
// own endpoint, and every link of its answer keeps the base path. Links
// are made from the event alone, whatever holds the data: the in-memory
// store serves it, where TestReplay runs on both.
func TestReplayOnACustomDomain(t *testing.T) {
	n := 0
	for _, s := range samples(t) {
		if s.status >= 400 {
			continue
		}
		n++
		t.Run(s.group+"/"+strings.TrimSuffix(s.file, ".json"), func(t *testing.T) {
			t.Parallel()
			resp, body := replay(t, servicetest.DemoConfig(t, servicetest.Option{}), s, onCustomDomain(s.event))
			var found []string
			for _, k := range []string{"Location", "Link", "Content-Location"} {
				found = append(found, http.Header(resp.MultiValueHeaders).Values(k)...)
			}
			if !strings.HasSuffix(s.event.Resource, routes.DocumentPath) { // whose schemas describe links
				found = append(found, servicetest.Links(body)...)
			}
			for _, l := range found {
				l = strings.TrimPrefix(strings.TrimPrefix(l, "<"), "https://"+customDomain)
				if !strings.HasPrefix(l, basePath+"/") {
					t.Errorf("the link %q does not keep the base path %s", l, basePath)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no sample succeeds")
	}
}

// onCustomDomain returns ev as a custom domain whose mapping has the base
// path basePath sends it: what the client sent (path, requestContext.path,
// the domain and its Host) changes; what API Gateway matched (resource,
// path parameters) does not.
func onCustomDomain(ev events.APIGatewayProxyRequest) events.APIGatewayProxyRequest {
	if strings.HasPrefix(ev.Path, basePath+"/") {
		return ev // a sample of the custom domain already
	}
	ev.Path = basePath + ev.Path
	ev.RequestContext.Path = basePath + strings.TrimPrefix(ev.RequestContext.Path, "/"+ev.RequestContext.Stage)
	ev.RequestContext.DomainName, ev.RequestContext.DomainPrefix = customDomain, "api"
	ev.Headers = maps.Clone(ev.Headers)
	ev.MultiValueHeaders = maps.Clone(ev.MultiValueHeaders)
	for k := range ev.Headers {
		if strings.EqualFold(k, "Host") {
			ev.Headers[k] = customDomain
		}
	}
	for k := range ev.MultiValueHeaders {
		if strings.EqualFold(k, "Host") {
			ev.MultiValueHeaders[k] = []string{customDomain}
		}
	}
	return ev
}

// replay runs ev, sample s's event or another shape of it, through s's
// function on a fresh store with the demo data (memory, or DynamoDB when on
// says so), and checks the answer against s's outcome and the OpenAPI
// document. It returns the answer and its body, decoded.
func replay(t *testing.T, cfg service.Config, s sample, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, []byte) {
	t.Helper()
	if strings.HasPrefix(ev.Resource, "/docs") {
		if err := swaggerui.Built(); err != nil {
			t.Skipf("the docs page is not in this build: run `make deps` (npm ci, which needs Node): %v", err)
		}
	}
	fns, err := api.Handlers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := fns[s.group](t.Context(), ev)
	if err != nil {
		t.Fatalf("handler error: %v", err)
	}
	ct := http.Header(resp.MultiValueHeaders).Get("Content-Type")
	body := []byte(resp.Body)
	if resp.IsBase64Encoded { // a gzip-encoded answer
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatalf("base64 body: %v", err)
		}
	}
	if err := servicetest.CheckContract(request(s.event), resp.StatusCode, resp.MultiValueHeaders, body); err != nil {
		t.Errorf("the answer does not match the OpenAPI document: %v\n%s", err, resp.Body)
	}
	if resp.StatusCode != s.status {
		t.Errorf("status %d, want %d; body %s", resp.StatusCode, s.status, resp.Body)
	}
	// No answer is to be sniffed, and one with a body says how long it
	// may be kept: a write's (a sign-up, a deposit, a payment, a login:
	// someone's data or tokens) not at all.
	h := http.Header(resp.MultiValueHeaders)
	if h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", h.Get("X-Content-Type-Options"))
	}
	if cc := h.Get("Cache-Control"); resp.Body != "" && (cc == "" || ev.HTTPMethod != "GET" && ev.HTTPMethod != "HEAD" && cc != "no-store") {
		t.Errorf("%s answered %d with Cache-Control %q", ev.HTTPMethod, resp.StatusCode, cc)
	}
	if s.code != "" {
		var p rest.Problem
		if err := json.Unmarshal(body, &p); err != nil || p.Type != rest.ProblemType(s.code) {
			t.Errorf("problem type %q, want %s; body %s", p.Type, rest.ProblemType(s.code), resp.Body)
		}
	}
	switch {
	case resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		if resp.Body != "" {
			t.Errorf("%d with a body: %q", resp.StatusCode, resp.Body)
		}
	case resp.StatusCode == http.StatusFound:
		if resp.Body != "" || http.Header(resp.MultiValueHeaders).Get("Location") == "" {
			t.Errorf("302 with the body %q and Location %q, want no body and a Location", resp.Body, http.Header(resp.MultiValueHeaders).Get("Location"))
		}
	case resp.StatusCode >= 400 && ct != rest.ProblemMediaType,
		resp.StatusCode < 400 && ct != successType(s.event):
		t.Errorf("status %d with Content-Type %q", resp.StatusCode, ct)
	}
	return resp, body
}

// request is the HTTP request an event stands for, on the route API
// Gateway matched (without a custom domain's base path).
func request(ev events.APIGatewayProxyRequest) *http.Request {
	u := url.URL{Path: ev.Path}
	if p, ok := routes.Resolve(ev.Resource, ev.PathParameters); ok {
		u.Path, _ = url.PathUnescape(p)
	}
	q := url.Values{}
	for k, vs := range ev.MultiValueQueryStringParameters {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	r := httptest.NewRequest(ev.HTTPMethod, u.String(), strings.NewReader(ev.Body))
	for k, vs := range ev.MultiValueHeaders {
		r.Header[http.CanonicalHeaderKey(k)] = vs
	}
	return r
}

// successType is the Content-Type of a successful answer to ev: the
// version's media type it asks for, the docs page's HTML, script and
// icon, or application/json.
func successType(ev events.APIGatewayProxyRequest) string {
	switch {
	case ev.Resource == "/docs":
		return "text/html; charset=utf-8"
	case ev.Resource == "/docs/{file}" && strings.HasSuffix(ev.Path, ".js"):
		return "text/javascript; charset=utf-8"
	case ev.Resource == "/favicon.ico":
		return "image/vnd.microsoft.icon"
	}
	if a := ev.Headers["Accept"]; strings.HasPrefix(a, "application/vnd.quire.") {
		return a
	}
	return rest.MediaTypeJSON
}

// TestAuthorizerEvents replays the authorizer's sample events. A token of
// CUSTOMER_TOKEN or ADMIN_TOKEN stands for a fresh token of the demo
// customer (id 2) or admin (id 1), signed with the test's key, as the ones
// from POST /login would be: expected.json says whether the policy allows
// the event's method ARN, denies it, or the authorizer answers
// Unauthorized.
func TestAuthorizerEvents(t *testing.T) {
	var expected map[string]string
	b, err := os.ReadFile(filepath.Join("authorizer", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &expected); err != nil {
		t.Fatal(err)
	}
	cfg, _ := servicetest.MemoryConfig(t) // the keys and token settings: no store is read
	a, err := api.Authorizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := auth.ParseKeySet([]byte(cfg.SigningKeys))
	issuer, _ := auth.NewIssuer(keys, cfg.Tokens)
	tokens := map[string]string{}
	for name, id := range map[string]quire.ID{"CUSTOMER_TOKEN": 2, "ADMIN_TOKEN": 1} {
		role := map[quire.ID]quire.Role{1: quire.RoleAdmin, 2: quire.RoleCustomer}[id]
		if tokens[name], err = issuer.Issue(id, role); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join("authorizer", "*.json"))
	if len(files) != len(expected)+1 {
		t.Errorf("%d event files, %d entries in expected.json", len(files)-1, len(expected))
	}
	for name, want := range expected {
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			var ev events.APIGatewayCustomAuthorizerRequestTypeRequest
			b, err := os.ReadFile(filepath.Join("authorizer", name))
			if err != nil {
				t.Fatal(err)
			}
			for name, tok := range tokens { // as the recipe's sed does, in every header
				b = bytes.ReplaceAll(b, []byte("Bearer "+name), []byte("Bearer "+tok))
			}
			if err := json.Unmarshal(b, &ev); err != nil {
				t.Fatal(err)
			}
			resp, err := a.Handle(t.Context(), ev)
			got := "Deny"
			switch {
			case err != nil:
				got = err.Error()
			case apigw.PolicyAllows(resp.PolicyDocument, ev.MethodArn):
				got = "Allow"
			}
			if got != want {
				t.Errorf("outcome %s, want %s", got, want)
			}
		})
	}
}
