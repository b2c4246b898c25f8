package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/quireapi/quire/internal/routes"
)

// eachObject calls visit with every object of each version's document,
// where names it ("#/components/schemas/ID").
func eachObject(t *testing.T, visit func(v int, where string, o map[string]any)) {
	t.Helper()
	for _, v := range routes.Versions {
		b, err := Document(v)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(where string, node any)
		walk = func(where string, node any) {
			switch n := node.(type) {
			case map[string]any:
				visit(v, where, n)
				for k, e := range n {
					walk(where+"/"+k, e)
				}
			case []any:
				for i, e := range n {
					walk(fmt.Sprintf("%s/%d", where, i), e)
				}
			}
		}
		walk("#", doc)
	}
}

// TestExactTypes: what a client generator reads from each document is
// exact. Every integer is a 64-bit one (format int64: ids reach 2^53-1,
// which a Java or C# generator reads as 32 bits without it), every number
// an amount, format double (a Go generator's float32 rounds 999999.99 to
// 1000000), and every enum and const says its type (without it, a Go
// client's field is an interface{}, whose zero value sends null).
func TestExactTypes(t *testing.T) {
	eachObject(t, func(v int, where string, n map[string]any) {
		typ, _ := n["type"].(string)
		_, enum := n["enum"].([]any)
		_, constant := n["const"]
		switch {
		case typ == "integer" && n["format"] != "int64":
			t.Errorf("version %d: %s is an integer of format %v, want int64", v, where, n["format"])
		case typ == "number" && n["format"] != "double":
			t.Errorf("version %d: %s is a number of format %v, want double", v, where, n["format"])
		case (enum || constant) && typ == "":
			t.Errorf("version %d: %s has values and no type", v, where)
		}
	})
}

// TestBounds: every string of each document has a maxLength and every
// array a maxItems, so that a client or a gateway knows how much any value
// may take. A string of enum or const values is bounded by them and needs
// none. The server is held to the bounds by TestLimits (requests: each is
// taken at its bound and refused past it) and by servicetest, which checks
// every answer and event the tests collect against the documents.
func TestBounds(t *testing.T) {
	texts, arrays := map[int]int{}, map[int]int{}
	eachObject(t, func(v int, where string, n map[string]any) {
		_, enum := n["enum"]
		_, constant := n["const"]
		_, maxLength := n["maxLength"]
		_, maxItems := n["maxItems"]
		switch n["type"] {
		case "string":
			texts[v]++
			if !maxLength && !enum && !constant {
				t.Errorf("version %d: %s is a string without maxLength", v, where)
			}
		case "array":
			arrays[v]++
			if !maxItems {
				t.Errorf("version %d: %s is an array without maxItems", v, where)
			}
		}
	})
	for _, v := range routes.Versions {
		if texts[v] < 50 || arrays[v] < 10 {
			t.Fatalf("version %d: %d strings and %d arrays: the walk finds too few", v, texts[v], arrays[v])
		}
	}
}

// TestPatternsCompile: every pattern of the documents compiles as a
// regular expression in Go (RE2), in ECMA-262 without flags (new
// RegExp(p), as a browser form validating from the documents builds it)
// and in Python. ECMA-262 and Python run where Node and Python are; Node
// is required where QUIRE_REQUIRE_NODE=1 (make test).
func TestPatternsCompile(t *testing.T) {
	seen := map[string]bool{}
	var patterns []string
	eachObject(t, func(_ int, _ string, n map[string]any) {
		if p, ok := n["pattern"].(string); ok && !seen[p] {
			seen[p] = true
			patterns = append(patterns, p)
		}
	})
	if len(patterns) < 5 {
		t.Fatalf("%d patterns in the documents: the walk finds none", len(patterns))
	}
	for _, p := range patterns {
		if _, err := regexp.Compile(p); err != nil {
			t.Errorf("Go: %v", err)
		}
	}
	list, err := json.Marshal(patterns)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ lang, tool, script string }{
		{"ECMA-262", "node", `let bad = 0; for (const p of JSON.parse(require("fs").readFileSync(0, "utf8"))) {
			try { new RegExp(p) } catch (e) { bad++; console.log(e.message) } }`},
		{"Python", "python3", "import json, re, sys\nfor p in json.load(sys.stdin):\n    try: re.compile(p)\n    except re.error as e: print(e, repr(p))"},
	} {
		if _, err := exec.LookPath(c.tool); err != nil {
			if c.tool == "node" && os.Getenv("QUIRE_REQUIRE_NODE") == "1" {
				t.Fatalf("QUIRE_REQUIRE_NODE=1, and node is not on PATH")
			}
			t.Logf("%s is not on PATH: the patterns are not compiled in %s here", c.tool, c.lang)
			continue
		}
		flag := map[string]string{"node": "-e", "python3": "-c"}[c.tool]
		cmd := exec.Command(c.tool, flag, c.script)
		cmd.Stdin = bytes.NewReader(list)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("%s does not compile every pattern (%v):\n%.3000s", c.lang, err, out)
		}
	}
}

// TestSpectral: Spectral's OpenAPI ruleset (spectral:oas, .spectral.yaml)
// finds nothing in either version's contract, not even a warning. It runs
// where npm installed Spectral (make deps); make test requires it.
func TestSpectral(t *testing.T) {
	root := filepath.Join("..", "..")
	spectral := filepath.Join(root, "node_modules", ".bin", "spectral")
	_, err := os.Stat(spectral)
	if _, node := exec.LookPath("node"); err == nil && node != nil {
		err = node
	}
	if err != nil {
		if os.Getenv("QUIRE_REQUIRE_NODE") == "1" {
			t.Fatalf("QUIRE_REQUIRE_NODE=1, and Spectral is not installed: %v", err)
		}
		t.Skipf("Spectral is not installed, or node is not on PATH (make deps installs it): %v", err)
	}
	args := []string{"lint", "--ruleset", filepath.Join(root, ".spectral.yaml"), "--fail-severity", "warn", "--format", "text"}
	for _, v := range routes.Versions {
		args = append(args, filepath.Join(contractsDir, fmt.Sprintf("v%d.json", v)))
	}
	if out, err := exec.Command(spectral, args...).CombinedOutput(); err != nil {
		t.Errorf("Spectral finds (%v):\n%s", err, out)
	}
}
