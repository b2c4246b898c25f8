package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quireapi/quire/docs/markdown"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/pretraffic"
	"github.com/quireapi/quire/shared/rest"
)

// TestProblemTypes: the table of problem types in conventions.md has one row
// for each error code of shared/rest and none other, each row with the
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
			t.Errorf("%s: %s is not an error code of shared/rest (rest.Codes: %v)", r, kind, rest.Codes())
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
// tests and bench/: os.Getenv, os.LookupEnv and a getenv parameter, by a
// literal name, a constant or dynamo.TableEnv), and each variable it lists
// is read.
func TestConfigurationVariables(t *testing.T) {
	documented := map[string]markdown.Row{}
	for _, r := range markdown.MustTable(t, "configuration.md", "Variable", "Used by", "Default", "Meaning") {
		names := markdown.CodeSpans(r.Cells[0])
		if len(names) == 0 {
			t.Errorf("%s: %q names no variable", r, r.Cells[0])
		}
		for _, name := range names {
			if first, ok := documented[name]; ok {
				t.Errorf("%s: %s has a row already, at %s", r, name, first)
			}
			documented[name] = r
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
			case path == filepath.Join(root, "bench"), name == "node_modules", name == "cdk.out", name == "testdata",
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
	// where is a place in the module: "shared/awsenv/awsenv.go:23".
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
