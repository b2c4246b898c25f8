package docs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/docs/markdown"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/pretraffic"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/telemetry"
)

// TestProblemTypes: the table of problem types in conventions.md has one row
// for each error code of internal/rest and none other, each row with the
// code's status and with Retry-After exactly when rest.Retryable says a
// retry can succeed. (API Gateway's own answers, the statuses of the
// gateway responses, are infra's TestDocsGatewayProblems.)
func TestProblemTypes(t *testing.T) {
	rows := markdown.MustTable(t, "conventions.md", "`type`", "status", "`Retry-After`", "meaning", "what a client should do")
	seen := map[string]markdown.Row{}
	for _, r := range rows {
		names := markdown.CodeSpans(r.Cells[0])
		if len(names) != 1 {
			t.Errorf("%s: the type %q names no single problem type", r, r.Cells[0])
			continue
		}
		kind := names[0]
		if first, ok := seen[kind]; ok {
			t.Errorf("%s: %s has a row already, at %s", r, kind, first)
			continue
		}
		seen[kind] = r
		if !slices.Contains(rest.Codes(), kind) {
			t.Errorf("%s: %s is not an error code of internal/rest (rest.Codes: %v)", r, kind, rest.Codes())
			continue
		}
		statuses, err := statusesOf(r.Cells[1])
		if err != nil {
			t.Errorf("%s: %s: %v", r, kind, err)
		} else if !slices.Contains(statuses, rest.Status(kind)) {
			t.Errorf("%s: %s says status %s, but rest.Status(%q) is %d", r, kind, r.Cells[1], kind, rest.Status(kind))
		}
		if says, retryable := yes(r.Cells[2]), rest.Retryable(kind); says != retryable {
			t.Errorf("%s: %s says Retry-After %q, but rest.Retryable(%q) is %v", r, kind, r.Cells[2], kind, retryable)
		}
	}
	for _, kind := range rest.Codes() {
		if _, ok := seen[kind]; !ok {
			t.Errorf("conventions.md: the table of problem types has no row for %s (status %d)", kind, rest.Status(kind))
		}
	}
}

// statusesOf reads a status cell: "409", or "502, 504".
func statusesOf(cell string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(cell, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// yes reads a yes-or-no cell, which may say more after its word.
func yes(cell string) bool { return strings.HasPrefix(cell, "yes") }

// libraryReads are the variables Quire reads through a library's function
// rather than by name: each counts as read where Quire's code calls the
// function. (AWS_REGION and the credentials are not among them: awsenv
// reads them by name, and Quire does not use the AWS SDK's configuration
// loader, so the table lists no other variable of the SDK's.)
var libraryReads = map[string]string{
	"AWS_LAMBDA_LOG_LEVEL": "lambdacontext.NewLogHandler",
}

// TestConfigurationVariables: the table of configuration.md lists every
// environment variable Quire's Go code reads (the module's sources but
// tests and cmd/bench/: os.Getenv, os.LookupEnv and a getenv parameter, by a
// literal name, a constant or dynamo.TableEnv), and each variable it lists
// is read. The default of each variable that the functions' configuration
// (service.ConfigFromEnv) or the demo's (demo.OptionsFromEnv) reads is
// what they make of an empty environment: the default cell's first code
// span, or the i-th for a row's i-th variable. (make run's own defaults,
// PORT's and the others' of cmd/local, a main package, and
// DYNAMODB_LOCAL_DIR's, an unexported constant of ddblocal, are read by
// no exported code, so the table alone says them.)
func TestConfigurationVariables(t *testing.T) {
	empty := func(string) string { return "" }
	cfg, err := service.ConfigFromEnv(empty)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := demo.OptionsFromEnv(empty)
	if err != nil {
		t.Fatal(err)
	}
	defaults := map[string]string{
		"TOKEN_LIFETIME":      cfg.Tokens.Lifetime.String(),
		"TOKEN_ISSUER":        cfg.Tokens.Issuer,
		"TOKEN_AUDIENCE":      cfg.Tokens.Audience,
		"IDEMPOTENCY_TTL":     cfg.IdempotencyTTL.String(),
		"METRICS_NAMESPACE":   cfg.MetricsNamespace,
		"SEED_ADMIN_EMAIL":    seed.AdminEmail,
		"SEED_ADMIN_PASSWORD": seed.AdminPassword,
	}
	for _, tb := range dynamo.Tables() {
		defaults[dynamo.TableEnv(tb.Name)] = cfg.DynamoDB.Tables.Physical(tb.Name)
	}

	documented := map[string]markdown.Row{}
	for _, r := range markdown.MustTable(t, "configuration.md", "Variable", "Used by", "Default", "Meaning") {
		names := markdown.CodeSpans(r.Cells[0])
		if len(names) == 0 {
			t.Errorf("%s: %q names no variable", r, r.Cells[0])
		}
		values := markdown.CodeSpans(r.Cells[2])
		for i, name := range names {
			if first, ok := documented[name]; ok {
				t.Errorf("%s: %s has a row already, at %s", r, name, first)
			}
			documented[name] = r
			want, ok := defaults[name]
			if !ok {
				continue
			}
			if i >= len(values) {
				t.Errorf("%s: %s's default is %q, but the row gives none in %q", r, name, want, r.Cells[2])
				continue
			}
			got := values[i]
			if d, err := time.ParseDuration(got); err == nil {
				got = d.String() // 15m as the code's 15m0s
			}
			if got != want {
				t.Errorf("%s: %s's default is %q, but the row says %q", r, name, want, values[i])
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(defaults)) {
		if _, ok := documented[name]; !ok {
			t.Errorf("the table of configuration.md has no row for %s, whose default is %q", name, defaults[name])
		}
	}
	read := envReads(t)
	for _, name := range slices.Sorted(maps.Keys(read)) {
		if _, ok := documented[name]; !ok {
			t.Errorf("%s reads %s, which the table of configuration.md does not list", read[name], name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		if _, ok := read[name]; !ok {
			t.Errorf("%s: %s is in the table, but no Go code reads it", documented[name], name)
		}
	}
}

// envReads returns each environment variable the module's Go code reads,
// with the first place that reads it (path:line from the module's root).
func envReads(t *testing.T) map[string]string {
	t.Helper()
	root := ".."
	fset := token.NewFileSet()
	files := map[string][]*ast.File{} // by directory: a package's files
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path == root:
			case path == filepath.Join(root, "cmd", "bench"), name == "node_modules", name == "cdk.out", name == "testdata",
				strings.HasPrefix(name, "."), strings.HasPrefix(name, "_"):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files[filepath.Dir(path)] = append(files[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	// where is a place in the module: "internal/awsenv/awsenv.go:23".
	where := func(at token.Pos) string {
		p := fset.Position(at)
		rel, _ := filepath.Rel(root, p.Filename)
		return filepath.ToSlash(rel) + ":" + strconv.Itoa(p.Line)
	}
	add := func(name string, at token.Pos, through string) {
		if _, ok := out[name]; !ok {
			out[name] = where(at) + through
		}
	}
	if len(files) == 0 {
		t.Fatal("no Go source found")
	}
	for _, dir := range slices.Sorted(maps.Keys(files)) {
		consts := stringConsts(files[dir])
		for _, f := range files[dir] {
			ast.Walk(envVisitor{visit: func(call *ast.CallExpr, params map[string]bool) {
				for name, fn := range libraryReads {
					if nameOf(call.Fun) == fn {
						add(name, call.Pos(), " (through "+fn+")")
					}
				}
				if !readsEnv(call.Fun) || len(call.Args) != 1 {
					return
				}
				switch arg := call.Args[0].(type) {
				case *ast.BasicLit:
					if s, err := strconv.Unquote(arg.Value); err == nil {
						add(s, arg.Pos(), "")
						return
					}
				case *ast.Ident:
					if s, ok := consts[arg.Name]; ok {
						add(s, arg.Pos(), "")
						return
					}
					if params[arg.Name] {
						return // a function that passes its caller's name on
					}
				case *ast.CallExpr:
					if fn := nameOf(arg.Fun); fn == "TableEnv" || fn == "dynamo.TableEnv" {
						for _, tb := range dynamo.Tables() {
							add(dynamo.TableEnv(tb.Name), arg.Pos(), "")
						}
						return
					}
				}
				t.Errorf("%s reads a variable whose name the test cannot tell: %s(%s)", where(call.Pos()), nameOf(call.Fun), types.ExprString(call.Args[0]))
			}}, f)
		}
	}
	return out
}

// readsEnv reports whether a call of fn reads the environment: os.Getenv,
// os.LookupEnv, or a function named getenv (the parameter through which
// Quire's configuration reads it).
func readsEnv(fn ast.Expr) bool {
	switch nameOf(fn) {
	case "os.Getenv", "os.LookupEnv", "getenv":
		return true
	}
	return false
}

// nameOf is the name of a called function: "getenv", "os.Getenv".
func nameOf(fn ast.Expr) string {
	switch fn := fn.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		if x, ok := fn.X.(*ast.Ident); ok {
			return x.Name + "." + fn.Sel.Name
		}
	}
	return ""
}

// stringConsts returns a package's string constants by name.
func stringConsts(files []*ast.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							out[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	return out
}

// envVisitor calls visit with each call of a file and the parameters of
// the functions around it.
type envVisitor struct {
	params map[string]bool
	visit  func(call *ast.CallExpr, params map[string]bool)
}

func (v envVisitor) Visit(n ast.Node) ast.Visitor {
	var fn *ast.FuncType
	switch n := n.(type) {
	case *ast.FuncDecl:
		fn = n.Type
	case *ast.FuncLit:
		fn = n.Type
	case *ast.CallExpr:
		v.visit(n, v.params)
	}
	if fn == nil {
		return v
	}
	params := maps.Clone(v.params)
	if params == nil {
		params = map[string]bool{}
	}
	for _, field := range fn.Params.List {
		for _, name := range field.Names {
			params[name.Name] = true
		}
	}
	return envVisitor{params, v.visit}
}

// TestPreTrafficChecks: the table of deploying.md's pre-traffic checks has
// a row for each function the hook checks, which names every request of
// its checks.
func TestPreTrafficChecks(t *testing.T) {
	rows := markdown.MustTable(t, "deploying.md", "Function", "What the hook asks the new version")
	var groups []string
	for _, r := range rows {
		group := strings.TrimSpace(r.Cells[0])
		groups = append(groups, group)
		spans := markdown.CodeSpans(r.Cells[1])
		for _, req := range pretraffic.Requests(group) {
			if !slices.Contains(spans, req) {
				t.Errorf("%s: %s does not name the request %q of its checks", r, group, req)
			}
		}
	}
	if !slices.Equal(groups, pretraffic.Groups()) {
		t.Errorf("the rows are %v, want a row for each of %v, in that order", groups, pretraffic.Groups())
	}
}

// metricPrice is CloudWatch's price of a metric a month, at us-east-1's
// prices for the first 10,000 metrics, as docs/operating.md gives it.
const metricPrice = 0.30

// TestOperatingMetrics: what docs/operating.md says of the functions'
// metrics is what a request's line declares. Every method API Gateway
// passes on (its ANY method sends each to the path's owner) on every
// resource of the API goes through apigw.NewHandler, to a handler that
// counts every function metric; the routes of their lines are every
// value of the route dimension. The table of metrics names each metric
// the lines declare, with its dimension and unit, and the page gives the
// values' count, the metrics' and what they cost a month.
func TestOperatingMetrics(t *testing.T) {
	var logged bytes.Buffer
	log := &telemetry.Logger{
		Log: slog.New(slog.NewJSONHandler(&logged, nil)), JSON: true,
		Function: routes.GroupUsers, Namespace: telemetry.DefaultNamespace,
	}
	counts := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := telemetry.FromContext(r.Context())
		rec.Count(telemetry.IdempotentReplays)
		rec.Count(telemetry.FailedLogins)
		rec.AddDynamoDB(telemetry.DynamoDB{Calls: 1, Retries: 1, Throttles: 1, Conflicts: 1})
		w.WriteHeader(http.StatusNoContent)
	})
	h := apigw.NewHandler(counts, log)
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}
	for _, resource := range routes.GatewayPaths() {
		params := map[string]string{}
		for _, m := range regexp.MustCompile(`\{(\w+)\}`).FindAllStringSubmatch(resource, -1) {
			params[m[1]] = "1"
		}
		if _, ok := params[routes.VersionParam]; ok {
			params[routes.VersionParam] = "v" + strconv.Itoa(routes.Versions[0])
		}
		path, ok := routes.Resolve(resource, params)
		if !ok {
			t.Fatalf("routes.Resolve(%q, %v) resolves nothing", resource, params)
		}
		for _, method := range methods {
			ev := events.APIGatewayProxyRequest{HTTPMethod: method, Resource: resource, Path: path, PathParameters: params}
			if _, err := h(context.Background(), ev); err != nil {
				t.Fatalf("%s %s: %v", method, resource, err)
			}
		}
	}

	// What the lines say: each route, and the metrics declared by dimension.
	values := map[string]bool{}
	declared := map[string]string{} // by metric: "[[dimension]], unit"
	for _, l := range strings.Split(strings.TrimSpace(logged.String()), "\n") {
		var line struct {
			Route string `json:"route"`
			AWS   struct {
				CloudWatchMetrics []struct {
					Dimensions [][]string
					Metrics    []struct{ Name, Unit string }
				}
			} `json:"_aws"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("a request's line: %v: %s", err, l)
		}
		values[line.Route] = true
		for _, d := range line.AWS.CloudWatchMetrics {
			for _, m := range d.Metrics {
				declared[m.Name] = fmt.Sprint(d.Dimensions) + ", " + m.Unit
			}
		}
	}
	var heads, others, table []string
	for v := range values {
		switch {
		case strings.HasPrefix(v, http.MethodHead+" "):
			heads = append(heads, v)
		case v == http.MethodOptions || v == "other":
			others = append(others, v)
		default:
			table = append(table, v)
		}
	}
	var resources []string // the table's routes without a version prefix
	for _, r := range routes.All() {
		if k := r.Resource().Key(); !slices.Contains(resources, k) {
			resources = append(resources, k)
		}
	}
	if slices.Sort(table); !slices.Equal(table, slices.Sorted(slices.Values(resources))) {
		t.Errorf("the lines name the routes %v, but the route table's without a version prefix are %v", table, slices.Sorted(slices.Values(resources)))
	}

	// The table of metrics.
	documented := map[string]string{}
	for _, r := range markdown.MustTable(t, "operating.md", "metric", "dimension", "unit", "what") {
		dims := markdown.CodeSpans(r.Cells[1])
		if len(dims) != 1 {
			t.Errorf("%s: %q names no single dimension", r, r.Cells[1])
			continue
		}
		for _, name := range markdown.CodeSpans(r.Cells[0]) {
			documented[name] = fmt.Sprint([][]string{dims}) + ", " + strings.TrimSpace(r.Cells[2])
			if got, ok := declared[name]; !ok {
				t.Errorf("%s: no request's line declares %s", r, name)
			} else if got != documented[name] {
				t.Errorf("%s: %s is declared with the dimension and unit %s, not %s", r, name, got, documented[name])
			}
		}
	}
	perDimension := map[string]int{}
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		if _, ok := documented[name]; !ok {
			t.Errorf("a request's line declares %s (%s), which the table of metrics of operating.md does not name", name, declared[name])
		}
		perDimension[strings.Split(declared[name], ",")[0]]++
	}
	byRoute := perDimension[fmt.Sprint([][]string{{telemetry.DimensionRoute}})]
	byFunction := perDimension[fmt.Sprint([][]string{{telemetry.DimensionFunction}})]

	// The count and the cost.
	functions := len(routes.Groups()) // each served through service.Config.Serve, named by its group
	metrics := byRoute*len(values) + byFunction*functions
	cost := math.Round(float64(metrics) * metricPrice)
	page := strings.Join(lines(t, "operating.md"), "\n")
	page = strings.Join(strings.Fields(page), " ") // a sentence may wrap
	for _, want := range []string{
		fmt.Sprintf("one of the table's %d routes without their version prefix", len(table)),
		fmt.Sprintf("a `HEAD` of one of its %d GET paths", len(heads)),
		fmt.Sprintf("%d values in all", len(values)),
		fmt.Sprintf("so %d metrics × %d routes and %d × %d functions: at most %d metrics, about $%.0f a month at CloudWatch's $%.2f per metric",
			byRoute, len(values), byFunction, functions, metrics, cost, metricPrice),
		fmt.Sprintf("the functions' metrics $%.0f", cost),
	} {
		if !strings.Contains(page, want) {
			t.Errorf("operating.md does not say %q", want)
		}
	}
	if len(others) != 2 {
		t.Errorf("the lines name %v besides the table's routes and HEAD, want OPTIONS and other, as operating.md says", others)
	}
}
