package apigw

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// fakeAuthorizer answers every token "good-<caller>" with a policy that
// allows the whole stage and denies /admin/users for customers, like
// Quire's, and <caller> as the user, and any other token with
// "Unauthorized". It counts its calls.
type fakeAuthorizer struct {
	policy string // "Allow", or "Fail" for an authorizer error
	role   string
	calls  atomic.Int32
	got    events.APIGatewayCustomAuthorizerRequestTypeRequest
}

func (a *fakeAuthorizer) handle(_ context.Context, ev events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	a.calls.Add(1)
	a.got = ev
	if a.policy == "Fail" {
		return events.APIGatewayCustomAuthorizerResponse{}, errors.New("boom")
	}
	if !strings.HasPrefix(ev.Headers["Authorization"], "Bearer good-") {
		return events.APIGatewayCustomAuthorizerResponse{}, errors.New("Unauthorized")
	}
	stage := strings.Join(strings.SplitN(ev.MethodArn, "/", 3)[:2], "/")
	p := events.APIGatewayCustomAuthorizerPolicy{Version: "2012-10-17", Statement: []events.IAMPolicyStatement{
		{Action: []string{"execute-api:Invoke"}, Effect: "Allow", Resource: []string{stage + "/*/*"}},
	}}
	if a.role != "admin" {
		p.Statement = append(p.Statement, events.IAMPolicyStatement{
			Action: []string{"execute-api:Invoke"}, Effect: "Deny", Resource: []string{stage + "/*/admin/users"},
		})
	}
	caller := strings.TrimPrefix(ev.Headers["Authorization"], "Bearer good-")
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID:    caller,
		PolicyDocument: p,
		Context:        map[string]any{rest.ContextUserID: caller, rest.ContextRole: a.role},
	}, nil
}

func authGateway(t *testing.T, a *fakeAuthorizer, ttl time.Duration) (*httptest.Server, *recorder) {
	t.Helper()
	f := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 200, Body: "{}", Headers: map[string]string{"Content-Type": "application/json"}}}
	fns := map[string]Handler{}
	for _, g := range routes.Groups() {
		fns[g.Name] = f.handle
	}
	srv := httptest.NewServer(&Gateway{Functions: fns, Authorizer: a.handle, AuthorizerTTL: ttl})
	t.Cleanup(srv.Close)
	return srv, f
}

func get(t *testing.T, url, authorization string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestGatewayAuthorizes checks each outcome of the authorizer as API
// Gateway answers it, with the stack's gateway response bodies and headers.
func TestGatewayAuthorizes(t *testing.T) {
	for _, tc := range []struct {
		name, path, authorization, policy, role string
		status                                  int
		problem                                 string
		calls                                   int32
	}{
		{"public route, no token", "/health", "", "Allow", "customer", 200, "", 0},
		{"no token", "/users/7", "", "Allow", "customer", 401, "unauthorized", 0},
		{"invalid token", "/users/7", "Bearer bad", "Allow", "customer", 401, "unauthorized", 1},
		{"valid token", "/users/7", "Bearer good-1", "Allow", "customer", 200, "", 1},
		{"denied route", "/admin/users", "Bearer good-1", "Allow", "customer", 403, "forbidden", 1},
		{"admin route", "/admin/users", "Bearer good-1", "Allow", "admin", 200, "", 1},
		{"authorizer fails", "/users/7", "Bearer good-1", "Fail", "customer", 500, "gateway", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &fakeAuthorizer{policy: tc.policy, role: tc.role}
			srv, f := authGateway(t, a, time.Minute)
			resp, body := get(t, srv.URL+tc.path, tc.authorization)
			if resp.StatusCode != tc.status || a.calls.Load() != tc.calls {
				t.Fatalf("GET %s = %d %s after %d authorizer calls; want %d after %d", tc.path, resp.StatusCode, body, a.calls.Load(), tc.status, tc.calls)
			}
			if tc.problem == "" {
				if tc.authorization != "" && f.got.RequestContext.Authorizer[rest.ContextRole] != tc.role {
					t.Errorf("function got authorizer context %v", f.got.RequestContext.Authorizer)
				}
				return
			}
			var p rest.Problem
			if err := json.Unmarshal([]byte(body), &p); err != nil || resp.Header.Get("Content-Type") != rest.ProblemMediaType {
				t.Fatalf("body %s (%s): %v", body, resp.Header.Get("Content-Type"), err)
			}
			want := rest.Problem{Type: rest.ProblemType(tc.problem), Title: p.Title, Status: tc.status, Detail: p.Detail, Instance: tc.path, RequestID: resp.Header.Get("X-Amzn-Requestid")}
			if diff := cmp.Diff(want, p); diff != "" || p.Detail == "" {
				t.Errorf("problem (-want +got):\n%s", diff)
			}
			challenge := resp.Header.Get("WWW-Authenticate")
			if (tc.status == 401) != (challenge == rest.BearerChallenge) {
				t.Errorf("status %d with WWW-Authenticate %q", tc.status, challenge)
			}
		})
	}
}

// TestGatewayCachesDecisions: API Gateway caches the authorizer's answer
// per Authorization header and applies the cached policy to the next route
// the token calls, which is why the policy must hold for every route.
func TestGatewayCachesDecisions(t *testing.T) {
	a := &fakeAuthorizer{policy: "Allow", role: "customer"}
	srv, _ := authGateway(t, a, time.Minute)
	for _, step := range []struct {
		path   string
		status int
	}{
		{"/users/7", 200},
		{"/admin/users", 403}, // from the cached policy
		{"/users", 200},
	} {
		if resp, body := get(t, srv.URL+step.path, "Bearer good-cached"); resp.StatusCode != step.status {
			t.Errorf("GET %s = %d %s, want %d", step.path, resp.StatusCode, body, step.status)
		}
	}
	if n := a.calls.Load(); n != 1 {
		t.Errorf("the authorizer ran %d times for one token; want 1, the rest from the cache", n)
	}
	get(t, srv.URL+"/users/7", "Bearer good-other")
	if n := a.calls.Load(); n != 2 {
		t.Errorf("another token: %d calls, want 2", n)
	}
	// Without a TTL nothing is cached.
	a2 := &fakeAuthorizer{policy: "Allow", role: "customer"}
	srv2, _ := authGateway(t, a2, 0)
	get(t, srv2.URL+"/users/7", "Bearer good-1")
	get(t, srv2.URL+"/users/7", "Bearer good-1")
	if n := a2.calls.Load(); n != 2 {
		t.Errorf("TTL 0: %d calls, want 2", n)
	}
}

// TestGatewayRefusesTwoAuthorizations: more than one Authorization header,
// whatever the case of their names, is 401 without the authorizer and
// leaves no decision behind. A victim's token sent before an attacker's
// does not make the victim's token act as the attacker's, nor does "x"
// sent before a valid token become a credential.
func TestGatewayRefusesTwoAuthorizations(t *testing.T) {
	a := &fakeAuthorizer{policy: "Allow", role: "customer"}
	srv, f := authGateway(t, a, time.Minute)
	send := func(headers http.Header) (caller string, resp *http.Response, body string) {
		t.Helper()
		f.got = events.APIGatewayProxyRequest{}
		req, _ := http.NewRequest("GET", srv.URL+"/users/7", nil)
		req.Header = headers
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		caller, _ = f.got.RequestContext.Authorizer[rest.ContextUserID].(string)
		return caller, resp, string(b)
	}
	victim, attacker := "Bearer good-victim", "Bearer good-attacker"
	for _, step := range []struct {
		name    string
		headers http.Header
		caller  string // "" for 401
	}{
		{"victim then attacker", http.Header{"Authorization": {victim, attacker}}, ""},
		{"victim", http.Header{"Authorization": {victim}}, "victim"},
		{"x then attacker", http.Header{"Authorization": {"x", attacker}}, ""},
		{"x", http.Header{"Authorization": {"x"}}, ""},
		{"x in lower case, then attacker", http.Header{"authorization": {"x"}, "Authorization": {attacker}}, ""},
		{"attacker", http.Header{"Authorization": {attacker}}, "attacker"},
		{"victim again", http.Header{"Authorization": {victim}}, "victim"},
	} {
		caller, resp, body := send(step.headers)
		if caller != step.caller {
			t.Errorf("%s: %d %s as %q, want as %q", step.name, resp.StatusCode, body, caller, step.caller)
		}
		if step.caller != "" {
			continue
		}
		var p rest.Problem
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 401 || resp.Header.Get("Content-Type") != rest.ProblemMediaType || p.Type != rest.ProblemType("unauthorized") ||
			resp.Header.Get("WWW-Authenticate") != rest.BearerChallenge {
			t.Errorf("%s: %d %s %s, WWW-Authenticate %q; want 401 unauthorized with the challenge", step.name,
				resp.StatusCode, resp.Header.Get("Content-Type"), body, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if n := a.calls.Load(); n != 3 {
		t.Errorf("the authorizer ran %d times; want 3: for x, the victim and the attacker alone", n)
	}
}

// TestAuthorizerEvent checks the REQUEST authorizer event: the method ARN
// of the actual path, the resource template and the headers.
func TestAuthorizerEvent(t *testing.T) {
	a := &fakeAuthorizer{policy: "Allow", role: "customer"}
	srv, _ := authGateway(t, a, 0)
	get(t, srv.URL+"/users/42", "Bearer good-1")
	got := a.got
	if got.Type != "REQUEST" || got.MethodArn != MethodARN("GET", "/users/42") || got.Resource != "/users/{id}" ||
		got.PathParameters["id"] != "42" || got.Headers["Authorization"] != "Bearer good-1" {
		t.Errorf("authorizer event %+v", got)
	}
	if diff := cmp.Diff([]string{"Bearer good-1"}, got.MultiValueHeaders["Authorization"]); diff != "" {
		t.Errorf("multi-value Authorization (-want +got):\n%s", diff)
	}
}

func TestPolicyAllows(t *testing.T) {
	const stage = "arn:aws:execute-api:us-east-1:123:api/prod"
	p := events.APIGatewayCustomAuthorizerPolicy{Statement: []events.IAMPolicyStatement{
		{Action: []string{"execute-api:Invoke"}, Effect: "Allow", Resource: []string{stage + "/*/*"}},
		{Action: []string{"execute-api:Invoke"}, Effect: "Deny", Resource: []string{stage + "/*/admin/users", stage + "/DELETE/users/*"}},
	}}
	for arn, want := range map[string]bool{
		stage + "/GET/users/7":                                   true,
		stage + "/GET/admin/users":                               false,
		stage + "/POST/admin/users":                              false,
		stage + "/DELETE/users/7":                                false,
		stage + "/GET/admin/users/extra":                         true,
		"arn:aws:execute-api:us-east-1:123:api/dev/GET/users/7":  false,
		"arn:aws:execute-api:us-east-1:123:other/prod/GET/users": false,
	} {
		if got := PolicyAllows(p, arn); got != want {
			t.Errorf("PolicyAllows(%s) = %v, want %v", arn, got, want)
		}
	}
	if PolicyAllows(events.APIGatewayCustomAuthorizerPolicy{}, stage+"/GET/users") {
		t.Error("an empty policy allows")
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"a*c", "abc", true}, {"a*c", "ac", true}, {"a*c", "a/b/c", true}, {"a*c", "abd", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"*", "", true}, {"", "", true}, {"", "a", false},
		{"a**", "abc", true}, {"*/admin", "x/y/admin", true}, {"*/admin", "x/admin/y", false},
	} {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}
