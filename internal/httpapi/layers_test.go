package httpapi_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// domains are the packages of the shop's rules, and notYet those that
// still hold their handlers: each moves here, one at a time.
var (
	domains = []string{"users", "orders", "carts", "catalog", "config", "auth"}
	notYet  = []string{"auth"}
)

// TestDomainsKnowNoHTTP: a domain package holds types, rules and store
// interfaces, and imports no HTTP package (net/http, rest, httpapi) and no
// telemetry, directly or through another package of Quire's; its handlers
// live here. A package of notYet that no longer imports them fails too, so
// that the list only shrinks.
func TestDomainsKnowNoHTTP(t *testing.T) {
	const module = "github.com/quireapi/quire/internal/"
	for _, d := range domains {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+d).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", d, err)
		}
		var http []string
		for _, p := range strings.Fields(string(out)) {
			if p == "net/http" || p == module+"rest" || p == module+"httpapi" || p == module+"telemetry" {
				http = append(http, p)
			}
		}
		switch waiting := slices.Contains(notYet, d); {
		case !waiting && http != nil:
			t.Errorf("%s imports %v: its handlers belong in httpapi", d, http)
		case waiting && http == nil:
			t.Errorf("%s imports no HTTP package now: take it off notYet", d)
		}
	}
}
