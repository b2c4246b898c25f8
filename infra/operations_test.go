package main

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/authorizer"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/pretraffic"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/telemetry"
)

// opsTemplate returns the resources of the default stack's nested
// operations stack.
func opsTemplate(t *testing.T) (assertions.Template, map[string]resource) {
	t.Helper()
	s := synthesized(t)
	return s.ops, resourcesOf(t, s.ops)
}

// servedFunctions are the functions callers reach through an alias, each
// with a deployment and alarms: every group's, and the authorizer.
func servedFunctions() []string {
	return append(groupNames(), authorizerName)
}

// single returns the one resource of type typ, and fails when there is not
// exactly one.
func single(t *testing.T, res map[string]resource, typ string) resource {
	t.Helper()
	of := ofType(res, typ)
	if len(of) != 1 {
		t.Fatalf("%d %s", len(of), typ)
	}
	for _, r := range of {
		return r
	}
	return resource{}
}

func ofType(res map[string]resource, typ string) map[string]resource {
	out := map[string]resource{}
	for id, r := range res {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

// jsonOf is v in JSON, with <, > and & as they are.
func jsonOf(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a strings.Builder takes every write, and v is JSON read from a template
	return strings.TrimSuffix(b.String(), "\n")
}

// TestFunctionsObserved: every function logs JSON at INFO (Lambda's own
// lines from WARN), is traced, and the groups' write their metrics to the
// stack's own namespace.
func TestFunctionsObserved(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	fns := ofType(res, "AWS::Lambda::Function")
	if len(fns) != len(servedFunctions())+3 { // and the keys function, the hook and the events function
		t.Fatalf("%d functions", len(fns))
	}
	for id, fn := range fns {
		logs, _ := fn.Properties["LoggingConfig"].(map[string]any)
		if logs["LogFormat"] != "JSON" || logs["ApplicationLogLevel"] != "INFO" || logs["SystemLogLevel"] != "WARN" {
			t.Errorf("%s: logging %v", id, logs)
		}
		if tracing := jsonOf(fn.Properties["TracingConfig"]); tracing != `{"Mode":"Active"}` {
			t.Errorf("%s: tracing %s", id, tracing)
		}
	}
	for _, g := range groupNames() {
		if ns := env(res, exportName(g)+"Function")["METRICS_NAMESPACE"]; ns != telemetry.DefaultNamespace+"/Quire" {
			t.Errorf("%s: METRICS_NAMESPACE %v", g, ns)
		}
	}
}

// TestStageLogs: the stage writes a JSON access line per request, with what
// an operator searches by and nothing personal, logs errors, keeps
// detailed metrics, traces, and never logs bodies.
func TestStageLogs(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	p := single(t, res, "AWS::ApiGateway::Stage").Properties
	if p["TracingEnabled"] != true {
		t.Errorf("tracing %v", p["TracingEnabled"])
	}
	var all map[string]any
	for _, s := range p["MethodSettings"].([]any) {
		if m := s.(map[string]any); m["HttpMethod"] == "*" && m["ResourcePath"] == "/*" {
			all = m
		}
	}
	if all["LoggingLevel"] != "ERROR" || all["DataTraceEnabled"] != false || all["MetricsEnabled"] != true {
		t.Errorf("settings of every method: %v", all)
	}
	logs := p["AccessLogSetting"].(map[string]any)
	if lg := res[ref(logs["DestinationArn"])]; lg.Type != "AWS::Logs::LogGroup" || lg.Properties["RetentionInDays"] == nil {
		t.Errorf("access log destination %v: %+v", logs["DestinationArn"], lg)
	}
	var format map[string]string
	if err := json.Unmarshal([]byte(logs["Format"].(string)), &format); err != nil {
		t.Fatalf("access log format is not JSON: %v: %s", err, logs["Format"])
	}
	for field, want := range map[string]string{
		"request_id": "$context.requestId", "trace_id": "$context.xrayTraceId", "caller": "$context.authorizer.principalId",
		"method": "$context.httpMethod", "route": "$context.resourcePath", "status": "$context.status",
		"latency": "$context.responseLatency", "integration_latency": "$context.integrationLatency",
		"authorizer_error": "$context.authorizer.error", "error": "$context.error.message",
	} {
		if format[field] != want {
			t.Errorf("access log %s = %q, want %q", field, format[field], want)
		}
	}
	for _, personal := range []string{"$context.identity", "$input", "$context.authorizer.claims", "$context.requestOverride"} {
		if strings.Contains(logs["Format"].(string), personal) {
			t.Errorf("access log holds %s: %s", personal, logs["Format"])
		}
	}
}

// TestExecutionLogs: the stack owns the log group of the stage's execution
// logs, with a retention, rather than API Gateway keeping them forever.
func TestExecutionLogs(t *testing.T) {
	needsNode(t)
	tmpl, _ := template(t)
	tmpl.HasResourceProperties(jsii.String("AWS::Logs::LogGroup"), map[string]any{
		"LogGroupName": map[string]any{"Fn::Join": []any{"", []any{
			"API-Gateway-Execution-Logs_", map[string]any{"Ref": assertions.Match_StringLikeRegexp(jsii.String("^Api"))}, "/" + stageName,
		}}},
		"RetentionInDays": assertions.Match_AnyValue(),
	})
}

// TestAccountLogRole: by default the stack sets the account's API Gateway
// logging role and keeps it when deleted; quire:apiGatewayAccountRole=false
// leaves the account's setting alone, and the stage logs all the same.
func TestAccountLogRole(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	if a := single(t, res, "AWS::ApiGateway::Account"); a.DeletionPolicy != "Retain" || res[ref(a.Properties["CloudWatchRoleArn"])].Type != "AWS::IAM::Role" {
		t.Errorf("account setting %+v", a)
	}
	off, err := synthWith(tunedA) // quire:apiGatewayAccountRole=false
	if err != nil {
		t.Fatal(err)
	}
	off.ResourceCountIs(jsii.String("AWS::ApiGateway::Account"), jsii.Number(0))
	off.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{
		"AccessLogSetting": assertions.Match_ObjectLike(&map[string]any{"Format": assertions.Match_AnyValue()}),
	})
	mustPanic(t, contextAccountLogRole+"=maybe", func() {
		_, _ = synthWith(map[string]any{contextAccountLogRole: "maybe"})
	})
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: the synth did not fail", what)
		}
	}()
	f()
}

// wantAlarms are the names of the alarms the operator needs.
func wantAlarms() []string {
	want := []string{"api-5xx-rate", "api-latency-p99", "api-4xx-rate", "transaction-conflicts", "health-check", "events-dead-letters"}
	for _, fn := range servedFunctions() {
		want = append(want, fn+"-errors", fn+"-throttles")
	}
	for _, tb := range dynamo.Tables() {
		want = append(want, tb.Name+"-table-throttles", tb.Name+"-table-errors")
	}
	for i := range want {
		want[i] = "Quire-" + want[i]
	}
	sort.Strings(want)
	return want
}

// TestAlarms: every alarm the runbook names exists, says what to check
// first, and tells the topic when it goes off and when it recovers; the
// topic takes TLS only.
func TestAlarms(t *testing.T) {
	needsNode(t)
	tmpl, res := opsTemplate(t)
	var topic string
	for id := range ofType(res, "AWS::SNS::Topic") {
		topic = id
	}
	var got []string
	for id, a := range ofType(res, "AWS::CloudWatch::Alarm") {
		p := a.Properties
		got = append(got, p["AlarmName"].(string))
		want := `[{"Ref":"` + topic + `"}]`
		if jsonOf(p["AlarmActions"]) != want || jsonOf(p["OKActions"]) != want {
			t.Errorf("%s: actions %v, OK actions %v, want the topic %s", id, p["AlarmActions"], p["OKActions"], topic)
		}
		if d, _ := p["AlarmDescription"].(string); len(d) < 80 {
			t.Errorf("%s: description %q says too little to act on", id, d)
		}
	}
	sort.Strings(got)
	if diff := cmp.Diff(wantAlarms(), got); diff != "" {
		t.Errorf("alarms (-want +got):\n%s", diff)
	}
	tmpl.HasResourceProperties(jsii.String("AWS::SNS::TopicPolicy"), map[string]any{
		"PolicyDocument": assertions.Match_ObjectLike(&map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(&map[string]any{
				"Effect": "Deny", "Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
			}),
		})}),
	})
	tmpl.ResourceCountIs(jsii.String("AWS::SNS::Subscription"), jsii.Number(0))
}

// alarm returns the properties of the alarm named Quire-<id>.
func alarm(t *testing.T, res map[string]resource, id string) map[string]any {
	t.Helper()
	for _, a := range ofType(res, "AWS::CloudWatch::Alarm") {
		if a.Properties["AlarmName"] == "Quire-"+id {
			return a.Properties
		}
	}
	t.Fatalf("no alarm %s", id)
	return nil
}

// metricStats returns the metrics a math alarm reads, as
// "namespace metric dimension=value ...".
func metricStats(p map[string]any) []string {
	var out []string
	for _, m := range p["Metrics"].([]any) {
		stat, ok := m.(map[string]any)["MetricStat"].(map[string]any)
		if !ok {
			continue
		}
		metric := stat["Metric"].(map[string]any)
		s := metric["Namespace"].(string) + " " + metric["MetricName"].(string)
		for _, d := range metric["Dimensions"].([]any) {
			dim := d.(map[string]any)
			v, ok := dim["Value"].(string)
			if !ok {
				v = ref(dim["Value"])
			}
			s += " " + dim["Name"].(string) + "=" + v
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// TestAlarmMetrics: the alarms read the metrics that the functions write
// (telemetry's names, the route table's health route) and DynamoDB's for
// every operation Quire calls; a health check that stops is the alarm's
// worst case, not a quiet one.
func TestAlarmMetrics(t *testing.T) {
	needsNode(t)
	_, res := opsTemplate(t)
	ns := telemetry.DefaultNamespace + "/Quire"

	if !slices.ContainsFunc(routes.All(), func(r routes.Route) bool { return r.Key() == healthRoute }) {
		t.Fatalf("%s is not a route", healthRoute)
	}
	health := alarm(t, res, "health-check")
	if health["TreatMissingData"] != "breaching" || health["ComparisonOperator"] != "LessThanThreshold" || health["Threshold"] != 1.0 {
		t.Errorf("health-check: %v below %v, missing data %v", health["ComparisonOperator"], health["Threshold"], health["TreatMissingData"])
	}
	wantHealth := []string{
		ns + " ClientErrors route=" + healthRoute, ns + " Requests route=" + healthRoute, ns + " ServerErrors route=" + healthRoute,
	}
	if diff := cmp.Diff(wantHealth, metricStats(health)); diff != "" {
		t.Errorf("health-check metrics (-want +got):\n%s", diff)
	}

	var wantConflicts []string
	for _, g := range groupNames() {
		wantConflicts = append(wantConflicts, ns+" "+telemetry.DynamoDBConflicts+" function="+g)
	}
	sort.Strings(wantConflicts)
	if diff := cmp.Diff(wantConflicts, metricStats(alarm(t, res, "transaction-conflicts"))); diff != "" {
		t.Errorf("transaction-conflicts metrics (-want +got):\n%s", diff)
	}

	for _, tb := range dynamo.Tables() {
		var ops []string
		for _, m := range metricStats(alarm(t, res, tb.Name+"-table-errors")) {
			if !strings.HasPrefix(m, "AWS/DynamoDB SystemErrors ") {
				t.Errorf("%s-table-errors reads %s", tb.Name, m)
			}
			_, op, _ := strings.Cut(m, "Operation=")
			op, _, _ = strings.Cut(op, " ")
			ops = append(ops, op)
		}
		sort.Strings(ops)
		if diff := cmp.Diff(tableOperations(tb.Name), ops); diff != "" || len(ops) == 0 || len(ops) > 10 {
			t.Errorf("%s-table-errors operations (-want +got):\n%s", tb.Name, diff)
		}
	}
	for _, tb := range dynamo.Tables() {
		want := []string{
			"AWS/DynamoDB ReadThrottleEvents TableName=" + tb.Name, "AWS/DynamoDB WriteThrottleEvents TableName=" + tb.Name,
		}
		for _, ix := range tb.Indexes {
			for _, m := range []string{"Read", "Write"} {
				want = append(want, "AWS/DynamoDB "+m+"ThrottleEvents GlobalSecondaryIndexName="+ix.Name+" TableName="+tb.Name)
			}
		}
		sort.Strings(want)
		got := metricStats(alarm(t, res, tb.Name+"-table-throttles"))
		// The table's name is a parameter of the nested stack: name it.
		for i, m := range got {
			got[i] = regexp.MustCompile(`TableName=referencetoQuire(\w+?)Table\w+`).ReplaceAllStringFunc(m, func(s string) string {
				return "TableName=" + strings.ToLower(regexp.MustCompile(`referencetoQuire(\w+?)Table`).FindStringSubmatch(s)[1])
			})
		}
		if diff := cmp.Diff(want, got); diff != "" || len(got) > 10 {
			t.Errorf("%s-table-throttles metrics (-want +got):\n%s", tb.Name, diff)
		}
	}
	for _, a := range ofType(res, "AWS::CloudWatch::Alarm") {
		p := a.Properties
		if percentile := p["AlarmName"] == "Quire-api-latency-p99"; (p["EvaluateLowSampleCountPercentile"] == "ignore") != percentile {
			t.Errorf("%s: EvaluateLowSampleCountPercentile %v", p["AlarmName"], p["EvaluateLowSampleCountPercentile"])
		}
	}
	if ops := tableOperations(routes.TableUsers); !slices.Contains(ops, "TransactWriteItems") || !slices.Contains(ops, "Query") {
		t.Errorf("users table operations %v: want its transactions and queries", ops)
	}

	for _, fn := range servedFunctions() {
		p := alarm(t, res, fn+"-errors")
		if fn == authorizerName {
			// Its refusals of tokens are invocation errors too: the
			// alarm takes off those its log lines count.
			metrics := jsonOf(p["Metrics"])
			filter := single(t, res, "AWS::Logs::MetricFilter").Properties
			mt := jsonOf(filter["MetricTransformations"])
			if !strings.Contains(metrics, `"Expression":"errors - FILL(refusals, 0)"`) ||
				!strings.Contains(metrics, `"MetricName":"Errors","Namespace":"AWS/Lambda"`) ||
				!strings.Contains(metrics, `"MetricName":"AuthorizerRefusals","Namespace":"`+telemetry.DefaultNamespace+`/Quire"`) ||
				!strings.Contains(metrics, exportName(fn)+"Function") {
				t.Errorf("%s-errors reads %s", fn, metrics)
			}
			if filter["FilterPattern"] != `{ $.message = "`+authorizer.Refused+`" }` || !strings.Contains(jsonOf(filter["LogGroupName"]), "AuthorizerLogs") ||
				!strings.Contains(mt, `"MetricName":"AuthorizerRefusals"`) || !strings.Contains(mt, `"MetricValue":"1"`) {
				t.Errorf("the authorizer's refusals: filter %s", jsonOf(filter))
			}
			continue
		}
		dims := jsonOf(p["Dimensions"])
		if p["Namespace"] != "AWS/Lambda" || p["MetricName"] != "Errors" || !strings.Contains(dims, exportName(fn)+"Function") {
			t.Errorf("%s-errors reads %v %v %s", fn, p["Namespace"], p["MetricName"], dims)
		}
	}
	if expr := jsonOf(alarm(t, res, "api-5xx-rate")["Metrics"]); !strings.Contains(expr, `IF(requests5XX >= 20, errors5XX / requests5XX, 0)`) ||
		!strings.Contains(expr, `"MetricName":"5XXError"`) || !strings.Contains(expr, `{"Name":"ApiName","Value":"quire"}`) {
		t.Errorf("api-5xx-rate reads %s", expr)
	}
}

// TestAlarmEmail: quire:alarmEmail subscribes its address to the topic.
func TestAlarmEmail(t *testing.T) {
	needsNode(t)
	s, err := synthStacks(tunedA) // quire:alarmEmail=oncall@example.com
	if err != nil {
		t.Fatal(err)
	}
	s.ops.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{
		"Protocol": "email", "Endpoint": "oncall@example.com",
	})
	mustPanic(t, contextAlarmEmail+"=oncall", func() { _, _ = synthStacks(map[string]any{contextAlarmEmail: "oncall"}) })
}

// TestDeployments: API Gateway and the authorizer invoke each served
// function's alias live (TestRoutes, TestAuthorizer), which points at the
// function's current version and which a CodeDeploy deployment group moves
// to the next one as a canary, rolling back on the function's alarms and
// the API's.
func TestDeployments(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	groups := ofType(res, "AWS::CodeDeploy::DeploymentGroup")
	aliases := ofType(res, "AWS::Lambda::Alias")
	if len(aliases) != len(servedFunctions()) || len(groups) != len(servedFunctions()) {
		t.Fatalf("%d aliases and %d deployment groups for %d functions", len(aliases), len(groups), len(servedFunctions()))
	}
	seen := map[string]bool{}
	for id, a := range aliases {
		fn := ref(a.Properties["FunctionName"])
		seen[fn] = true
		version := res[ref(a.Properties["FunctionVersion"])]
		if a.Properties["Name"] != liveAlias || version.Type != "AWS::Lambda::Version" || ref(version.Properties["FunctionName"]) != fn {
			t.Errorf("%s: alias %v of %s at %+v", id, a.Properties["Name"], fn, version)
		}
		update, _ := a.UpdatePolicy["CodeDeployLambdaAliasUpdate"].(map[string]any)
		group, ok := groups[ref(update["DeploymentGroupName"])]
		if !ok {
			t.Errorf("%s: no deployment group moves it: %v", id, a.UpdatePolicy)
			continue
		}
		p := group.Properties
		if p["DeploymentConfigName"] != "CodeDeployDefault.Lambda"+defaultDeployment {
			t.Errorf("%s: deployment config %v", id, p["DeploymentConfigName"])
		}
		rollback := p["AutoRollbackConfiguration"].(map[string]any)
		for _, event := range []string{"DEPLOYMENT_FAILURE", "DEPLOYMENT_STOP_ON_ALARM"} {
			if rollback["Enabled"] != true || !slices.Contains(rollback["Events"].([]any), any(event)) {
				t.Errorf("%s: rolls back on %v, not on %s", id, rollback, event)
			}
		}
		// The alarms live in the nested stack: the group names them
		// through its outputs, whose names hold the alarms' ids.
		alarms := jsonOf(p["AlarmConfiguration"])
		name := strings.TrimSuffix(fn, "Function")
		for _, want := range []string{name + "ErrorsAlarm", name + "ThrottlesAlarm", "Api5xxRateAlarm", "ApiLatencyP99Alarm", "Api4xxRateAlarm"} {
			if !strings.Contains(alarms, want) {
				t.Errorf("%s: rolls back without %s: %s", id, want, alarms)
			}
		}
		if strings.Count(alarms, `"Name"`) != 5 {
			t.Errorf("%s: rolls back on %s, want its own 2 alarms and the API's 3", id, alarms)
		}
	}
	for _, fn := range servedFunctions() {
		if !seen[exportName(fn)+"Function"] {
			t.Errorf("%s has no alias", fn)
		}
	}
}

// TestPreTrafficHook: every deployment group runs the one hook before any
// traffic shifts. The hook may invoke the new versions the aliases move to
// and nothing else, read the groups' deployments and report on them; its
// environment names each group's new version, and it is updated (policy
// first) before any alias, whose update runs it.
func TestPreTrafficHook(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	hookID := exportName(hookName) + "Function"
	hook, ok := res[hookID]
	if !ok {
		t.Fatalf("no %s", hookID)
	}
	versions := map[string]bool{}
	for id, a := range ofType(res, "AWS::Lambda::Alias") {
		update, _ := a.UpdatePolicy["CodeDeployLambdaAliasUpdate"].(map[string]any)
		if ref(update["BeforeAllowTrafficHook"]) != hookID {
			t.Errorf("%s: before traffic runs %v, want %s", id, update["BeforeAllowTrafficHook"], hookID)
		}
		versions[ref(a.Properties["FunctionVersion"])] = true
	}
	groups := ofType(res, "AWS::CodeDeploy::DeploymentGroup")
	env := jsonOf(hook.Properties["Environment"])
	for _, g := range pretraffic.Groups() {
		if !strings.Contains(env, `\"`+g+`\":\"`) {
			t.Errorf("%s names no new version of %s: %s", pretraffic.VersionsEnv, g, env)
		}
	}
	for v := range versions {
		if !strings.Contains(env, `"Ref":"`+v+`"`) {
			t.Errorf("%s lacks the version %s", pretraffic.VersionsEnv, v)
		}
	}
	if hook.Properties["Timeout"] != float64(hookTimeout) {
		t.Errorf("timeout %v, want %d", hook.Properties["Timeout"], hookTimeout)
	}

	role := ref(hook.Properties["Role"])
	var policy string
	for id, p := range ofType(res, "AWS::IAM::Policy") {
		if strings.Contains(jsonOf(p.Properties["Roles"]), `"`+role+`"`) {
			policy = id
		}
	}
	if !slices.Contains(dependsOn(hook), policy) {
		t.Errorf("the hook does not wait for its policy %q: depends on %v", policy, hook.DependsOn)
	}
	invoked, reported, read := map[string]bool{}, map[string]bool{}, map[string]bool{}
	allowed := map[any]bool{}
	for _, st := range res[policy].Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
		st := st.(map[string]any)
		for _, action := range asList(st["Action"]) {
			allowed[action] = true
			for _, r := range asList(st["Resource"]) {
				groupsOf := func(into map[string]bool) {
					for g := range groups {
						if strings.Contains(jsonOf(r), `"Ref":"`+g+`"`) {
							into[g] = true
						}
					}
				}
				switch action {
				case "lambda:InvokeFunction":
					invoked[ref(r)] = true
				case "codedeploy:PutLifecycleEventHookExecutionStatus":
					groupsOf(reported)
				case "codedeploy:GetDeployment":
					groupsOf(read)
				case "xray:PutTraceSegments", "xray:PutTelemetryRecords":
				default:
					t.Errorf("the hook may %s on %v", action, r)
				}
			}
		}
	}
	// Every call the hook's code can make (pretraffic.Actions, each
	// method of its clients' interfaces) is allowed.
	for method, action := range pretraffic.Actions {
		if !allowed[action] {
			t.Errorf("the hook calls %s, and its role does not allow %s", method, action)
		}
	}
	if !maps.Equal(invoked, versions) {
		t.Errorf("the hook may invoke %v, want the new versions %v alone", slices.Sorted(maps.Keys(invoked)), slices.Sorted(maps.Keys(versions)))
	}
	if len(reported) != len(groups) || len(read) != len(groups) {
		t.Errorf("the hook reports on %v and reads %v, want every deployment group: %v", reported, read, slices.Sorted(maps.Keys(groups)))
	}
	// CodeDeploy may invoke the hook besides what AWS's policy for it
	// allows, and nothing else.
	for id, p := range ofType(res, "AWS::IAM::Policy") {
		if !strings.Contains(jsonOf(p.Properties["Roles"]), "DeploymentRole") {
			continue
		}
		if doc := jsonOf(p.Properties["PolicyDocument"]); strings.Count(doc, `"Action"`) != 1 || !strings.Contains(doc, `"Action":"lambda:InvokeFunction"`) ||
			strings.Count(doc, `"Fn::GetAtt":["`+hookID+`","Arn"]`) != 2 || strings.Count(doc, "Fn::GetAtt") != 2 {
			t.Errorf("%s: CodeDeploy's role may %s", id, doc)
		}
	}
}

// dependsOn is the DependsOn of r as a list.
func dependsOn(r resource) []string {
	switch d := r.DependsOn.(type) {
	case string:
		return []string{d}
	case []any:
		var out []string
		for _, v := range d {
			out = append(out, v.(string))
		}
		return out
	}
	return nil
}

// TestDeploymentContext: quire:deployment takes CodeDeploy's predefined
// Lambda configurations, AllAtOnce for a development stack.
func TestDeploymentContext(t *testing.T) {
	needsNode(t)
	for _, context := range []map[string]any{tunedA, tunedB} {
		name := context[contextDeployment].(string)
		tmpl, err := synthWith(context)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.AllResourcesProperties(jsii.String("AWS::CodeDeploy::DeploymentGroup"), map[string]any{
			"DeploymentConfigName": "CodeDeployDefault.Lambda" + name,
		})
	}
	mustPanic(t, contextDeployment+"=Canary50Percent", func() {
		_, _ = synthWith(map[string]any{contextDeployment: "Canary50Percent"})
	})
}

// TestDashboard: one dashboard shows every alarm, each route's and each
// function's metrics, and each table; the stack outputs its address.
func TestDashboard(t *testing.T) {
	needsNode(t)
	tmpl, res := opsTemplate(t)
	tmpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Dashboard"), jsii.Number(1))
	var body string
	for _, d := range ofType(res, "AWS::CloudWatch::Dashboard") {
		body = jsonOf(d.Properties["DashboardBody"])
	}
	for id := range ofType(res, "AWS::CloudWatch::Alarm") {
		if !strings.Contains(body, `{"Fn::GetAtt":["`+id+`","Arn"]}`) {
			t.Errorf("the dashboard does not show %s", id)
		}
	}
	ns := telemetry.DefaultNamespace + "/Quire"
	for _, metric := range []string{telemetry.Requests, telemetry.Latency, telemetry.ServerErrors, telemetry.ClientErrors} {
		if want := `SEARCH('{` + ns + `,route} MetricName=\\\"` + metric + `\\\"'`; !strings.Contains(body, want) {
			t.Errorf("the dashboard has no %s by route (%s)", metric, want)
		}
	}
	for _, name := range append(servedFunctions(), routes.TableUsers, routes.TableOrders) {
		if !strings.Contains(body, `\"label\":\"`+name+`\"`) {
			t.Errorf("the dashboard has no line for %s", name)
		}
	}
	main, _ := template(t)
	main.HasOutput(jsii.String("DashboardUrl"), map[string]any{})
	main.HasOutput(jsii.String("AlarmTopicArn"), map[string]any{})
}

// TestQueries: docs/operating.md's Logs Insights queries are saved, over the
// access log and every served function's log group.
func TestQueries(t *testing.T) {
	needsNode(t)
	_, res := opsTemplate(t)
	got := map[string]string{}
	for _, q := range ofType(res, "AWS::Logs::QueryDefinition") {
		groups := jsonOf(q.Properties["LogGroupNames"])
		got[q.Properties["Name"].(string)] = q.Properties["QueryString"].(string)
		for _, want := range append([]string{"Api"}, servedFunctions()...) {
			if !strings.Contains(groups, "referencetoQuire"+exportName(want)+"Logs") && !(want == "Api" && strings.Contains(groups, "ApiAccessLogs")) {
				t.Errorf("%s: does not search %s's logs: %s", q.Properties["Name"], want, groups)
			}
		}
	}
	if !strings.Contains(got["Quire/find-request"], "filter request_id = ") || !strings.Contains(got["Quire/slowest-routes"], "pct(latency_ms, 99)") ||
		!strings.Contains(got["Quire/failures"], `level in ["WARN", "ERROR"]`) || len(got) != 3 {
		t.Errorf("queries %v", got)
	}
}

// TestHealthCheck: Route 53 polls GET /health on the stage, unless
// quire:healthCheck=false says something else does.
func TestHealthCheck(t *testing.T) {
	needsNode(t)
	tmpl, _ := opsTemplate(t)
	tmpl.HasResourceProperties(jsii.String("AWS::Route53::HealthCheck"), map[string]any{
		"HealthCheckConfig": assertions.Match_ObjectLike(&map[string]any{
			"Type": "HTTPS", "Port": 443, "ResourcePath": "/" + stageName + strings.TrimPrefix(healthRoute, "GET "),
			"Regions": healthCheckRegions,
		}),
	})
	off, err := synthStacks(tunedA) // quire:healthCheck=false
	if err != nil {
		t.Fatal(err)
	}
	off.ops.ResourceCountIs(jsii.String("AWS::Route53::HealthCheck"), jsii.Number(0))
	off.ops.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(len(wantAlarms())))
}

// TestChecksFindViolations: the rule packs see both stacks: a function
// without its suppressions, or a topic that takes plain HTTP in the nested
// stack, is a finding that fails the synth.
func TestChecksFindViolations(t *testing.T) {
	needsNode(t)
	dir := t.TempDir()
	_, stack, err := newApp(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	awssns.NewTopic(operations(stack), jsii.String("PlainTopic"), nil)
	awslambda.NewFunction(stack, jsii.String("Unchecked"), &awslambda.FunctionProps{
		Runtime: awslambda.Runtime_PROVIDED_AL2023(), Handler: jsii.String("bootstrap"),
		Code: awslambda.Code_FromAsset(jsii.String(dir+"/health"), nil),
	})
	assertions.Template_FromStack(stack, nil)
	got := strings.Join(findings(stack), "\n")
	for _, want := range []string{"/Quire/Operations/PlainTopic/Resource: AwsSolutions-SNS3", "/Quire/Unchecked/Resource: Serverless-LambdaDLQ"} {
		if !strings.Contains(got, want) {
			t.Errorf("no finding %q in:\n%s", want, got)
		}
	}
}
