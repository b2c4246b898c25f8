package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/authorizer"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// synth synthesizes the stack as deployed by default.
func synth() (stacks, error) { return synthStacks(nil) }

// Three apps hold the context values that tests of one key set and that
// change no other key's resources, so that each is synthesized once for all
// those tests, where an app per value took seconds: each test reads the key
// it checks from one of them (tunedA's values, then tunedB's, tunedC's).
var (
	tunedA = map[string]any{
		contextCORS:           "https://shop.example.com,https://admin.example.com",
		contextAccountLogRole: "false",
		contextAlarmEmail:     "oncall@example.com",
		contextDeployment:     "Linear10PercentEvery1Minute",
		contextHealthCheck:    "false",
		contextThrottleRate:   "50", contextThrottleBurst: "80",
		contextTokenLifetime: "30m", contextKeyGeneration: "7",
		contextWAF: "true", contextPerTokenLimit: "600",
	}
	tunedB = map[string]any{
		contextCORS:       "*",
		contextDeployment: "AllAtOnce",
		// As cdk.json holds them: JSON numbers.
		contextThrottleRate: float64(2500), contextThrottleBurst: float64(5000),
		contextTokenLifetime: "2m", contextKeyGeneration: "7",
	}
	tunedC = map[string]any{
		contextCORS:         "https://shop.example.com",
		contextThrottleRate: "5", contextThrottleBurst: "8",
		contextWAF: "false",
	}
)

// stacks are the templates of the Quire stack and of its nested stacks:
// the operations stack, and the stacks of the API's routes by name
// (routeStacks).
type stacks struct {
	main, ops assertions.Template
	routes    map[string]assertions.Template
}

// A synthesis is the app defined with one CDK context and route table,
// with the checks, and synthesized when a test first reads its templates.
type synthesis struct {
	define func() (awscdk.Stack, error)
	synth  func() (synthOutput, error)
}

// synthOutput is what a synthesis gives: the stack's templates, and the
// errors and warnings that synthesizing it reported (findings).
type synthOutput struct {
	stacks
	findings []string
}

// syntheses holds a synthesis by what its app is defined from
// (synthesisKey): the app of each is defined and synthesized once, for
// every test that reads it. Synthesizing through jsii takes seconds; what a
// test reads of an app it does not change.
var (
	synthesesMu sync.Mutex
	syntheses   = map[string]*synthesis{}
)

// needsNode skips t, saying what to install, where the CDK app cannot run:
// jsii runs it in Node, which go test alone does not need.
func needsNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("the CDK app runs in Node (jsii), and node is not on PATH: install Node 20 or later (make test needs it too)")
	}
}

// synthesisKey names what the app is defined from: the CDK context values
// (none and empty alike) and the route table as it is (routes.Grow changes
// it).
func synthesisKey(context map[string]any) string {
	if len(context) == 0 {
		context = nil
	}
	return fmt.Sprintf("%#v", struct {
		Context  map[string]any
		Versions []int
		Routes   []routes.Route
	}{context, routes.Versions, routes.All()})
}

// placeholders is a folder of placeholder bootstraps, for the apps of
// every synthesis.
var placeholders = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "quire-assets") })

// synthesisOf returns the synthesis of the app defined with the CDK context
// values and the route table as they are.
func synthesisOf(context map[string]any) *synthesis {
	key := synthesisKey(context)
	synthesesMu.Lock()
	defer synthesesMu.Unlock()
	if s, ok := syntheses[key]; ok {
		return s
	}
	s := &synthesis{}
	s.define = sync.OnceValues(func() (awscdk.Stack, error) {
		dir, err := placeholders()
		if err != nil {
			return nil, err
		}
		_, stack, err := newApp(dir, context)
		return stack, err
	})
	s.synth = sync.OnceValues(func() (synthOutput, error) {
		stack, err := s.define()
		if err != nil {
			return synthOutput{}, err
		}
		return synthesize(stack), nil
	})
	syntheses[key] = s
	return s
}

// defined returns the stack of the app defined with the CDK context values,
// bootstraps being placeholders, once for every test that asks. It panics
// as the app does, on every call, when the stack refuses a value.
func defined(context map[string]any) (awscdk.Stack, error) {
	return synthesisOf(context).define()
}

// synthOutputWith returns the templates of the stack defined with the CDK
// context values (defined) and what synthesizing it reported, synthesized
// once for every test that asks.
func synthOutputWith(context map[string]any) (synthOutput, error) {
	return synthesisOf(context).synth()
}

// synthWith returns the template of the stack defined with the CDK context
// values, synthesized once for every test that asks. It fails when cdk-nag's
// packs (addChecks) or the CDK report an error or a warning.
func synthWith(context map[string]any) (assertions.Template, error) {
	s, err := synthStacks(context)
	return s.main, err
}

// synthStacks is synthWith with the nested stacks' templates too.
func synthStacks(context map[string]any) (stacks, error) {
	s, err := synthOutputWith(context)
	if err != nil {
		return stacks{}, err
	}
	if len(s.findings) > 0 {
		return stacks{}, fmt.Errorf("%d findings with context %v:\n%s", len(s.findings), context, strings.Join(s.findings, "\n"))
	}
	return s.stacks, nil
}

// synthesize synthesizes stack's app and returns the templates of stack and
// of its nested stacks, and what synthesizing it reported.
func synthesize(stack awscdk.Stack) synthOutput {
	s := stacks{
		main:   assertions.Template_FromStack(stack, nil),
		ops:    assertions.Template_FromStack(operations(stack), nil),
		routes: map[string]assertions.Template{},
	}
	for name := range routeStacks {
		s.routes[name] = assertions.Template_FromStack(awscdk.Stack_Of(stack.Node().FindChild(jsii.String(name))), nil)
	}
	return synthOutput{stacks: s, findings: findings(stack)}
}

// all returns the resources of the main template and of the routes'
// stacks, each of those with its parameters replaced by what the main
// template passes it: the whole API in one map, as API Gateway sees it.
func (s stacks) all(t *testing.T) map[string]resource {
	t.Helper()
	out := resourcesOf(t, s.main)
	nested := map[string]resource{}
	for id, r := range out {
		if r.Type == "AWS::CloudFormation::Stack" {
			nested[id] = r
		}
	}
	for name, tmpl := range s.routes {
		var params map[string]any
		for id, r := range nested {
			if strings.HasPrefix(id, name+"NestedStack") {
				params, _ = r.Properties["Parameters"].(map[string]any)
			}
		}
		if params == nil {
			t.Fatalf("the main template passes the stack %s no parameters", name)
		}
		for id, r := range resourcesOf(t, tmpl) {
			if _, taken := out[id]; taken {
				t.Fatalf("%s and the main template both have a resource %s", name, id)
			}
			r.Properties = inline(r.Properties, params).(map[string]any)
			out[id] = r
		}
	}
	return out
}

// inline returns v with each {"Ref": p} of a parameter p in params replaced
// by its value.
func inline(v any, params map[string]any) any {
	switch v := v.(type) {
	case map[string]any:
		if p, ok := v["Ref"].(string); ok && len(v) == 1 && params[p] != nil {
			return params[p]
		}
		out := map[string]any{}
		for k, e := range v {
			out[k] = inline(e, params)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = inline(e, params)
		}
		return out
	}
	return v
}

// newApp defines the app with the checks and the stack, bootstraps being
// placeholders in dir.
func newApp(dir string, context map[string]any) (awscdk.App, awscdk.Stack, error) {
	for _, name := range append(groupNames(), "authorizer", "keys", hookName, eventsName) {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, name, "bootstrap"), []byte("placeholder"), 0o755); err != nil {
			return nil, nil, err
		}
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &context})
	addChecks(app)
	return app, newStage(app, dir), nil
}

// operations returns the stack's nested operations stack.
func operations(stack awscdk.Stack) awscdk.Stack {
	return awscdk.Stack_Of(stack.Node().FindChild(jsii.String("Operations")))
}

// findings returns the errors and warnings synthesizing stack reported:
// cdk-nag's findings, each "path: rule: message", and the CDK's own. It
// reads them from the app's assembly, synthesizing the app if it has not
// been (Annotations_FromStack would synthesize it again).
func findings(stack awscdk.Stack) []string {
	artifact := awscdk.Stage_Of(stack).Synth(nil).GetStackArtifact(stack.ArtifactId())
	// Read through JSON: the Go fields of cxapi.SynthesisMessage are
	// deprecated (the type moved to @aws-cdk/cloud-assembly-api), its
	// JSON is not.
	b, err := json.Marshal(artifact.Messages())
	if err != nil {
		return []string{err.Error()}
	}
	var messages []struct {
		Level string `json:"level"`
		ID    string `json:"id"`
		Entry struct {
			Data any `json:"data"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(b, &messages); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, level := range []string{"ERROR", "WARNING"} {
		for _, m := range messages {
			if strings.EqualFold(m.Level, level) {
				out = append(out, fmt.Sprintf("%s: %v", m.ID, m.Entry.Data))
			}
		}
	}
	return out
}

func groupNames() []string {
	var out []string
	for _, g := range routes.Groups() {
		out = append(out, g.Name)
	}
	return out
}

// synthesized synthesizes the stack once for all tests.
func synthesized(t *testing.T) stacks {
	t.Helper()
	s, err := synth()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// template synthesizes the stack once for all tests and returns it with its
// resources as plain JSON.
func template(t *testing.T) (assertions.Template, map[string]resource) {
	t.Helper()
	s := synthesized(t)
	return s.main, s.all(t)
}

// templateJSON holds each template's JSON by template: a template does not
// change, and reading it through jsii takes a while.
var templateJSON sync.Map

// resourcesOf returns a template's resources as plain JSON, a copy of
// their own for the caller.
func resourcesOf(t *testing.T, tmpl assertions.Template) map[string]resource {
	t.Helper()
	b, ok := templateJSON.Load(tmpl)
	if !ok {
		j, err := json.Marshal(tmpl.ToJSON())
		if err != nil {
			t.Fatal(err)
		}
		b, _ = templateJSON.LoadOrStore(tmpl, j)
	}
	var doc struct{ Resources map[string]resource }
	if err := json.Unmarshal(b.([]byte), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Resources
}

type resource struct {
	Type           string
	Properties     map[string]any
	DeletionPolicy string
	UpdatePolicy   map[string]any
	DependsOn      any
}

// ref returns the logical id a {"Ref": id} or {"Fn::GetAtt": [id, ...]}
// points at.
func ref(v any) string {
	m, _ := v.(map[string]any)
	if id, ok := m["Ref"].(string); ok {
		return id
	}
	if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
		id, _ := ga[0].(string)
		return id
	}
	return ""
}

// fullPath resolves an API Gateway resource's path from its PathPart and
// parents.
func fullPath(res map[string]resource, id string) string {
	r, ok := res[id]
	if !ok || r.Type != "AWS::ApiGateway::Resource" {
		return "/" // the API's root resource, which the template does not declare
	}
	return strings.TrimSuffix(fullPath(res, ref(r.Properties["ParentId"])), "/") + "/" + r.Properties["PathPart"].(string)
}

// functionOf returns the logical id of the Lambda function whose alias
// live an integration or authorizer URI (or a permission's FunctionName)
// names, or "" when it names no such alias: callers never invoke a
// function's $LATEST, which CodeDeploy cannot shift.
func functionOf(res map[string]resource, uri any) string {
	b, _ := json.Marshal(uri)
	for _, m := range regexp.MustCompile(`\{"Ref":"([A-Za-z0-9]+)"\}`).FindAllStringSubmatch(string(b), -1) {
		if a := res[m[1]]; a.Type == "AWS::Lambda::Alias" && a.Properties["Name"] == liveAlias {
			return ref(a.Properties["FunctionName"])
		}
	}
	return ""
}

// isTracing reports whether an IAM statement is the one active tracing
// adds: sending segments to X-Ray, which has no resource to name.
func isTracing(s map[string]any) bool {
	actions := asList(s["Action"])
	return len(actions) == 2 && slices.Contains(actions, any("xray:PutTraceSegments")) &&
		slices.Contains(actions, any("xray:PutTelemetryRecords")) && s["Resource"] == "*"
}

func TestRoutes(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	got := map[string]string{} // "METHOD /path" -> function
	for _, r := range res {
		if r.Type != "AWS::ApiGateway::Method" {
			continue
		}
		path := fullPath(res, ref(r.Properties["ResourceId"]))
		if path == "" {
			path = "/"
		}
		integ, _ := r.Properties["Integration"].(map[string]any)
		if integ["Type"] != "AWS_PROXY" {
			t.Errorf("%s %s: integration type %v", r.Properties["HttpMethod"], path, integ["Type"])
		}
		got[r.Properties["HttpMethod"].(string)+" "+path] = functionOf(res, integ["Uri"])
	}
	want := map[string]string{}
	for _, r := range routes.All() {
		g, _ := routes.Gateway(r.Path)
		want[r.Method+" "+g] = exportName(r.Group) + "Function"
	}
	for _, p := range routes.GatewayPaths() {
		want["ANY "+p] = exportName(routes.Owner(p)) + "Function"
		want["OPTIONS "+p] = exportName(routes.Owner(p)) + "Function"
		if get, ok := headMethod(p); ok {
			want["HEAD "+p] = exportName(get.Group) + "Function"
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("methods (-route table +template):\n%s", diff)
	}
}

// TestInvokePermissions: API Gateway may invoke each group's function's
// alias through one permission on this API's stage, however many methods
// lead to it.
func TestInvokePermissions(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	var api string
	for id, r := range res {
		if r.Type == "AWS::ApiGateway::RestApi" {
			api = id
		}
	}
	perms := map[string]int{}
	for id, r := range res {
		if r.Type != "AWS::Lambda::Permission" || r.Properties["Principal"] != "apigateway.amazonaws.com" {
			continue
		}
		fn := functionOf(res, r.Properties["FunctionName"])
		if fn == "AuthorizerFunction" {
			continue
		}
		perms[fn]++
		b, _ := json.Marshal(r.Properties["SourceArn"])
		if r.Properties["Principal"] != "apigateway.amazonaws.com" || !strings.Contains(string(b), `{"Ref":"`+api+`"},"/*/*/*"`) {
			t.Errorf("%s: %v may invoke %s from %s, want API Gateway from any method of %s", id, r.Properties["Principal"], fn, b, api)
		}
	}
	for _, g := range routes.Groups() {
		if n := perms[exportName(g.Name)+"Function"]; n != 1 {
			t.Errorf("%s: %d invoke permissions, want 1", g.Name, n)
		}
	}
}

func TestFunctions(t *testing.T) {
	needsNode(t)
	tmpl, res := template(t)
	for _, g := range routes.Groups() {
		id := exportName(g.Name) + "Function"
		fn, ok := res[id]
		if !ok {
			t.Fatalf("no function %s", id)
		}
		p := fn.Properties
		if p["Runtime"] != "provided.al2023" || p["Handler"] != "bootstrap" || !cmp.Equal(p["Architectures"], []any{"arm64"}) {
			t.Errorf("%s: runtime %v, handler %v, architectures %v", id, p["Runtime"], p["Handler"], p["Architectures"])
		}
		logs, _ := p["LoggingConfig"].(map[string]any)
		lg, ok := res[ref(logs["LogGroup"])]
		if !ok || lg.Properties["RetentionInDays"] == nil {
			t.Errorf("%s: log group %v without a retention", id, logs)
		}
		env, _ := p["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for _, gr := range g.Grants {
			if ref(vars[dynamo.TableEnv(gr.Table)]) == "" {
				t.Errorf("%s: %s does not name the table", id, dynamo.TableEnv(gr.Table))
			}
		}
	}
	// The groups' functions, the authorizer, the keys function, the
	// pre-traffic hook and the events pipe's enrichment; nothing else
	// runs code.
	tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(len(routes.Groups())+4))
	for _, g := range routes.Groups() {
		if mem := res[exportName(g.Name)+"Function"].Properties["MemorySize"]; mem != float64(g.MemoryMB) {
			t.Errorf("%s: memory %v, want %d", g.Name, mem, g.MemoryMB)
		}
		// The local gateway gives each invocation this time too.
		if timeout := res[exportName(g.Name)+"Function"].Properties["Timeout"]; timeout != apigw.FunctionTimeout.Seconds() {
			t.Errorf("%s: timeout %v s, want apigw.FunctionTimeout (%v)", g.Name, timeout, apigw.FunctionTimeout)
		}
	}
}

// A DynamoDB call that is throttled, failed or left unanswered on every
// attempt gives up before its request's deadline: the request answers 503,
// never Lambda's timeout.
func TestRetriesEndBeforeTheDeadline(t *testing.T) {
	worst := time.Duration(dynamo.MaxAttempts)*dynamo.AttemptTimeout + time.Duration(dynamo.MaxAttempts-1)*quire.MaxBackoff
	if budget := apigw.FunctionTimeout - apigw.DeadlineMargin; worst >= budget {
		t.Errorf("a DynamoDB call may take %v, and a request has %v", worst, budget)
	}
}

// TestUsersIndexesProjectKeysOnly: the users table's indexes, whose
// partition keys have one or two values, take no write when a balance, a
// profile or a content hash changes, and hold no personal data.
func TestUsersIndexesProjectKeysOnly(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	found := 0
	for _, r := range res {
		if r.Type != "AWS::DynamoDB::Table" {
			continue
		}
		gsis, _ := r.Properties["GlobalSecondaryIndexes"].([]any)
		for _, ix := range gsis {
			gsi := ix.(map[string]any)
			switch gsi["IndexName"] {
			case "list", "active", "role":
				found++
				if p := gsi["Projection"].(map[string]any)["ProjectionType"]; p != "KEYS_ONLY" {
					t.Errorf("index %v projects %v, want KEYS_ONLY", gsi["IndexName"], p)
				}
			}
		}
	}
	if found != 3 {
		t.Errorf("%d users indexes, want list, active and role", found)
	}
}

// TestCatalogIndexesProjection: the catalog's "kind" and "featured"
// indexes, whose partition keys have one or two values, take no write when
// a price, a status or a content hash changes; "by_author", a partition
// per author, keeps whole products so that an author's books are one
// Query.
func TestCatalogIndexesProjection(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	want := map[string]string{"kind": "KEYS_ONLY", "featured": "KEYS_ONLY", "by_author": "ALL"}
	got := map[string]string{}
	for _, r := range res {
		if r.Type != "AWS::DynamoDB::Table" {
			continue
		}
		gsis, _ := r.Properties["GlobalSecondaryIndexes"].([]any)
		for _, ix := range gsis {
			gsi := ix.(map[string]any)
			name, _ := gsi["IndexName"].(string)
			if _, ok := want[name]; ok {
				got[name], _ = gsi["Projection"].(map[string]any)["ProjectionType"].(string)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalog index projections (-want +got):\n%s", diff)
	}
}

func TestTables(t *testing.T) {
	needsNode(t)
	tmpl, _ := template(t)
	tmpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(len(dynamo.Tables())))
	for _, tb := range dynamo.Tables() {
		keys := []any{map[string]any{"AttributeName": tb.PartitionKey.Name, "KeyType": "HASH"}}
		if tb.SortKey != nil {
			keys = append(keys, map[string]any{"AttributeName": tb.SortKey.Name, "KeyType": "RANGE"})
		}
		var gsis []any
		for _, ix := range tb.Indexes {
			ixKeys := []any{map[string]any{"AttributeName": ix.PartitionKey.Name, "KeyType": "HASH"}}
			if ix.SortKey != nil {
				ixKeys = append(ixKeys, map[string]any{"AttributeName": ix.SortKey.Name, "KeyType": "RANGE"})
			}
			gsis = append(gsis, map[string]any{
				"IndexName": ix.Name, "KeySchema": ixKeys, "Projection": map[string]any{"ProjectionType": string(ix.Projection())},
			})
		}
		props := map[string]any{
			"KeySchema":                        keys,
			"BillingMode":                      "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
			"DeletionProtectionEnabled":        true,
			"GlobalSecondaryIndexes":           gsis,
		}
		if gsis == nil {
			props["GlobalSecondaryIndexes"] = assertions.Match_Absent()
		}
		if tb.TTL != "" {
			props["TimeToLiveSpecification"] = map[string]any{"AttributeName": tb.TTL, "Enabled": true}
		}
		props["StreamSpecification"] = assertions.Match_Absent()
		if tb.Stream {
			props["StreamSpecification"] = map[string]any{"StreamViewType": "NEW_IMAGE"}
		}
		tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{"Properties": props, "DeletionPolicy": "Retain"})
	}
}

// TestLeastPrivilege checks that each function's role may do exactly the
// table actions of its group's grants, on its tables and their indexes
// (TestRolesAreTheGrants: each on which), and no function of no group any.
// TestPreTrafficHook checks the hook's role and CodeDeploy's, and
// TestEventsPipe the events pipe's.
func TestLeastPrivilege(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	roles := map[string]string{} // role logical id -> function logical id
	for id, r := range res {
		if r.Type == "AWS::Lambda::Function" {
			roles[ref(r.Properties["Role"])] = id
		}
	}
	got := map[string][]string{}
	traced := map[string]bool{}
	for id, r := range res {
		if r.Type != "AWS::IAM::Policy" {
			continue
		}
		doc, _ := r.Properties["PolicyDocument"].(map[string]any)
		for _, role := range r.Properties["Roles"].([]any) {
			if assumed := jsonOf(res[ref(role)].Properties["AssumeRolePolicyDocument"]); strings.Contains(assumed, "codedeploy.amazonaws.com") ||
				strings.Contains(assumed, "pipes.amazonaws.com") {
				continue // TestPreTrafficHook, TestEventsPipe
			}
			fn, ok := roles[ref(role)]
			if !ok {
				t.Errorf("policy %s is on a role of no function", id)
			}
			for _, st := range doc["Statement"].([]any) {
				s := st.(map[string]any)
				if isTracing(s) {
					traced[fn] = true
					continue
				}
				if fn == exportName(hookName)+"Function" {
					continue
				}
				secret := false
				for _, a := range asList(s["Action"]) {
					secret = secret || strings.HasPrefix(a.(string), "secretsmanager:")
					if !strings.HasPrefix(a.(string), "secretsmanager:") {
						got[fn] = append(got[fn], a.(string))
					}
				}
				if secret {
					continue // TestSigningKeySecret checks these
				}
				for _, resource := range asList(s["Resource"]) {
					b, _ := json.Marshal(resource)
					if !strings.Contains(string(b), "Table") {
						t.Errorf("%s may act on %s, which is not a table", fn, b)
					}
				}
				if s["Effect"] != "Allow" {
					t.Errorf("%s: statement effect %v", fn, s["Effect"])
				}
			}
		}
	}
	for _, fn := range roles {
		if !traced[fn] {
			t.Errorf("%s may not send its traces to X-Ray", fn)
		}
	}
	want := map[string][]string{}
	for _, g := range routes.Groups() {
		fn := exportName(g.Name) + "Function"
		for _, gr := range g.Grants {
			want[fn] = append(want[fn], gr.Actions...)
			if gr.QueryIndexes && len(indexNames(gr.Table)) > 0 {
				want[fn] = append(want[fn], routes.QueryAction) // on the indexes, alone
			}
		}
		slices.Sort(want[fn])
		slices.Sort(got[fn])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("actions (-grants +policies):\n%s", diff)
	}
	for fn, actions := range got {
		for _, a := range actions {
			if strings.Contains(a, "*") {
				t.Errorf("%s has the wildcard action %s", fn, a)
			}
		}
	}
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func TestGatewayResponses(t *testing.T) {
	needsNode(t)
	tmpl, _ := template(t)
	for typ, status := range map[string]string{
		"UNAUTHORIZED": "401", "ACCESS_DENIED": "403",
		"MISSING_AUTHENTICATION_TOKEN": "404", "RESOURCE_NOT_FOUND": "404", "REQUEST_TOO_LARGE": "413",
		"UNSUPPORTED_MEDIA_TYPE": "415", "THROTTLED": "429", "QUOTA_EXCEEDED": "429",
	} {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
			"ResponseType": typ,
			"StatusCode":   status,
			"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{
				"gatewayresponse.header.Content-Type":           "'application/problem+json'",
				"gatewayresponse.header.X-Content-Type-Options": "'nosniff'",
			}),
			"ResponseTemplates": map[string]any{
				"application/json": assertions.Match_StringLikeRegexp(jsii.String(`"status":` + status + `,`)),
			},
		})
	}
	for _, typ := range []string{"DEFAULT_4XX", "DEFAULT_5XX"} {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
			"ResponseType": typ,
			"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{
				"gatewayresponse.header.Content-Type":           "'application/problem+json'",
				"gatewayresponse.header.X-Content-Type-Options": "'nosniff'",
			}),
			"ResponseTemplates": map[string]any{
				"application/json": assertions.Match_StringLikeRegexp(jsii.String(`"request_id":"\$context.requestId"`)),
			},
		})
	}
}

// TestUnauthorizedResponse: API Gateway's 401 carries the bearer challenge
// and the same problem body as the local gateway's.
func TestUnauthorizedResponse(t *testing.T) {
	needsNode(t)
	tmpl, _ := template(t)
	for typ, want := range map[string]struct {
		code, detail string
		header       any
	}{
		"UNAUTHORIZED":  {quire.EUNAUTHORIZED, apigw.DetailUnauthorized, "'" + rest.BearerChallenge + "'"},
		"ACCESS_DENIED": {quire.EFORBIDDEN, apigw.DetailForbidden, assertions.Match_Absent()},
	} {
		detail, _ := json.Marshal(want.detail)
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
			"ResponseType": typ,
			"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{
				"gatewayresponse.header.WWW-Authenticate": want.header,
				"gatewayresponse.header.Cache-Control":    "'no-store'",
			}),
			"ResponseTemplates": map[string]any{
				"application/json": assertions.Match_StringLikeRegexp(jsii.String(
					regexp.QuoteMeta(`"type":"`+rest.ProblemType(want.code)+`"`) + ".*" + regexp.QuoteMeta(`"detail":`+string(detail)))),
			},
		})
	}
}

// method is an API Gateway method of the template, by its path.
type method struct {
	verb, path string
	props      map[string]any
}

func methods(res map[string]resource) []method {
	var out []method
	for _, r := range res {
		if r.Type == "AWS::ApiGateway::Method" {
			out = append(out, method{r.Properties["HttpMethod"].(string), fullPath(res, ref(r.Properties["ResourceId"])), r.Properties})
		}
	}
	return out
}

// TestAuthorizer: every protected method, and only those, runs the one
// REQUEST authorizer, on the Authorization header, cached no longer than a
// token lives.
func TestAuthorizer(t *testing.T) {
	needsNode(t)
	tmpl, res := template(t)
	tmpl.ResourceCountIs(jsii.String("AWS::ApiGateway::Authorizer"), jsii.Number(1))
	var authorizerID string
	for id, r := range res {
		if r.Type != "AWS::ApiGateway::Authorizer" {
			continue
		}
		authorizerID = id
		p := r.Properties
		ttl := authorizer.CacheTTL(login.DefaultLifetime).Seconds()
		if p["Type"] != "REQUEST" || p["IdentitySource"] != "method.request.header.Authorization" ||
			p["AuthorizerResultTtlInSeconds"] != ttl || ttl > login.DefaultLifetime.Seconds() {
			t.Errorf("authorizer %+v", p)
		}
		if fn := functionOf(res, p["AuthorizerUri"]); fn != "AuthorizerFunction" {
			t.Errorf("authorizer runs %q, want AuthorizerFunction's alias %s", fn, liveAlias)
		}
	}
	protected := map[string]bool{}
	for _, m := range methods(res) {
		access, verb := routes.PathAccess(m.path), m.verb
		if verb == "HEAD" {
			verb = "GET" // HEAD needs what its GET needs
		}
		for _, r := range routes.All() {
			if g, _ := routes.Gateway(r.Path); g == m.path && r.Method == verb {
				access = r.Access
			}
		}
		if m.verb == "OPTIONS" {
			access = routes.Public // preflights carry no token
		}
		key := m.verb + " " + m.path
		switch m.props["AuthorizationType"] {
		case "CUSTOM":
			protected[key] = true
			if ref(m.props["AuthorizerId"]) != authorizerID {
				t.Errorf("%s: authorizer %v", key, m.props["AuthorizerId"])
			}
		case "NONE":
		default:
			t.Errorf("%s: authorization %v", key, m.props["AuthorizationType"])
		}
		if protected[key] != (access != routes.Public) {
			t.Errorf("%s (%s): authorization %v", key, access, m.props["AuthorizationType"])
		}
	}
	for key, want := range map[string]bool{
		"POST /login": false, "GET /health": false, "GET /status": false, "GET /.well-known/jwks.json": false,
		"POST /users": false, "GET /landing": false, "ANY /users": false,
		"GET /users": true, "GET /users/{id}": true, "ANY /users/{id}": true, "GET /admin/users": true, "ANY /admin/users": true,
		"HEAD /users": true, "OPTIONS /users": false, "OPTIONS /users/{id}": false, "OPTIONS /admin/users": false,
	} {
		if protected[key] != want {
			t.Errorf("%s protected: %v, want %v", key, protected[key], want)
		}
	}
}

// env returns a function's environment variables.
func env(res map[string]resource, fn string) map[string]any {
	e, _ := res[fn].Properties["Environment"].(map[string]any)
	vars, _ := e["Variables"].(map[string]any)
	return vars
}

// TestSigningKeySecret: one secret, which only the keys function may write,
// and the auth function only read; the authorizer may touch nothing.
func TestSigningKeySecret(t *testing.T) {
	needsNode(t)
	tmpl, res := template(t)
	tmpl.ResourceCountIs(jsii.String("AWS::SecretsManager::Secret"), jsii.Number(1))
	var secretID string
	for id, r := range res {
		if r.Type == "AWS::SecretsManager::Secret" {
			secretID = id
		}
	}
	roles := map[string]string{}
	for id, r := range res {
		if r.Type == "AWS::Lambda::Function" {
			roles[ref(r.Properties["Role"])] = id
		}
	}
	var secretStatements []string
	for _, r := range res {
		if r.Type != "AWS::IAM::Policy" {
			continue
		}
		doc, _ := r.Properties["PolicyDocument"].(map[string]any)
		for _, role := range r.Properties["Roles"].([]any) {
			fn := roles[ref(role)]
			for _, st := range doc["Statement"].([]any) {
				s := st.(map[string]any)
				b, _ := json.Marshal(s)
				if !strings.Contains(string(b), "secretsmanager") && !strings.Contains(string(b), secretID) {
					if fn == "AuthorizerFunction" && !isTracing(s) {
						t.Errorf("the authorizer may %s", b)
					}
					continue
				}
				var actions []string
				for _, a := range asList(s["Action"]) {
					actions = append(actions, a.(string))
				}
				slices.Sort(actions)
				secretStatements = append(secretStatements, fmt.Sprintf("%s %v %s", fn, actions, ref(s["Resource"])))
			}
		}
	}
	want := []string{
		fmt.Sprintf("AuthFunction [secretsmanager:GetSecretValue] %s", secretID),
		fmt.Sprintf("KeysFunction [secretsmanager:GetSecretValue secretsmanager:PutSecretValue] %s", secretID),
	}
	slices.Sort(secretStatements)
	if diff := cmp.Diff(want, secretStatements); diff != "" {
		t.Errorf("statements on the secret (-want +got):\n%s", diff)
	}
	for _, fn := range []string{"AuthFunction", "KeysFunction"} {
		if ref(env(res, fn)["SIGNING_KEY_SECRET"]) != secretID {
			t.Errorf("%s SIGNING_KEY_SECRET = %v", fn, env(res, fn)["SIGNING_KEY_SECRET"])
		}
	}
}

// TestSigningKeyResource: the keys function serves Custom::SigningKeys,
// whose public keys the authorizer verifies with; it, the authorizer and
// the auth function share the token settings.
func TestSigningKeyResource(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	var keysID string
	for id, r := range res {
		if r.Type == "Custom::SigningKeys" {
			if keysID != "" {
				t.Fatal("two Custom::SigningKeys resources")
			}
			keysID = id
			p := r.Properties
			if ref(p["ServiceToken"]) != "KeysFunction" || p["Generation"] != "1" || ref(p["SecretId"]) == "" {
				t.Errorf("Custom::SigningKeys %+v", p)
			}
		}
	}
	if keysID == "" {
		t.Fatal("no Custom::SigningKeys resource")
	}
	authz, authn := env(res, "AuthorizerFunction"), env(res, "AuthFunction")
	if diff := cmp.Diff(map[string]any{"Fn::GetAtt": []any{keysID, "Jwks"}}, authz["JWKS"]); diff != "" {
		t.Errorf("authorizer JWKS (-want +got):\n%s", diff)
	}
	if authz["TOKEN_ISSUER"] != "quire/Quire" || authn["TOKEN_ISSUER"] != authz["TOKEN_ISSUER"] ||
		authn["TOKEN_AUDIENCE"] != authz["TOKEN_AUDIENCE"] || authn["TOKEN_LIFETIME"] != login.DefaultLifetime.String() ||
		env(res, "KeysFunction")["TOKEN_LIFETIME"] != authn["TOKEN_LIFETIME"] {
		t.Errorf("token settings: auth %v, authorizer %v, keys %v", authn, authz, env(res, "KeysFunction"))
	}
}

// TestTokenLifetimeContext: quire:tokenLifetime sets the lifetime and the
// authorizer's cache; an invalid one fails the synth.
func TestTokenLifetimeContext(t *testing.T) {
	needsNode(t)
	for _, tc := range []struct {
		context map[string]any
		ttl     float64
	}{{tunedA, 300}, {tunedB, 120}} {
		lifetime := tc.context[contextTokenLifetime].(string)
		tmpl, err := synthWith(tc.context) // quire:signingKeyGeneration=7
		if err != nil {
			t.Fatal(err)
		}
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Authorizer"), map[string]any{"AuthorizerResultTtlInSeconds": tc.ttl})
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{"TOKEN_LIFETIME": lifetime + "0s"})},
		})
		tmpl.HasResourceProperties(jsii.String("Custom::SigningKeys"), map[string]any{"Generation": "7"})
	}
	for _, bad := range []string{"1s", "13h", "banana"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("quire:tokenLifetime %q: synth did not fail", bad)
				}
			}()
			_, _ = synthWith(map[string]any{"quire:tokenLifetime": bad})
		}()
	}
}

// TestConfigFunction: the configuration group's function names its table
// and may do only what serving and replacing the document takes, on that
// table and its indexes alone.
func TestConfigFunction(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	fn, ok := res["ConfigFunction"]
	if !ok {
		t.Fatal("no ConfigFunction")
	}
	var table, users, events string
	for id, r := range res {
		switch {
		case r.Type != "AWS::DynamoDB::Table":
		case strings.HasPrefix(id, "ConfigTable"):
			table = id
		case strings.HasPrefix(id, "UsersTable"):
			users = id
		case strings.HasPrefix(id, "EventsTable"):
			events = id
		}
	}
	if got := ref(env(res, "ConfigFunction")["CONFIG_TABLE"]); table == "" || got != table {
		t.Errorf("ConfigFunction CONFIG_TABLE names %q, want the config table %q", got, table)
	}
	var statements []string
	for _, r := range res {
		if r.Type != "AWS::IAM::Policy" || !slices.ContainsFunc(r.Properties["Roles"].([]any), func(role any) bool {
			return ref(role) == ref(fn.Properties["Role"])
		}) {
			continue
		}
		doc, _ := r.Properties["PolicyDocument"].(map[string]any)
		for _, st := range doc["Statement"].([]any) {
			s := st.(map[string]any)
			var actions []string
			for _, a := range asList(s["Action"]) {
				actions = append(actions, a.(string))
			}
			slices.Sort(actions)
			b, _ := json.Marshal(s["Resource"])
			statements = append(statements, fmt.Sprintf("%s %v %s", s["Effect"], actions, b))
		}
	}
	arn := `{"Fn::GetAtt":["` + table + `","Arn"]}`
	want := []string{`Allow [xray:PutTelemetryRecords xray:PutTraceSegments] "*"`,
		// The table has no index to name.
		"Allow [dynamodb:BatchGetItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem] " + arn,
		// The read of its caller's account, on its item alone: no Query,
		// so no index.
		`Allow [dynamodb:GetItem] {"Fn::GetAtt":["` + users + `","Arn"]}`,
		// config.changed, into the outbox, in the replacement's
		// transaction: it adds events, never reads them.
		`Allow [dynamodb:PutItem] {"Fn::GetAtt":["` + events + `","Arn"]}`}
	if diff := cmp.Diff(want, statements); diff != "" {
		t.Errorf("ConfigFunction statements (-want +got):\n%s", diff)
	}
}

// TestBinaryMediaTypes: every media type is binary, so that API Gateway
// decodes a function's base64 body (the gzip-compressed configuration
// document) whatever the client's Accept header.
func TestBinaryMediaTypes(t *testing.T) {
	needsNode(t)
	tmpl, _ := template(t)
	tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::RestApi"), map[string]any{"BinaryMediaTypes": []any{"*/*"}})
}

func TestOutputs(t *testing.T) {
	needsNode(t)
	tmpl, _ := template(t)
	tmpl.HasOutput(jsii.String("ApiUrl"), map[string]any{})
	tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::RestApi"), map[string]any{"Name": "quire"})
}

// apiGatewayResources is the limit of API Gateway's resources a REST API
// (a quota AWS raises on request).
const apiGatewayResources = "API Gateway's resources"

// limits are the limits the stack takes a share of: CloudFormation's 500
// resources in each stack, the main one and each nested, and API Gateway's
// 300 resources a REST API.
func limits() map[string]int {
	out := map[string]int{"Quire": 500, "Operations": 500, apiGatewayResources: 300}
	for name := range routeStacks {
		out[name] = 500
	}
	return out
}

// footprint returns what s takes of each of its limits.
func footprint(t *testing.T, s stacks) map[string]int {
	t.Helper()
	out := map[string]int{
		"Quire":             len(resourcesOf(t, s.main)),
		"Operations":        len(resourcesOf(t, s.ops)),
		apiGatewayResources: len(ofType(s.all(t), "AWS::ApiGateway::Resource")),
	}
	for name, tmpl := range s.routes {
		out[name] = len(resourcesOf(t, tmpl))
	}
	return out
}

// TestQuotas: the stack and each stack nested in it stay well inside
// CloudFormation's 500 resources a stack, and the API inside API Gateway's
// 300 resources a REST API: at most half of each.
func TestQuotas(t *testing.T) {
	needsNode(t)
	for name, n := range footprint(t, synthesized(t)) {
		if limit := limits()[name]; n > limit/2 {
			t.Errorf("%s: %d of %d, want at most half", name, n, limit)
		}
		t.Logf("%s: %d of %d", name, n, limits()[name])
	}
}

// readmeHeadroom is what the README says of the room the stack has: "room
// for N more routes".
var readmeHeadroom = regexp.MustCompile(`room for (\d+) more routes`)

// TestAVersionCostsNothing: a third version adds nothing to the stack (its
// routes are the tree /api/{version}/... that serves every version), and
// ten more routes, each on a path of its own in every version, keep every
// limit well inside (at most two thirds); the README says what the stack
// takes and the room in routes that the tightest limit leaves.
func TestAVersionCostsNothing(t *testing.T) {
	needsNode(t)
	base := footprint(t, synthesized(t))
	count := func(versions []int, more []routes.Route) map[string]int {
		restore := routes.Grow(versions, more)
		defer restore()
		s, err := synthStacks(nil)
		if err != nil {
			t.Fatal(err)
		}
		return footprint(t, s)
	}
	if n := count([]int{3}, nil); !maps.Equal(n, base) {
		t.Errorf("a third version takes the stack from %v to %v, want nothing more", base, n)
	}
	more := tenRoutesMore()
	grown := count([]int{3}, more)
	room := math.MaxInt
	for name, limit := range limits() {
		if grown[name] > limit*2/3 {
			t.Errorf("%s: a third version and ten more routes take %d of %d, want it well inside", name, grown[name], limit)
		}
		if perRoute := float64(grown[name]-base[name]) / float64(len(more)); perRoute > 0 {
			room = min(room, int(float64(limit-base[name])/perRoute))
			t.Logf("%s: %d of %d, %.1f a route, room for %d more", name, base[name], limit, perRoute, int(float64(limit-base[name])/perRoute))
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readmeHeadroom.FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md does not say how many more routes the stack has room for (%q)", readmeHeadroom)
	}
	if said, _ := strconv.Atoi(string(m[1])); said > room || said < room-10 {
		t.Errorf("README.md says room for %d more routes; the stack has room for %d: say so", said, room)
	}
	if !bytes.Contains(readme, fmt.Appendf(nil, "The stack takes %d of", base["Quire"])) {
		t.Errorf("README.md does not say the stack takes %d resources", base["Quire"])
	}
}

// tenRoutesMore are ten routes the route table does not have, each of a
// path of its own: TestAVersionCostsNothing and TestDeploymentFollowsRoutes
// read one synthesis of the table grown by them and a third version.
func tenRoutesMore() []routes.Route {
	var more []routes.Route
	for i := range 10 {
		more = append(more, routes.Route{Method: "GET", Path: fmt.Sprintf("/shelves%d/{id}", i), Group: routes.GroupCatalog, Access: routes.User})
	}
	return more
}

// TestDeploymentFollowsRoutes: the API's deployment waits for the stacks of
// its routes, and a change of what API Gateway takes only with a new
// deployment (routes more, in a nested stack; the authorizer's cache)
// makes a new one, while a change of nothing it serves (a third version,
// served by the same methods) does not.
func TestDeploymentFollowsRoutes(t *testing.T) {
	needsNode(t)
	deployment := func(s stacks) (string, []string) {
		t.Helper()
		res := resourcesOf(t, s.main)
		for id, r := range ofType(res, "AWS::ApiGateway::Deployment") {
			var after []string
			for _, d := range asList(r.DependsOn) {
				if id, _ := d.(string); res[id].Type == "AWS::CloudFormation::Stack" {
					after = append(after, id)
				}
			}
			return id, after
		}
		t.Fatal("no deployment")
		return "", nil
	}
	base, after := deployment(synthesized(t))
	if len(after) != len(routeStacks) {
		t.Errorf("the deployment waits for the stacks %v, want the %d of the routes", after, len(routeStacks))
	}
	for _, c := range []struct {
		name     string
		versions []int
		more     []routes.Route
		context  map[string]any
		changed  bool
	}{
		// With the third version, which changes nothing by itself (below).
		{name: "ten routes more", versions: []int{3}, more: tenRoutesMore(), changed: true},
		{name: "the authorizer's cache", context: map[string]any{contextTokenLifetime: "2m"}, changed: true},
		{name: "a third version", versions: []int{3}},
	} {
		restore := routes.Grow(c.versions, c.more)
		s, err := synthStacks(c.context)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := deployment(s); (id != base) != c.changed {
			t.Errorf("%s: the deployment %s, was %s; want a new one: %v", c.name, id, base, c.changed)
		}
	}
}
