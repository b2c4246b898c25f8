package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/docs/markdown"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/rest"
)

// The tables of docs/ that say what the stack makes: its alarms, its CDK
// context, and the problems API Gateway answers itself. The tables that
// need no synthesized stack are docs/tables_test.go's.

// TestDocsAlarms: the table of alarms of docs/operating.md names every
// alarm the stack creates and no other (<function> standing for each
// served function, <table> for each table), and what it says of each is
// the alarm's: the threshold (a percentage of requests, milliseconds, a
// count a minute), how many of how many minutes breach, the requests a
// rate needs, the statistic, whether no data breaches; and every alarm
// judges one-minute periods, as the page says.
func TestDocsAlarms(t *testing.T) {
	needsNode(t)
	_, res := opsTemplate(t)
	alarms := map[string]map[string]any{} // by id: the name after "Quire-"
	for _, a := range ofType(res, "AWS::CloudWatch::Alarm") {
		id, ok := strings.CutPrefix(a.Properties["AlarmName"].(string), "Quire-")
		if !ok {
			t.Errorf("alarm %v is not named Quire-<id>", a.Properties["AlarmName"])
		}
		alarms[id] = a.Properties
	}
	var tables []string
	for _, tb := range dynamo.Tables() {
		tables = append(tables, tb.Name)
	}
	placeholders := map[string][]string{"<function>": servedFunctions(), "<table>": tables}

	documented := map[string]markdown.Row{}
	for _, r := range markdown.MustTable(t, filepath.Join("..", "docs", "operating.md"), "Alarm", "Goes off when", "What it means; check first") {
		names := markdown.CodeSpans(r.Cells[0])
		if len(names) != 1 {
			t.Errorf("%s: %q names no single alarm", r, r.Cells[0])
			continue
		}
		ids := []string{names[0]}
		if p := regexp.MustCompile(`^<\w+>`).FindString(names[0]); p != "" {
			if placeholders[p] == nil {
				t.Errorf("%s: %s: %s stands for nothing the test knows (%v)", r, names[0], p, slices.Sorted(maps.Keys(placeholders)))
				continue
			}
			ids = nil
			for _, each := range placeholders[p] {
				ids = append(ids, each+strings.TrimPrefix(names[0], p))
			}
		}
		// Each problem once, in the order met, with the alarms it is of.
		var problems []string
		of := map[string][]string{}
		for _, id := range ids {
			if first, ok := documented[id]; ok {
				t.Errorf("%s: %s has a row already, at %s", r, id, first)
				continue
			}
			documented[id] = r
			p, ok := alarms[id]
			if !ok {
				t.Errorf("%s: the stack creates no alarm %s", r, id)
				continue
			}
			for _, problem := range alarmDisagreements(r.Cells[1], p) {
				if of[problem] == nil {
					problems = append(problems, problem)
				}
				of[problem] = append(of[problem], id)
			}
		}
		for _, problem := range problems {
			t.Errorf("%s: %s: %s", r, strings.Join(of[problem], ", "), problem)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(alarms)) {
		if _, ok := documented[id]; !ok {
			t.Errorf("the stack creates the alarm %s, which the table of docs/operating.md does not name", id)
		}
	}

	// What they cost: CloudWatch bills an alarm per metric it reads.
	metrics := 0
	for _, p := range alarms {
		if m, ok := p["Metrics"].([]any); ok {
			for _, q := range m {
				if q.(map[string]any)["MetricStat"] != nil {
					metrics++
				}
			}
		} else {
			metrics++
		}
	}
	page, err := os.ReadFile(filepath.Join("..", "docs", "operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("the %d alarms read %d metrics", len(alarms), metrics); !strings.Contains(string(page), want) ||
		!strings.Contains(string(page), fmt.Sprintf("$%.2f at $0.10 each", float64(metrics)/10)) {
		t.Errorf("docs/operating.md does not say %q, at $%.2f", want, float64(metrics)/10)
	}
}

// alarmDisagreements returns how an alarm's properties p differ from what
// the table says of it (when, the "Goes off when" cell); every number
// when states must be one of those checked.
func alarmDisagreements(when string, p map[string]any) []string {
	var out []string
	number := func(s string) float64 {
		n, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		if err != nil {
			out = append(out, fmt.Sprintf("%q is not a number", s))
		}
		return n
	}
	num := func(v any) float64 { n, _ := v.(float64); return n }
	atLeast := func(m []string, want float64) {
		if math.Abs(num(p["Threshold"])-want) > 1e-9 || p["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" {
			out = append(out, fmt.Sprintf("says %q, but the alarm's threshold is %v (%v)", m[0], p["Threshold"], p["ComparisonOperator"]))
		}
	}
	var expressions []string // of a math alarm
	for _, m := range regexp.MustCompile(`"Expression":"([^"]*)"`).FindAllStringSubmatch(jsonOf(p["Metrics"]), -1) {
		expressions = append(expressions, m[1])
	}
	expression := strings.Join(expressions, "; ")
	// Each statement the cell may make, and what it holds the alarm to.
	statements := []struct {
		re    string
		check func(m []string)
	}{
		{`([\d,.]+)% or more`, func(m []string) { atLeast(m, number(m[1])/100) }},
		{`([\d,.]+) ms or more`, func(m []string) { atLeast(m, number(m[1])) }},
		{`([\d,.]+) or more`, func(m []string) { atLeast(m, number(m[1])) }},
		{`in (\d+) of (\d+) minutes`, func(m []string) {
			if num(p["DatapointsToAlarm"]) != number(m[1]) || num(p["EvaluationPeriods"]) != number(m[2]) {
				out = append(out, fmt.Sprintf("says %q, but the alarm goes off in %v of %v periods", m[0], p["DatapointsToAlarm"], p["EvaluationPeriods"]))
			}
		}},
		{`for (\d+) minutes in a row`, func(m []string) {
			if num(p["DatapointsToAlarm"]) != number(m[1]) || num(p["EvaluationPeriods"]) != number(m[1]) {
				out = append(out, fmt.Sprintf("says %q, but the alarm goes off in %v of %v periods", m[0], p["DatapointsToAlarm"], p["EvaluationPeriods"]))
			}
		}},
		{`fewer than ([\d,]+) requests count as (\d+)`, func(m []string) {
			if want := fmt.Sprintf(">= %v, errors", number(m[1])); !strings.Contains(expression, want) || !strings.HasSuffix(expression, ", "+m[2]+")") {
				out = append(out, fmt.Sprintf("says %q, but the rate is %s", m[0], expression))
			}
		}},
		{`p(\d+) latency`, func(m []string) {
			if p["ExtendedStatistic"] != "p"+m[1] {
				out = append(out, fmt.Sprintf("says %q, but the alarm reads %v", m[0], p["ExtendedStatistic"]))
			}
		}},
	}
	unread := when
	for _, s := range statements {
		re := regexp.MustCompile(s.re)
		for _, m := range re.FindAllStringSubmatch(unread, -1) {
			s.check(m)
		}
		unread = re.ReplaceAllString(unread, "")
	}
	if left := regexp.MustCompile(`\b\d[\d,.]*\b`).FindAllString(unread, -1); len(left) > 0 {
		out = append(out, fmt.Sprintf("states %v in a way the test cannot check: %q", left, when))
	}
	if says, breaching := strings.Contains(when, "no data counts as failing"), p["TreatMissingData"] == "breaching"; says != breaching {
		out = append(out, fmt.Sprintf("says no data counts as failing: %v, but the alarm treats missing data as %v", says, p["TreatMissingData"]))
	}
	for _, period := range regexp.MustCompile(`"Period":(\d+)`).FindAllStringSubmatch(jsonOf(p), -1) {
		if period[1] != "60" {
			out = append(out, fmt.Sprintf("judges periods of %s seconds, not one minute", period[1]))
		}
	}
	return out
}

// TestDocsContextKeys: the table of CDK context of docs/deploying.md names
// every key the stack reads (each "quire:..." of infra's sources) and no
// other; a default given by a constant is that constant, and deploying
// with every documented default set makes the same stack as deploying
// without them, so each default is what the stack does unset.
func TestDocsContextKeys(t *testing.T) {
	needsNode(t)
	read := contextKeys(t)
	documented := map[string]markdown.Row{}
	defaults := map[string]string{} // only keys that have one
	for _, r := range markdown.MustTable(t, filepath.Join("..", "docs", "deploying.md"), "Key", "Default", "Meaning") {
		keys := markdown.CodeSpans(r.Cells[0])
		values := markdown.CodeSpans(r.Cells[1])
		switch {
		case len(keys) == 0:
			t.Errorf("%s: %q names no key", r, r.Cells[0])
		case r.Cells[1] == "none":
			values = nil
		case len(values) != len(keys):
			t.Errorf("%s: %d keys, but %d defaults in %q (say none for a key without one)", r, len(keys), len(values), r.Cells[1])
			continue
		}
		for i, key := range keys {
			if first, ok := documented[key]; ok {
				t.Errorf("%s: %s has a row already, at %s", r, key, first)
			}
			documented[key] = r
			if _, ok := read[key]; !ok {
				t.Errorf("%s: %s is in the table, but the stack reads no such key", r, key)
			}
			if values != nil {
				defaults[key] = values[i]
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(read)) {
		if _, ok := documented[key]; !ok {
			t.Errorf("%s names the context key %s, which the table of docs/deploying.md does not list", read[key], key)
		}
	}

	// The defaults the code names.
	lifetime := func(s string) string {
		d, err := time.ParseDuration(s)
		if err != nil {
			return s
		}
		return d.String()
	}
	for key, want := range map[string]string{
		contextThrottleRate:  fmt.Sprint(defaultThrottle.rate),
		contextThrottleBurst: fmt.Sprint(defaultThrottle.burst),
		contextPerTokenLimit: fmt.Sprint(defaultPerToken),
		contextTokenLifetime: login.DefaultLifetime.String(),
		contextDeployment:    defaultDeployment,
	} {
		if _, ok := documented[key]; !ok {
			continue // named above
		}
		got := defaults[key]
		if key == contextTokenLifetime {
			got = lifetime(got)
		}
		if got != want {
			t.Errorf("%s: %s's default is %q, but the stack's is %q", documented[key], key, defaults[key], want)
		}
	}

	// Every default, as the stack does it: one synth with them all, and
	// one a key when that one differs, to name the key.
	unset := synthesized(t)
	same := func(context map[string]any) (same bool, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r) // a value the stack refuses
			}
		}()
		s, err := synthStacks(context)
		if err != nil {
			return false, err
		}
		same = jsonOf(s.main.ToJSON()) == jsonOf(unset.main.ToJSON()) && jsonOf(s.ops.ToJSON()) == jsonOf(unset.ops.ToJSON())
		for name, tmpl := range s.routes {
			same = same && jsonOf(tmpl.ToJSON()) == jsonOf(unset.routes[name].ToJSON())
		}
		return same, nil
	}
	all := map[string]any{}
	for key, value := range defaults {
		all[key] = value
	}
	if ok, err := same(all); len(all) == 0 || ok && err == nil {
		return
	}
	for _, key := range slices.Sorted(maps.Keys(defaults)) {
		switch ok, err := same(map[string]any{key: defaults[key]}); {
		case err != nil:
			t.Errorf("%s: %s's default is %q, but the stack with %s=%s fails: %v", documented[key], key, defaults[key], key, defaults[key], err)
		case !ok:
			t.Errorf("%s: %s's default is %q, but the stack with %s=%s differs from the stack without it",
				documented[key], key, defaults[key], key, defaults[key])
		}
	}
}

// contextKeys returns each CDK context key of infra's sources (the string
// literals that start with "quire:", the keys' constants), with where it
// is.
func contextKeys(t *testing.T) map[string]string {
	t.Helper()
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, path := range sources {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, "quire:") {
					out[s] = "infra/" + path + ":" + strconv.Itoa(fset.Position(lit.Pos()).Line)
				}
			}
			return true
		})
	}
	if len(out) == 0 {
		t.Fatal("infra's sources name no context key")
	}
	return out
}

// apiGatewayErrors are the errors API Gateway answers that have no gateway
// response of the stack's own type, so that its DEFAULT_4XX or DEFAULT_5XX
// rewrites them and keeps API Gateway's status (AWS's table of gateway
// response types): those Quire's API can meet. The others, 4XX all, come
// of request validators, API keys and IAM authorization, which the stack
// does not use (TestDocsGatewayProblems checks).
var apiGatewayErrors = []struct {
	typ    string // "" for a function's failed invocation, which has no type of its own
	status int
}{
	{"AUTHORIZER_FAILURE", 500}, {"AUTHORIZER_CONFIGURATION_ERROR", 500}, {"API_CONFIGURATION_ERROR", 500},
	{"", 502}, {"INTEGRATION_FAILURE", 504}, {"INTEGRATION_TIMEOUT", 504},
}

// gatewayAnswer is a problem API Gateway or the web ACL answers itself.
type gatewayAnswer struct {
	what, code string
	status     int
	retryAfter bool
}

// TestDocsGatewayProblems: the table of problem types of docs/conventions.md
// has a row for each problem API Gateway and the web ACL answer themselves
// (the stack's gateway responses, API Gateway's errors that its DEFAULT_4XX
// and DEFAULT_5XX rewrite, the web ACL's 429), listing its status and
// saying Retry-After exactly when it carries one; and each status a row
// lists is one that internal/rest or they answer with that type. (That every
// code of internal/rest has its row is docs/tables_test.go's
// TestProblemTypes.)
func TestDocsGatewayProblems(t *testing.T) {
	needsNode(t)
	rows := map[string]markdown.Row{}
	statuses := map[string][]int{}
	for _, r := range markdown.MustTable(t, filepath.Join("..", "docs", "conventions.md"), "`type`", "status", "`Retry-After`", "meaning", "what a client should do") {
		names := markdown.CodeSpans(r.Cells[0])
		if len(names) != 1 {
			t.Errorf("%s: the type %q names no single problem type", r, r.Cells[0])
			continue
		}
		rows[names[0]] = r
		for _, s := range strings.Split(r.Cells[1], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				t.Errorf("%s: status %q: %v", r, r.Cells[1], err)
			}
			statuses[names[0]] = append(statuses[names[0]], n)
		}
	}

	_, res := template(t)
	var answers []gatewayAnswer
	byType := map[string]gatewayAnswer{}
	for id, g := range ofType(res, "AWS::ApiGateway::GatewayResponse") {
		p := g.Properties
		body := jsonOf(p["ResponseTemplates"])
		m := regexp.MustCompile(regexp.QuoteMeta(rest.ProblemTypeBase) + `([a-z-]+)`).FindStringSubmatch(body)
		if m == nil {
			t.Errorf("%s: the gateway response %v has no problem type: %s", id, p["ResponseType"], body)
			continue
		}
		status, _ := strconv.Atoi(fmt.Sprint(p["StatusCode"])) // 0: API Gateway's
		_, retry := p["ResponseParameters"].(map[string]any)["gatewayresponse.header.Retry-After"]
		a := gatewayAnswer{"the gateway response " + p["ResponseType"].(string), m[1], status, retry}
		byType[p["ResponseType"].(string)] = a
		if status != 0 {
			answers = append(answers, a)
		}
	}
	for _, e := range apiGatewayErrors {
		if _, own := byType[e.typ]; own {
			continue
		}
		d, ok := byType[fmt.Sprintf("DEFAULT_%dXX", e.status/100)]
		if !ok {
			t.Errorf("API Gateway's %s (%d) meets no gateway response of the stack", e.typ, e.status)
			continue
		}
		what := "API Gateway's " + e.typ
		if e.typ == "" {
			what = "a function's failed invocation"
		}
		answers = append(answers, gatewayAnswer{what + " (" + d.what + ")", d.code, e.status, d.retryAfter})
	}
	for _, typ := range []string{"DEFAULT_4XX", "DEFAULT_5XX"} {
		if d, ok := byType[typ]; !ok {
			t.Errorf("the stack has no %s gateway response", typ)
		} else if _, ok := rows[d.code]; !ok {
			t.Errorf("%s answers %s, which the table of problem types of docs/conventions.md has no row for", d.what, d.code)
		}
	}
	for _, m := range methods(res) {
		if m.props["AuthorizationType"] == "AWS_IAM" || m.props["ApiKeyRequired"] == true || m.props["RequestValidatorId"] != nil {
			t.Errorf("%s %s: IAM authorization, an API key or a request validator, whose errors apiGatewayErrors leaves out", m.verb, m.path)
		}
	}

	// The web ACL's rate rules.
	_, acl := webACL(t)
	var waf []gatewayAnswer
	for name, rule := range rules(acl) {
		action, _ := rule["Action"].(map[string]any) // a managed group has none
		block, _ := action["Block"].(map[string]any)
		custom, ok := block["CustomResponse"].(map[string]any)
		if !ok {
			continue
		}
		body := acl["CustomResponseBodies"].(map[string]any)[custom["CustomResponseBodyKey"].(string)].(map[string]any)
		var p rest.Problem
		if err := json.Unmarshal([]byte(body["Content"].(string)), &p); err != nil {
			t.Fatalf("the web ACL's rule %s: body %v: %v", name, body["Content"], err)
		}
		retry := strings.Contains(jsonOf(custom["ResponseHeaders"]), `"Name":"Retry-After"`)
		waf = append(waf, gatewayAnswer{"the web ACL's rule " + name, strings.TrimPrefix(p.Type, rest.ProblemTypeBase), int(custom["ResponseCode"].(float64)), retry})
	}
	if len(waf) == 0 {
		t.Error("the web ACL has no rule that answers a problem")
	}

	answers = append(answers, waf...)
	slices.SortFunc(answers, func(a, b gatewayAnswer) int { return strings.Compare(a.what, b.what) })
	for _, a := range answers {
		r, ok := rows[a.code]
		switch {
		case !ok:
			t.Errorf("%s answers %s %d, which the table of problem types of docs/conventions.md has no row for", a.what, a.code, a.status)
		case !slices.Contains(statuses[a.code], a.status):
			t.Errorf("%s: %s says status %s, but %s answers it with %d", r, a.code, r.Cells[1], a.what, a.status)
		case strings.HasPrefix(r.Cells[2], "yes") != a.retryAfter:
			with := "without"
			if a.retryAfter {
				with = "with"
			}
			t.Errorf("%s: %s says Retry-After %q, but %s answers it %s Retry-After", r, a.code, r.Cells[2], a.what, with)
		}
	}
	for _, code := range slices.Sorted(maps.Keys(statuses)) {
		for _, status := range statuses[code] {
			answered := status == rest.Status(code) || slices.ContainsFunc(answers, func(a gatewayAnswer) bool {
				return a.code == code && a.status == status
			})
			if !answered {
				t.Errorf("%s: %s says status %d, which neither internal/rest nor API Gateway answers with %s", rows[code], code, status, code)
			}
		}
	}
}

// TestDocsNestedStack: docs/deploying.md gives the nested operations
// stack's number of resources.
func TestDocsNestedStack(t *testing.T) {
	needsNode(t)
	_, res := opsTemplate(t)
	page, err := os.ReadFile(filepath.Join("..", "docs", "deploying.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("(%d resources) live in a nested stack", len(res)); !strings.Contains(string(page), want) {
		t.Errorf("docs/deploying.md does not say %q", want)
	}
}

// TestDocsWebACLCost: docs/deploying.md prices the web ACL the stack makes,
// at $5.00 a month and $1.00 per rule before requests.
func TestDocsWebACLCost(t *testing.T) {
	needsNode(t)
	_, acl := webACL(t)
	page, err := os.ReadFile(filepath.Join("..", "docs", "deploying.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("make **$%d.00 a month** before requests", 5+len(rules(acl))); !strings.Contains(string(page), want) {
		t.Errorf("docs/deploying.md does not say %q (%d rules)", want, len(rules(acl)))
	}
}
