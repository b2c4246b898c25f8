package httpapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// domains are the packages of the shop's rules.
var domains = []string{"users", "orders", "carts", "catalog", "config", "auth"}

// TestDomainsKnowNoHTTP: a domain package holds types, rules and store
// interfaces, and imports no HTTP package (net/http, rest, httpapi) and no
// telemetry, directly or through another package; its handlers live here.
func TestDomainsKnowNoHTTP(t *testing.T) {
	const module = "github.com/quireapi/quire/internal/"
	for _, d := range domains {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+d).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", d, err)
		}
		for _, p := range strings.Fields(string(out)) {
			if p == "net/http" || p == module+"rest" || p == module+"httpapi" || p == module+"telemetry" {
				t.Errorf("%s imports %s: its handlers belong in httpapi", d, p)
			}
		}
	}
}

// maxCallbacks bounds the function literals that the domain packages pass
// as arguments: a rule is a plain function of what was read, and a handler
// reads, decides, renders and commits in a straight line, so that a
// request's way through the code reads in one direction.
const maxCallbacks = 8

// TestDomainsPassFewCallbacks counts the function literals passed as
// arguments in the domain packages (tests aside).
func TestDomainsPassFewCallbacks(t *testing.T) {
	var found []string
	parsed := 0
	for _, d := range domains {
		files, err := filepath.Glob(filepath.Join("..", d, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			parsed++
			ast.Inspect(f, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					for _, a := range call.Args {
						if _, ok := a.(*ast.FuncLit); ok {
							found = append(found, fset.Position(a.Pos()).String())
						}
					}
				}
				return true
			})
		}
	}
	if len(found) > maxCallbacks {
		t.Errorf("the domain packages pass %d function literals as arguments, more than %d:\n%s", len(found), maxCallbacks, strings.Join(found, "\n"))
	}
	if parsed < len(domains) {
		t.Errorf("%d files read of %d packages", parsed, len(domains))
	}
}
