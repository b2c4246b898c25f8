package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/routes"
)

var synth = sync.OnceValues(func() (assertions.Template, error) {
	dir, err := os.MkdirTemp("", "quire-assets")
	if err != nil {
		return nil, err
	}
	for _, g := range routes.Groups() {
		if err := os.MkdirAll(filepath.Join(dir, g.Name), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, g.Name, "bootstrap"), []byte("placeholder"), 0o755); err != nil {
			return nil, err
		}
	}
	stack := NewQuireStack(awscdk.NewApp(nil), "Quire", &QuireStackProps{AssetDir: dir})
	return assertions.Template_FromStack(stack, nil), nil
})

// template synthesizes the stack once for all tests and returns it with its
// resources as plain JSON.
func template(t *testing.T) (assertions.Template, map[string]resource) {
	t.Helper()
	tmpl, err := synth()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(tmpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Resources map[string]resource }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return tmpl, doc.Resources
}

type resource struct {
	Type       string
	Properties map[string]any
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
		return ""
	}
	return fullPath(res, ref(r.Properties["ParentId"])) + "/" + r.Properties["PathPart"].(string)
}

// functionOf returns the logical id of the Lambda function a proxy
// integration URI names.
func functionOf(uri any) string {
	b, _ := json.Marshal(uri)
	for _, g := range routes.Groups() {
		if id := exportName(g.Name) + "Function"; strings.Contains(string(b), `"`+id+`"`) {
			return id
		}
	}
	return ""
}

func TestRoutes(t *testing.T) {
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
		got[r.Properties["HttpMethod"].(string)+" "+path] = functionOf(integ["Uri"])
	}
	want := map[string]string{}
	for _, r := range routes.All() {
		want[r.Key()] = exportName(r.Group) + "Function"
	}
	for _, p := range routes.Paths() {
		want["ANY "+p] = exportName(routes.Owner(p)) + "Function"
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("methods (-route table +template):\n%s", diff)
	}
}

func TestFunctions(t *testing.T) {
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
	tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(len(routes.Groups())))
}

func TestTables(t *testing.T) {
	tmpl, _ := template(t)
	tmpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(len(dynamo.Tables())))
	for _, tb := range dynamo.Tables() {
		keys := []any{map[string]any{"AttributeName": tb.PartitionKey.Name, "KeyType": "HASH"}}
		var gsis []any
		for _, ix := range tb.Indexes {
			ixKeys := []any{map[string]any{"AttributeName": ix.PartitionKey.Name, "KeyType": "HASH"}}
			if ix.SortKey != nil {
				ixKeys = append(ixKeys, map[string]any{"AttributeName": ix.SortKey.Name, "KeyType": "RANGE"})
			}
			gsis = append(gsis, map[string]any{
				"IndexName": ix.Name, "KeySchema": ixKeys, "Projection": map[string]any{"ProjectionType": "ALL"},
			})
		}
		tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"Properties": map[string]any{
				"KeySchema":                        keys,
				"BillingMode":                      "PAY_PER_REQUEST",
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
				"GlobalSecondaryIndexes":           gsis,
			},
			"DeletionPolicy": "Retain",
		})
	}
}

// TestLeastPrivilege checks that each function's role may do exactly the
// table actions of its group's grants, on its tables and their indexes.
func TestLeastPrivilege(t *testing.T) {
	_, res := template(t)
	roles := map[string]string{} // role logical id -> function logical id
	for id, r := range res {
		if r.Type == "AWS::Lambda::Function" {
			roles[ref(r.Properties["Role"])] = id
		}
	}
	got := map[string][]string{}
	for id, r := range res {
		if r.Type != "AWS::IAM::Policy" {
			continue
		}
		doc, _ := r.Properties["PolicyDocument"].(map[string]any)
		for _, role := range r.Properties["Roles"].([]any) {
			fn, ok := roles[ref(role)]
			if !ok {
				t.Errorf("policy %s is on a role of no function", id)
			}
			for _, st := range doc["Statement"].([]any) {
				s := st.(map[string]any)
				for _, a := range asList(s["Action"]) {
					got[fn] = append(got[fn], a.(string))
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
	want := map[string][]string{}
	for _, g := range routes.Groups() {
		fn := exportName(g.Name) + "Function"
		for _, gr := range g.Grants {
			want[fn] = append(want[fn], gr.Actions...)
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
	tmpl, _ := template(t)
	for typ, status := range map[string]string{
		"MISSING_AUTHENTICATION_TOKEN": "404", "RESOURCE_NOT_FOUND": "404", "REQUEST_TOO_LARGE": "413",
		"UNSUPPORTED_MEDIA_TYPE": "415", "THROTTLED": "429", "QUOTA_EXCEEDED": "429",
	} {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
			"ResponseType": typ,
			"StatusCode":   status,
			"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{
				"gatewayresponse.header.Content-Type": "'application/problem+json'",
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
				"gatewayresponse.header.Content-Type": "'application/problem+json'",
			}),
			"ResponseTemplates": map[string]any{
				"application/json": assertions.Match_StringLikeRegexp(jsii.String(`"request_id":"\$context.requestId"`)),
			},
		})
	}
}

func TestOutputs(t *testing.T) {
	tmpl, _ := template(t)
	tmpl.HasOutput(jsii.String("ApiUrl"), map[string]any{})
	tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::RestApi"), map[string]any{"Name": "quire"})
}
