package authorizer

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

const testStage = "arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod"

// arn is the method ARN API Gateway sends for a request, with path
// parameters set to 42.
func arn(method, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = "42"
		}
	}
	return testStage + "/" + method + strings.Join(segs, "/")
}

func TestBearerToken(t *testing.T) {
	for _, c := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc.def.ghi", "abc.def.ghi", true},
		{"bearer abc", "abc", true},
		{"BEARER abc", "abc", true},
		{"", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearer  abc", "", false},
		{"Bearer abc def", "", false},
		{"Bearer abc\tdef", "", false},
		{"Bearer\tabc", "", false},
		{"Basic dXNlcjpwYXNz", "", false},
		{"abc.def.ghi", "", false},
		{"Bearerabc", "", false},
	} {
		token, ok := BearerToken(c.header)
		if token != c.token || ok != c.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", c.header, token, ok, c.token, c.ok)
		}
	}
}

func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  x", "Basic a", "Bearer\ta", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		token, ok := BearerToken(h)
		if !ok {
			if token != "" {
				t.Fatalf("BearerToken(%q) refused but returned %q", h, token)
			}
			return
		}
		if token == "" || strings.ContainsAny(token, " \t") || !strings.EqualFold(h[:7], "Bearer ") || h[7:] != token {
			t.Fatalf("BearerToken(%q) = %q", h, token)
		}
	})
}

// testAuthorizer verifies tokens of keys at testNow; what is logged until
// the test ends goes to log.
func testAuthorizer(t *testing.T, keys auth.KeySet, log *bytes.Buffer) *Authorizer {
	t.Helper()
	was := slog.Default()
	// As the function logs, in Lambda's JSON format.
	slog.SetDefault(slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{ReplaceAttr: lambdacontext.ReplaceAttr})))
	t.Cleanup(func() { slog.SetDefault(was) })
	return &Authorizer{Verifier: auth.NewVerifier(keys, testConfig, func() time.Time { return testNow })}
}

func issue(t *testing.T, keys auth.KeySet, id quire.ID, role quire.Role, at time.Time) string {
	t.Helper()
	iss, err := auth.NewIssuer(keys, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	iss.Now = func() time.Time { return at }
	token, err := iss.Issue(id, role)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func authRequest(headers map[string]string, methodArn string) events.APIGatewayCustomAuthorizerRequestTypeRequest {
	return events.APIGatewayCustomAuthorizerRequestTypeRequest{
		Type: "REQUEST", MethodArn: methodArn, Headers: headers,
		RequestContext: events.APIGatewayCustomAuthorizerRequestTypeRequestContext{RequestID: "req-1"},
	}
}

func TestHandle(t *testing.T) {
	keys := auth.KeySet{Keys: []auth.Key{newKey(t)}}
	valid := issue(t, keys, 7, quire.RoleCustomer, testNow)
	expired := issue(t, keys, 7, quire.RoleCustomer, testNow.Add(-time.Hour))
	other := issue(t, auth.KeySet{Keys: []auth.Key{newKey(t)}}, 7, quire.RoleAdmin, testNow)

	t.Run("refused", func(t *testing.T) {
		for name, headers := range map[string]map[string]string{
			"no headers":       nil,
			"no Authorization": {"Accept": "application/json"},
			"empty":            {"Authorization": ""},
			"no scheme":        {"Authorization": valid},
			"Basic":            {"Authorization": "Basic " + valid},
			"garbage":          {"Authorization": "Bearer not-a-token"},
			"expired":          {"Authorization": "Bearer " + expired},
			"unknown key":      {"Authorization": "Bearer " + other},
			"truncated":        {"Authorization": "Bearer " + valid[:len(valid)-4]},
		} {
			var log bytes.Buffer
			resp, err := testAuthorizer(t, keys, &log).Handle(context.Background(), authRequest(headers, arn("GET", "/users")))
			if !errors.Is(err, ErrUnauthorized) || err.Error() != "Unauthorized" {
				t.Errorf("%s: error %v, want Unauthorized", name, err)
			}
			if resp.PrincipalID != "" || len(resp.PolicyDocument.Statement) != 0 {
				t.Errorf("%s: response %+v with the error", name, resp)
			}
			// One line a refusal, which the stack counts (infra's
			// authorizerFailures).
			if strings.Count(log.String(), `"message":"`+Refused+`"`) != 1 || !strings.Contains(log.String(), "req-1") {
				t.Errorf("%s: log %q", name, log.String())
			}
			if strings.Contains(log.String(), valid[20:]) || strings.Contains(log.String(), expired[20:]) {
				t.Errorf("%s: the token is in the log: %q", name, log.String())
			}
		}
	})

	// API Gateway caches a decision under one Authorization header: with
	// two, the one verified might not be the one the decision is cached
	// under, so neither is verified. A header's name has any case.
	t.Run("more than one", func(t *testing.T) {
		bearer, otherBearer := "Bearer "+valid, "Bearer "+issue(t, keys, 8, quire.RoleAdmin, testNow)
		for name, ev := range map[string]events.APIGatewayCustomAuthorizerRequestTypeRequest{
			"two values": {MultiValueHeaders: map[string][]string{"Authorization": {bearer, otherBearer}},
				Headers: map[string]string{"Authorization": otherBearer}},
			"the same twice": {MultiValueHeaders: map[string][]string{"Authorization": {bearer, bearer}},
				Headers: map[string]string{"Authorization": bearer}},
			"two cases": {MultiValueHeaders: map[string][]string{"authorization": {"x"}, "Authorization": {bearer}},
				Headers: map[string]string{"authorization": "x", "Authorization": bearer}},
			"two cases, single-value headers only": {Headers: map[string]string{"authorization": bearer, "Authorization": otherBearer}},
			"single-value header unlike the multi-value one": {MultiValueHeaders: map[string][]string{"Authorization": {bearer}},
				Headers: map[string]string{"Authorization": otherBearer}},
		} {
			var log bytes.Buffer
			ev.MethodArn, ev.RequestContext.RequestID = arn("GET", "/users/{id}"), "req-1"
			resp, err := testAuthorizer(t, keys, &log).Handle(context.Background(), ev)
			if !errors.Is(err, ErrUnauthorized) || resp.PrincipalID != "" {
				t.Errorf("%s: %+v, %v; want Unauthorized", name, resp, err)
			}
			if strings.Count(log.String(), `"message":"`+Refused+`"`) != 1 || !strings.Contains(log.String(), "more than one Authorization header") {
				t.Errorf("%s: log %q", name, log.String())
			}
			if strings.Contains(log.String(), valid[20:]) || strings.Contains(log.String(), otherBearer[27:]) {
				t.Errorf("%s: a token is in the log: %q", name, log.String())
			}
		}
		// One header, in both maps as API Gateway sends it, is verified.
		ev := authRequest(map[string]string{"authorization": bearer}, arn("GET", "/users/{id}"))
		ev.MultiValueHeaders = map[string][]string{"authorization": {bearer}}
		if resp, err := testAuthorizer(t, keys, new(bytes.Buffer)).Handle(context.Background(), ev); err != nil || resp.PrincipalID != "7" {
			t.Errorf("one header in both maps: %+v, %v", resp, err)
		}
	})

	t.Run("valid", func(t *testing.T) {
		// HTTP/2 clients send header names in lower case.
		for _, name := range []string{"Authorization", "authorization"} {
			var log bytes.Buffer
			resp, err := testAuthorizer(t, keys, &log).Handle(context.Background(),
				authRequest(map[string]string{name: "Bearer " + valid}, arn("GET", "/users/{id}")))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			wantContext := map[string]any{
				rest.ContextUserID: "7", rest.ContextRole: "customer",
				rest.ContextExpires: strconv.FormatInt(testNow.Add(testConfig.Lifetime).Unix(), 10),
			}
			if resp.PrincipalID != "7" || len(resp.Context) != len(wantContext) {
				t.Fatalf("%s: response %+v", name, resp)
			}
			for k, v := range wantContext {
				if resp.Context[k] != v {
					t.Errorf("%s: context[%s] = %#v, want %#v", name, k, resp.Context[k], v)
				}
			}
			if !apigw.PolicyAllows(resp.PolicyDocument, arn("GET", "/users/{id}")) {
				t.Errorf("%s: policy does not allow the route it was asked for: %+v", name, resp.PolicyDocument)
			}
			if log.Len() != 0 {
				t.Errorf("%s: logged %q for a valid token", name, log.String())
			}
		}
	})

	t.Run("malformed method ARN", func(t *testing.T) {
		for _, methodArn := range []string{"", "arn:aws:lambda:eu-west-1:1:function:x", "arn:aws:execute-api:eu-west-1:1:api", "arn:aws:execute-api:eu-west-1:1:/prod/GET/users"} {
			_, err := testAuthorizer(t, keys, new(bytes.Buffer)).Handle(context.Background(),
				authRequest(map[string]string{"Authorization": "Bearer " + valid}, methodArn))
			if err == nil || errors.Is(err, ErrUnauthorized) {
				t.Errorf("method ARN %q: error %v, want a malformed ARN error", methodArn, err)
			}
		}
	})
}

// protectedRoute is a method and path the authorizer guards, with the
// access it needs: every route of the table that is not public, and an
// undefined method (PATCH) on each path that is not public.
type protectedRoute struct {
	method, path string
	access       routes.Access
}

func protectedRoutes() []protectedRoute {
	var out []protectedRoute
	for _, r := range routes.All() {
		if r.Access != routes.Public {
			out = append(out, protectedRoute{r.Method, r.Path, r.Access})
		}
	}
	for _, path := range routes.Paths() {
		if a := routes.PathAccess(path); a != routes.Public {
			out = append(out, protectedRoute{"PATCH", path, a})
		}
	}
	return out
}

// TestCachedPolicyHoldsForEveryRoute: API Gateway caches the policy made
// for the first route a token calls and applies it to every route the token
// calls next. Whichever route comes first, the cached policy must allow
// exactly the routes the role may call.
func TestCachedPolicyHoldsForEveryRoute(t *testing.T) {
	keys := auth.KeySet{Keys: []auth.Key{newKey(t)}}
	protected := protectedRoutes()
	if !slices.ContainsFunc(protected, func(r protectedRoute) bool { return r.access == routes.Admin }) ||
		!slices.ContainsFunc(protected, func(r protectedRoute) bool { return r.access == routes.User }) {
		t.Fatal("the route table has no admin or no user routes to test")
	}
	for _, role := range []quire.Role{quire.RoleCustomer, quire.RoleAdmin} {
		token := issue(t, keys, 7, role, testNow)
		for _, first := range protected {
			resp, err := testAuthorizer(t, keys, new(bytes.Buffer)).Handle(context.Background(),
				authRequest(map[string]string{"Authorization": "Bearer " + token}, arn(first.method, first.path)))
			if err != nil {
				t.Fatalf("%s %s: %v", first.method, first.path, err)
			}
			for _, next := range protected {
				got := apigw.PolicyAllows(resp.PolicyDocument, arn(next.method, next.path))
				if want := access.Permits(role, next.access); got != want {
					t.Errorf("%s: policy cached for %s %s allows %s %s = %v, want %v",
						role, first.method, first.path, next.method, next.path, got, want)
				}
			}
			for _, elsewhere := range []string{
				"arn:aws:execute-api:eu-west-1:123456789012:zzzzzzzzzz/prod/GET/users",
				"arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/test/GET/users",
				"arn:aws:execute-api:us-east-1:123456789012:a1b2c3d4e5/prod/GET/users",
			} {
				if apigw.PolicyAllows(resp.PolicyDocument, elsewhere) {
					t.Errorf("%s: policy allows %s, another API or stage", role, elsewhere)
				}
			}
		}
	}
}

func TestDeniedRoutes(t *testing.T) {
	if got := DeniedRoutes(quire.RoleAdmin); len(got) != 0 {
		t.Errorf("DeniedRoutes(admin) = %v, want none", got)
	}
	got := DeniedRoutes(quire.RoleCustomer)
	if !slices.Contains(got, "*/admin/users") {
		t.Errorf("DeniedRoutes(customer) = %v, want */admin/users", got)
	}
	for _, r := range got {
		if strings.Contains(r, "{") {
			t.Errorf("DeniedRoutes(customer) has a path parameter left in %q", r)
		}
	}
}

func TestCacheTTL(t *testing.T) {
	for _, c := range []struct{ lifetime, want time.Duration }{
		{time.Minute, time.Minute},
		{5 * time.Minute, 5 * time.Minute},
		{login.DefaultLifetime, MaxCacheTTL},
		{login.MaxLifetime, MaxCacheTTL},
	} {
		if got := CacheTTL(c.lifetime); got != c.want {
			t.Errorf("CacheTTL(%v) = %v, want %v", c.lifetime, got, c.want)
		}
	}
}

var (
	testNow    = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	testConfig = login.TokenConfig{Issuer: "quire/Test", Audience: login.DefaultAudience, Lifetime: 15 * time.Minute}
)

func newKey(t testing.TB) auth.Key {
	t.Helper()
	k, err := auth.GenerateKey(testNow)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
