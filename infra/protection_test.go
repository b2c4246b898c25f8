package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// synthWAF synthesizes the stack with the web ACL switched on: a
// production stage's, as the stack with no context is (TestPresets).
func synthWAF() (stacks, error) { return synth() }

// routePaths returns the paths the table serves a route on ("POST /users"
// in every version), none when it does not have the route.
func routePaths(key string) []string {
	var out []string
	for _, r := range routes.All() {
		if g, _ := routes.Gateway(r.Path); r.Resource().Key() == key && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// stageThrottles returns the stage's throttling per method, as
// "METHOD /path" ("* /*" for the stage's default) -> [rate, burst].
func stageThrottles(t *testing.T, res map[string]resource) map[string][2]float64 {
	t.Helper()
	var stages []resource
	for _, r := range res {
		if r.Type == "AWS::ApiGateway::Stage" {
			stages = append(stages, r)
		}
	}
	if len(stages) != 1 {
		t.Fatalf("%d stages, want 1", len(stages))
	}
	got := map[string][2]float64{}
	for _, s := range stages[0].Properties["MethodSettings"].([]any) {
		m := s.(map[string]any)
		// "/~1api~1v1~1users" is /api/v1/users; "/*" every path.
		path := m["ResourcePath"].(string)
		if path != "/*" {
			path = strings.ReplaceAll(strings.TrimPrefix(path, "/"), "~1", "/")
		}
		rate, _ := m["ThrottlingRateLimit"].(float64)
		burst, _ := m["ThrottlingBurstLimit"].(float64)
		got[m["HttpMethod"].(string)+" "+path] = [2]float64{rate, burst}
	}
	return got
}

// wantThrottles is the stage's throttling: the default for every method,
// and the costly public routes' own, wherever the table serves them.
func wantThrottles(rate, burst float64, routeLimits map[string][2]float64) map[string][2]float64 {
	want := map[string][2]float64{"* /*": {rate, burst}}
	for key, limit := range routeLimits {
		method, _, _ := strings.Cut(key, " ")
		for _, p := range routePaths(key) {
			want[method+" "+p] = limit
		}
	}
	return want
}

// TestMethodThrottles: the stage lets each method take 100 requests a
// second (burst 200), login and token refresh 10 (burst 20), sign-up 2
// (burst 5), in every version the route is served in.
func TestMethodThrottles(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	for _, key := range []string{"POST /login", "POST /users"} {
		if len(routePaths(key)) == 0 {
			t.Errorf("the route table has no %s", key)
		}
	}
	want := wantThrottles(100, 200, map[string][2]float64{
		"POST /login": {10, 20}, "POST /tokens": {10, 20}, "POST /users": {2, 5},
	})
	if _, ok := want["POST /api/{version}/users"]; !ok {
		t.Errorf("sign-up is not limited under /api/{version}: %v", want)
	}
	if diff := cmp.Diff(want, stageThrottles(t, res)); diff != "" {
		t.Errorf("stage method settings (-want +got):\n%s", diff)
	}
}

// TestPublicPostsAreLimited: every public POST route is a costly route
// with limits of its own, or the stage's default lets one client spend it;
// and every costly route is one the table has.
func TestPublicPostsAreLimited(t *testing.T) {
	for _, c := range costlyRoutes {
		if len(c.paths()) == 0 {
			t.Errorf("costly route %s is not in the route table", c.key)
		}
	}
	for _, r := range routes.All() {
		if r.Method != "POST" || r.Access != routes.Public {
			continue
		}
		if !slices.ContainsFunc(costlyRoutes, func(c costlyRoute) bool { return c.key == r.Resource().Key() }) {
			t.Errorf("%s is public and not in costlyRoutes", r.Key())
		}
	}
}

// TestThrottleContext: quire:throttleRate and quire:throttleBurst set the
// stage's default, which caps the costly routes' own; a value out of
// bounds, or not a number, fails the synth and names the key.
func TestThrottleContext(t *testing.T) {
	needsNode(t)
	for _, tc := range []struct {
		context map[string]any
		want    map[string][2]float64
	}{
		{tunedA, wantThrottles(50, 80, map[string][2]float64{
			"POST /login": {10, 20}, "POST /tokens": {10, 20}, "POST /users": {2, 5},
		})},
		{tunedB, wantThrottles(2500, 5000, map[string][2]float64{
			"POST /login": {10, 20}, "POST /tokens": {10, 20}, "POST /users": {2, 5},
		})},
		{tunedC, wantThrottles(5, 8, map[string][2]float64{
			"POST /login": {5, 8}, "POST /tokens": {5, 8}, "POST /users": {2, 5},
		})},
	} {
		rate, burst := tc.context[contextThrottleRate], tc.context[contextThrottleBurst]
		tmpl, err := synthWith(tc.context)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, stageThrottles(t, resourcesOf(t, tmpl))); diff != "" {
			t.Errorf("rate %v, burst %v: stage method settings (-want +got):\n%s", rate, burst, diff)
		}
	}
	for _, bad := range []struct {
		key   string
		value any
	}{
		{contextThrottleRate, "0"}, {contextThrottleRate, "-5"}, {contextThrottleRate, "10001"},
		{contextThrottleRate, "fast"}, {contextThrottleRate, "NaN"},
		{contextThrottleBurst, "0"}, {contextThrottleBurst, "5001"}, {contextThrottleBurst, "1.5"}, {contextThrottleBurst, "lots"},
		{contextWAF, "maybe"},
	} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, bad.key) {
					t.Errorf("%s = %v: synth failed with %q, want a failure that names the key", bad.key, bad.value, msg)
				}
			}()
			_, _ = synthWith(map[string]any{bad.key: bad.value})
		}()
	}
}

// TestNoWebACLOnADevelopmentStage: AWS WAF bills by the month, so a
// development stage has no WAF resource unless quire:waf is true, nor a
// production one with quire:waf=false; API Gateway's answer to a request a
// web ACL blocks is a problem all the same.
func TestNoWebACLOnADevelopmentStage(t *testing.T) {
	needsNode(t)
	tmpl, _ := template(t)
	dev, err := synthWith(map[string]any{contextStage: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	off, err := synthWith(tunedC) // quire:waf=false
	if err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]map[string]resource{"quire:stage=dev": resourcesOf(t, dev), "quire:waf=false": resourcesOf(t, off)} {
		for id, r := range res {
			if strings.HasPrefix(r.Type, "AWS::WAFv2::") {
				t.Errorf("%s: %s is a %s", name, id, r.Type)
			}
		}
	}
	tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
		"ResponseType": "WAF_FILTERED",
		"StatusCode":   "403",
		"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{
			"gatewayresponse.header.Content-Type": "'application/problem+json'",
		}),
		"ResponseTemplates": map[string]any{"application/json": assertions.Match_StringLikeRegexp(jsii.String(
			regexp.QuoteMeta(`"type":"` + rest.ProblemType(quire.EFORBIDDEN) + `"`)))},
	})
}

// webACL returns the template with the web ACL on, and the ACL's
// properties.
func webACL(t *testing.T) (map[string]resource, map[string]any) {
	t.Helper()
	s, err := synthWAF()
	if err != nil {
		t.Fatal(err)
	}
	res := resourcesOf(t, s.main)
	acls := propertiesOf(res, "AWS::WAFv2::WebACL")
	if len(acls) != 1 {
		t.Fatalf("%d web ACLs, want 1", len(acls))
	}
	return res, acls[0]
}

// propertiesOf returns the properties of each resource of type typ.
func propertiesOf(res map[string]resource, typ string) []map[string]any {
	var out []map[string]any
	for _, r := range res {
		if r.Type == typ {
			out = append(out, r.Properties)
		}
	}
	return out
}

// rules returns a web ACL's rules by name.
func rules(acl map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, r := range acl["Rules"].([]any) {
		rule := r.(map[string]any)
		out[rule["Name"].(string)] = rule
	}
	return out
}

// TestWebACLAssociation: one regional web ACL, on the API's stage.
func TestWebACLAssociation(t *testing.T) {
	needsNode(t)
	res, acl := webACL(t)
	if acl["Scope"] != "REGIONAL" || !cmp.Equal(acl["DefaultAction"], map[string]any{"Allow": map[string]any{}}) {
		t.Errorf("web ACL scope %v, default action %v", acl["Scope"], acl["DefaultAction"])
	}
	var aclID, apiID, stageID string
	for id, r := range res {
		switch r.Type {
		case "AWS::WAFv2::WebACL":
			aclID = id
		case "AWS::ApiGateway::RestApi":
			apiID = id
		case "AWS::ApiGateway::Stage":
			stageID = id
		}
	}
	assocs := propertiesOf(res, "AWS::WAFv2::WebACLAssociation")
	if len(assocs) != 1 {
		t.Fatalf("%d web ACL associations, want 1", len(assocs))
	}
	if diff := cmp.Diff(map[string]any{"Fn::GetAtt": []any{aclID, "Arn"}}, assocs[0]["WebACLArn"]); diff != "" {
		t.Errorf("association's web ACL (-want +got):\n%s", diff)
	}
	arn, _ := json.Marshal(assocs[0]["ResourceArn"])
	if !strings.Contains(string(arn), `":apigateway:"`) ||
		!strings.Contains(string(arn), `"::/restapis/",{"Ref":"`+apiID+`"},"/stages/",{"Ref":"`+stageID+`"}`) {
		t.Errorf("association on %s, want stage %s of API %s", arn, stageID, apiID)
	}
}

// TestWebACLRateRules: each costly route the table has gets a per-address
// rule over 5 minutes, on POST to the route's paths with or without the
// stage's name before them, answered 429 problem+json with Retry-After.
func TestWebACLRateRules(t *testing.T) {
	needsNode(t)
	_, acl := webACL(t)
	byName := rules(acl)
	for _, tc := range []struct {
		key, rule        string
		limit            float64
		match, dontMatch []string
	}{
		{"POST /login", "login-per-ip", 100,
			[]string{"/login", "/prod/login", "/prod/login/"},
			[]string{"/prod/login/x", "/prod/loginx", "/a/b/login", "/prod/users", "/prod/tokens"}},
		{"POST /tokens", "tokens-per-ip", 100,
			[]string{"/tokens", "/prod/tokens", "/prod/tokens/"},
			[]string{"/prod/tokens/1", "/prod/login"}},
		{"POST /users", "sign-up-per-ip", 20,
			// Any version: API Gateway's one tree takes every one (routes.Gateway).
			[]string{"/users", "/prod/users", "/prod/api/v1/users", "/prod/api/v2/users/", "/api/v1/users", "/prod/api/v3/users"},
			[]string{"/prod/users/42", "/prod/users/42/close", "/prod/api/v1/users/42", "/prod/login"}},
	} {
		rule, ok := byName[tc.rule]
		if len(routePaths(tc.key)) == 0 {
			if ok {
				t.Errorf("%s: a rule for a route the table does not have", tc.rule)
			}
			continue
		}
		if !ok {
			t.Errorf("no rule %s for %s", tc.rule, tc.key)
			continue
		}
		stmt := rule["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)
		if stmt["Limit"] != tc.limit || stmt["EvaluationWindowSec"] != float64(300) || stmt["AggregateKeyType"] != "IP" {
			t.Errorf("%s: limit %v per %v s per %v, want %v per 300 s per IP",
				tc.rule, stmt["Limit"], stmt["EvaluationWindowSec"], stmt["AggregateKeyType"], tc.limit)
		}
		wantAction := map[string]any{"Block": map[string]any{"CustomResponse": map[string]any{
			"ResponseCode": float64(429), "CustomResponseBodyKey": "throttled",
			"ResponseHeaders": []any{
				map[string]any{"Name": "Retry-After", "Value": "300"},
				map[string]any{"Name": "Cache-Control", "Value": "no-store"},
				map[string]any{"Name": "X-Content-Type-Options", "Value": "nosniff"},
			},
		}}}
		if diff := cmp.Diff(wantAction, rule["Action"]); diff != "" {
			t.Errorf("%s: action (-want +got):\n%s", tc.rule, diff)
		}
		and := stmt["ScopeDownStatement"].(map[string]any)["AndStatement"].(map[string]any)["Statements"].([]any)
		var method, pattern string
		var transforms []string
		for _, s := range and {
			s := s.(map[string]any)
			if bm, ok := s["ByteMatchStatement"].(map[string]any); ok && cmp.Equal(bm["FieldToMatch"], map[string]any{"Method": map[string]any{}}) &&
				bm["PositionalConstraint"] == "EXACTLY" {
				method = bm["SearchString"].(string)
			}
			if rm, ok := s["RegexMatchStatement"].(map[string]any); ok && cmp.Equal(rm["FieldToMatch"], map[string]any{"UriPath": map[string]any{}}) {
				pattern = rm["RegexString"].(string)
				for _, tt := range rm["TextTransformations"].([]any) {
					transforms = append(transforms, tt.(map[string]any)["Type"].(string))
				}
			}
		}
		if method != "POST" || len(and) != 2 {
			t.Errorf("%s: scope-down %v, want POST and a path", tc.rule, and)
		}
		if !slices.Contains(transforms, "NORMALIZE_PATH") || !slices.Contains(transforms, "URL_DECODE") {
			t.Errorf("%s: path transformations %v, want URL_DECODE and NORMALIZE_PATH", tc.rule, transforms)
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			t.Errorf("%s: path pattern %q: %v", tc.rule, pattern, err)
			continue
		}
		for _, p := range tc.match {
			if !re.MatchString(p) {
				t.Errorf("%s: %q does not match %s", tc.rule, pattern, p)
			}
		}
		for _, p := range tc.dontMatch {
			if re.MatchString(p) {
				t.Errorf("%s: %q matches %s", tc.rule, pattern, p)
			}
		}
	}
}

// TestWebACLThrottledBody: each of WAF's 429 bodies, past a per-address
// limit and past the per-token one, is the problem a client gets from API
// Gateway's own throttling, with a detail that says which limit.
func TestWebACLThrottledBody(t *testing.T) {
	needsNode(t)
	_, acl := webACL(t)
	bodies := acl["CustomResponseBodies"].(map[string]any)
	for key, who := range map[string]string{"throttled": "from this address", "throttled-token": "with this bearer token"} {
		body, _ := bodies[key].(map[string]any)
		if body["ContentType"] != "APPLICATION_JSON" {
			t.Errorf("%s: body content type %v", key, body["ContentType"])
		}
		var p rest.Problem
		if err := json.Unmarshal([]byte(fmt.Sprint(body["Content"])), &p); err != nil {
			t.Fatalf("%s: body %v: %v", key, body["Content"], err)
		}
		if p.Type != rest.ProblemType(quire.ETHROTTLED) || p.Status != 429 || p.Title != rest.Title(quire.ETHROTTLED) ||
			!strings.Contains(p.Detail, who) {
			t.Errorf("%s: body %+v, want the problem throttled, its detail saying %q", key, p, who)
		}
	}
	if len(bodies) != 2 {
		t.Errorf("%d response bodies, want 2: %v", len(bodies), slices.Sorted(maps.Keys(bodies)))
	}
}

// TestWebACLCommonRuleSet: AWS's common rule set runs after the rate
// rules, its 8 KB body limit only counting: the configuration document
// (PUT /admin/config) is up to 2 MiB. The ACL's fixed cost is $5 a month
// and $1 per rule.
func TestWebACLCommonRuleSet(t *testing.T) {
	needsNode(t)
	_, acl := webACL(t)
	byName := rules(acl)
	crs, ok := byName["common-rule-set"]
	if !ok {
		t.Fatalf("no common-rule-set rule in %v", slices.Sorted(maps.Keys(byName)))
	}
	want := map[string]any{
		"VendorName": "AWS",
		"Name":       "AWSManagedRulesCommonRuleSet",
		"RuleActionOverrides": []any{map[string]any{
			"Name": "SizeRestrictions_BODY", "ActionToUse": map[string]any{"Count": map[string]any{}},
		}},
	}
	if diff := cmp.Diff(want, crs["Statement"].(map[string]any)["ManagedRuleGroupStatement"]); diff != "" {
		t.Errorf("managed rule group (-want +got):\n%s", diff)
	}
	if !cmp.Equal(crs["OverrideAction"], map[string]any{"None": map[string]any{}}) {
		t.Errorf("override action %v, want None", crs["OverrideAction"])
	}
	priorities := map[float64]string{}
	for name, r := range byName {
		p := r["Priority"].(float64)
		if other, ok := priorities[p]; ok {
			t.Errorf("%s and %s share priority %v", name, other, p)
		}
		priorities[p] = name
		if name != "common-rule-set" && p >= crs["Priority"].(float64) {
			t.Errorf("%s (priority %v) runs after the common rule set (%v)", name, p, crs["Priority"])
		}
	}
	costly := 0
	for _, c := range costlyRoutes {
		if len(routePaths(c.key)) > 0 {
			costly++
		}
	}
	if len(byName) != costly+2 {
		t.Errorf("%d rules, want %d per-address rules, the per-token rule and the common rule set", len(byName), costly)
	}
	t.Logf("web ACL: %d rules, $%d.00 a month before requests", len(byName), 5+len(byName))
}

// TestQuotasWithWebACL: the web ACL's resources keep the stack inside
// CloudFormation's 500.
func TestQuotasWithWebACL(t *testing.T) {
	needsNode(t)
	res, _ := webACL(t)
	if len(res) > 500 {
		t.Errorf("%d resources with the web ACL (at most 500)", len(res))
	}
	t.Logf("%d resources in the stack with the web ACL", len(res))
}

// tokenRuleOf returns the web ACL's per-token rule.
func tokenRuleOf(t *testing.T, acl map[string]any) map[string]any {
	t.Helper()
	rule, ok := rules(acl)["per-token"]
	if !ok {
		t.Fatalf("no per-token rule in %v", slices.Sorted(maps.Keys(rules(acl))))
	}
	return rule
}

// TestWebACLTokenRule: every request that carries an Authorization header
// counts against its value, lower-cased (the authorizer takes "Bearer" in
// any case), and a token past 1,500 requests in 5 minutes is answered 429
// problem+json with Retry-After, as an address past its limit is, until its
// count falls below the limit.
func TestWebACLTokenRule(t *testing.T) {
	needsNode(t)
	_, acl := webACL(t)
	rule := tokenRuleOf(t, acl)
	want := map[string]any{"RateBasedStatement": map[string]any{
		"Limit":               float64(1500),
		"EvaluationWindowSec": float64(300),
		"AggregateKeyType":    "CUSTOM_KEYS",
		"CustomKeys": []any{map[string]any{"Header": map[string]any{
			"Name":                "authorization",
			"TextTransformations": []any{map[string]any{"Priority": float64(0), "Type": "LOWERCASE"}},
		}}},
		// A request without the header is in no count: it has no key.
		"ScopeDownStatement": map[string]any{"SizeConstraintStatement": map[string]any{
			"FieldToMatch":        map[string]any{"SingleHeader": map[string]any{"Name": "authorization"}},
			"ComparisonOperator":  "GT",
			"Size":                float64(0),
			"TextTransformations": []any{map[string]any{"Priority": float64(0), "Type": "NONE"}},
		}},
	}}
	if diff := cmp.Diff(want, rule["Statement"]); diff != "" {
		t.Errorf("per-token statement (-want +got):\n%s", diff)
	}
	wantAction := map[string]any{"Block": map[string]any{"CustomResponse": map[string]any{
		"ResponseCode": float64(429), "CustomResponseBodyKey": "throttled-token",
		"ResponseHeaders": []any{
			map[string]any{"Name": "Retry-After", "Value": "300"},
			map[string]any{"Name": "Cache-Control", "Value": "no-store"},
			map[string]any{"Name": "X-Content-Type-Options", "Value": "nosniff"},
		},
	}}}
	if diff := cmp.Diff(wantAction, rule["Action"]); diff != "" {
		t.Errorf("per-token action (-want +got):\n%s", diff)
	}
	if v := rule["VisibilityConfig"].(map[string]any); v["MetricName"] != "QuirePerToken" || v["CloudWatchMetricsEnabled"] != true {
		t.Errorf("per-token visibility %v", v)
	}
}

// TestPerTokenLimitContext: quire:perTokenLimit sets the per-token rule's
// limit, as a string (-c) or a JSON number (cdk.json); a value WAF does not
// take (below 10, above 2,000,000,000, not whole, not a number) fails the
// synth and names the key, whether the web ACL is on or off.
func TestPerTokenLimitContext(t *testing.T) {
	needsNode(t)
	for _, tc := range []struct {
		value any
		want  int // 0: refused
	}{
		{nil, 1500}, {"10", 10}, {"60", 60}, {float64(3000), 3000}, {"2000000000", 2_000_000_000}, {float64(2e9), 2_000_000_000},
		{"9", 0}, {"0", 0}, {"-100", 0}, {"2000000001", 0}, {float64(1e10), 0}, {"1500.5", 0}, {float64(99.5), 0},
		{"lots", 0}, {"NaN", 0}, {"Inf", 0}, {"", 0},
	} {
		context := map[string]any{}
		if tc.value != nil {
			context[contextPerTokenLimit] = tc.value
		}
		got, msg := func() (n int, msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = fmt.Sprint(r)
				}
			}()
			app := awscdk.NewApp(&awscdk.AppProps{Context: &context})
			return perTokenLimit(awscdk.NewStack(app, jsii.String("Limits"), nil)), ""
		}()
		switch {
		case tc.want == 0 && !strings.Contains(msg, contextPerTokenLimit):
			t.Errorf("%#v: limit %d, %q; want a failure that names the key", tc.value, got, msg)
		case tc.want != 0 && got != tc.want:
			t.Errorf("%#v: limit %d (%s), want %d", tc.value, got, msg, tc.want)
		}
	}

	tmpl, err := synthWith(tunedA) // quire:waf=true, quire:perTokenLimit=600
	if err != nil {
		t.Fatal(err)
	}
	acls := propertiesOf(resourcesOf(t, tmpl), "AWS::WAFv2::WebACL")
	if len(acls) != 1 {
		t.Fatalf("%d web ACLs, want 1", len(acls))
	}
	if got := tokenRuleOf(t, acls[0])["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)["Limit"]; got != float64(600) {
		t.Errorf("quire:perTokenLimit=600: the rule's limit is %v", got)
	}
	for _, context := range []map[string]any{
		{contextWAF: "true", contextPerTokenLimit: "5"},
		{contextStage: "dev", contextPerTokenLimit: "5"}, // no web ACL
	} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, contextPerTokenLimit) {
					t.Errorf("%v: synth failed with %q, want a failure that names the key", context, msg)
				}
			}()
			_, _ = synthWith(context)
		}()
	}
}

// webACLCapacity is the web ACL capacity units (WCU) AWS WAF's price
// includes; past them, each 500 more costs extra.
const webACLCapacity = 1500

// statementWCU returns the capacity units of a rule statement by AWS WAF's
// published costs (rule statement pages of the developer guide), counting
// 10 for each text transformation but NONE, a custom aggregation key's
// included, which errs high; and an error for a statement it has no cost
// for.
func statementWCU(s map[string]any) (int, error) {
	transforms := func(v any) int {
		n := 0
		for _, tt := range v.([]any) {
			if tt.(map[string]any)["Type"] != "NONE" {
				n += 10
			}
		}
		return n
	}
	sum := func(statements []any) (int, error) {
		n := 0
		for _, nested := range statements {
			w, err := statementWCU(nested.(map[string]any))
			if err != nil {
				return 0, err
			}
			n += w
		}
		return n, nil
	}
	for typ, v := range s {
		m := v.(map[string]any)
		switch typ {
		case "RateBasedStatement":
			n := 2
			keys, _ := m["CustomKeys"].([]any) // none when aggregating by IP
			for _, k := range keys {
				n += 30
				for _, key := range k.(map[string]any) {
					if tt, ok := key.(map[string]any)["TextTransformations"]; ok {
						n += transforms(tt)
					}
				}
			}
			if scope, ok := m["ScopeDownStatement"].(map[string]any); ok {
				w, err := statementWCU(scope)
				return n + w, err
			}
			return n, nil
		case "AndStatement", "OrStatement":
			return sum(m["Statements"].([]any))
		case "NotStatement":
			return statementWCU(m["Statement"].(map[string]any))
		case "ByteMatchStatement":
			base := 2 // exactly, starts with, ends with
			if c := m["PositionalConstraint"]; c == "CONTAINS" || c == "CONTAINS_WORD" {
				base = 10
			}
			return base + transforms(m["TextTransformations"]), nil
		case "RegexMatchStatement":
			return 3 + transforms(m["TextTransformations"]), nil
		case "SizeConstraintStatement":
			return 1 + transforms(m["TextTransformations"]), nil
		case "ManagedRuleGroupStatement":
			if m["VendorName"] == "AWS" && m["Name"] == commonRuleSet {
				return 700, nil
			}
		}
		return 0, fmt.Errorf("no known cost for %s %v", typ, m["Name"])
	}
	return 0, fmt.Errorf("an empty statement")
}

// TestWebACLCapacity: the web ACL's rules stay within the 1,500 capacity
// units the price includes, the per-token rule's custom key (30 units)
// included.
func TestWebACLCapacity(t *testing.T) {
	needsNode(t)
	_, acl := webACL(t)
	total := 0
	byRule := map[string]int{}
	for name, rule := range rules(acl) {
		w, err := statementWCU(rule["Statement"].(map[string]any))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		byRule[name] = w
		total += w
	}
	if total > webACLCapacity {
		t.Errorf("the rules take %d WCU (%v), more than the %d the price includes", total, byRule, webACLCapacity)
	}
	t.Logf("%d WCU of %d: %v", total, webACLCapacity, byRule)
}
