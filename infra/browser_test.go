package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/routes"
)

// TestBrowserMethods: every path takes OPTIONS without a token, answered by
// its owner, and HEAD has a method of its own exactly where the path's ANY
// method would not serve it as the GET, with the GET's function and
// access.
func TestBrowserMethods(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	got := map[string]string{} // "METHOD /path" -> function and whether the authorizer runs
	for _, m := range methods(res) {
		if m.verb != "OPTIONS" && m.verb != "HEAD" {
			continue
		}
		integ, _ := m.props["Integration"].(map[string]any)
		got[m.verb+" "+m.path] = functionOf(res, integ["Uri"]) + " " + m.props["AuthorizationType"].(string)
	}
	want := map[string]string{}
	heads := 0
	for _, p := range routes.GatewayPaths() {
		want["OPTIONS "+p] = exportName(routes.Owner(p)) + "Function NONE"
		if get, ok := headMethod(p); ok {
			heads++
			auth := "CUSTOM"
			if get.Access == routes.Public {
				auth = "NONE"
			}
			want["HEAD "+p] = exportName(get.Group) + "Function " + auth
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OPTIONS and HEAD methods (-want +template):\n%s", diff)
	}
	if heads == 0 || heads == len(routes.GatewayPaths()) {
		t.Errorf("%d HEAD methods of %d paths: the test no longer tells the two cases apart", heads, len(routes.GatewayPaths()))
	}
	// /users is public for sign-up, and its GET is not: ANY would run
	// no authorizer for a HEAD.
	if _, ok := headMethod("/users"); !ok {
		t.Error("HEAD /users has no method of its own")
	}
}

// TestCORSContext: quire:corsOrigins reaches every group function as
// CORS_ORIGINS, and API Gateway's own answers carry the CORS headers: the
// origin itself for one, the request's Origin for several, none without.
func TestCORSContext(t *testing.T) {
	needsNode(t)
	for _, tc := range []struct {
		context        map[string]any
		origins, allow string
	}{
		{nil, "", ""},
		{tunedC, "https://shop.example.com", "'https://shop.example.com'"},
		{tunedA, "https://shop.example.com,https://admin.example.com", "method.request.header.Origin"},
		{tunedB, "*", "'*'"},
	} {
		if tc.context[contextCORS] != nil && tc.context[contextCORS] != tc.origins {
			t.Fatalf("the context holds %s=%v, want %s", contextCORS, tc.context[contextCORS], tc.origins)
		}
		tmpl, err := synthWith(tc.context)
		if err != nil {
			t.Fatal(err)
		}
		res := resourcesOf(t, tmpl)
		for _, g := range routes.Groups() {
			if got := env(res, exportName(g.Name)+"Function")["CORS_ORIGINS"]; tc.origins != "" && got != tc.origins || tc.origins == "" && got != nil {
				t.Errorf("%q: %s's CORS_ORIGINS = %v", tc.origins, g.Name, got)
			}
		}
		for _, props := range propertiesOf(res, "AWS::ApiGateway::GatewayResponse") {
			params, _ := props["ResponseParameters"].(map[string]any)
			got, _ := params["gatewayresponse.header.Access-Control-Allow-Origin"].(string)
			vary, _ := params["gatewayresponse.header.Vary"].(string)
			expose, _ := params["gatewayresponse.header.Access-Control-Expose-Headers"].(string)
			if got != tc.allow || tc.allow != "" && (vary != "'Origin'" || !strings.Contains(expose, "Retry-After")) {
				t.Errorf("%q: gateway response %v: Access-Control-Allow-Origin %q, Vary %q, Expose %q; want %q", tc.origins, props["ResponseType"], got, vary, expose, tc.allow)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a malformed quire:corsOrigins synthesized")
		}
	}()
	_, _ = synthWith(map[string]any{contextCORS: "shop.example.com"})
}
