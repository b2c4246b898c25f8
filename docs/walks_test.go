package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/testing/quiretest"
)

// walkRoutes are the routes whose walks the architecture page gives, each
// by its sample event (events/<group>/<name>.json).
var walkRoutes = []struct{ route, event string }{
	{"POST /pay", "orders/pay.json"},
	{"POST /login", "auth/login.json"},
	{"POST /users/{id}/deposit", "users/deposit.json"},
	{"POST /cart", "carts/add.json"},
	{"PUT /admin/products/{id}", "catalog/admin-replace-product.json"},
	{"GET /api/v2/products/{id}", "catalog/product-v2.json"},
}

// maxReentries bounds the re-entries of each walk into files other than
// leaves: a route reads in one direction, down from the adapter to the
// SDK's call and back, and comes back to a file it left (a store's file
// for a second read, the request for its answer) a few times at most.
const maxReentries = 10

// maxFiles bounds the files other than leaves that each walk enters: what
// a reader follows to change a route, the value types aside.
const maxFiles = 20

// entry is one call into a project function, as the recorder in
// testdata/walk writes it.
type entry struct {
	File, Caller      string
	Goroutine, Parent int
}

// walkOf is what a request did, measured: the project files it entered,
// and its re-entries, calls from one file into another it had entered
// before, in all and but into leaf files.
type walkOf struct {
	files              []string
	nonLeafFiles       int // of files, those other than leaves
	reentries, nonLeaf int
	back               map[string]int // the re-entries not into a leaf, by "caller -> file"
	trace              []string       // every call from one file into another, in order
}

// TestWalks measures, at runtime, what a request reads. It copies the tree,
// adds to every function of every project file (internal/ and functions/,
// tests aside) a call that records the function's file and its caller's,
// and sends each of walkRoutes' sample events through its function's Lambda
// handler, built as deployed, on DynamoDB Local holding the demo data. From
// the adapter to the SDK's call and back, it counts the project files
// entered, and the re-entries: calls from one file into a file the request
// had entered before (a helper called again, a callback whose body is in
// the caller's file), in all and but into leaf files, those that import no
// other project package (money, ids, the errors). A goroutine's calls count
// where the goroutine was started. The walks in
// docs/architecture.md and the figures of the README's "Reading a route"
// are this test's output; `go test ./docs -run TestWalks -update` writes
// them.
func TestWalks(t *testing.T) {
	if os.Getenv("DYNAMODB_ENDPOINT") == "" {
		if os.Getenv("QUIRE_REQUIRE_DYNAMODB_LOCAL") == "1" {
			t.Fatal("TestWalks needs DynamoDB Local: run it under cmd/ddblocal, as make test does")
		}
		t.Skip("TestWalks needs DynamoDB Local (DYNAMODB_ENDPOINT): make test runs it")
	}
	if testing.Short() {
		t.Skip("TestWalks builds an instrumented copy of the tree")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "quire") // the recorder knows project files by quire/internal/...
	leaves := instrumentedCopy(t, root, dir)
	var events []string
	for _, w := range walkRoutes {
		events = append(events, w.event)
	}
	names, _ := json.Marshal(events)
	out := filepath.Join(dir, "walks.json")
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestWalk$", "./events")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WALK_EVENTS="+string(names), "WALK_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the instrumented copy's walk: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var recorded map[string][]entry
	if err := json.Unmarshal(b, &recorded); err != nil {
		t.Fatal(err)
	}
	walks := map[string]walkOf{}
	for _, w := range walkRoutes {
		m := measure(recorded[w.event], leaves)
		walks[w.route] = m
		if m.nonLeafFiles > maxFiles {
			t.Errorf("%s enters %d files other than leaves, more than %d", w.route, m.nonLeafFiles, maxFiles)
		}
		if m.nonLeaf > maxReentries {
			t.Errorf("%s re-enters a file other than a leaf %d times, more than %d: %v", w.route, m.nonLeaf, maxReentries, m.back)
		}
		t.Logf("%s: %d files, %d re-entries, %d not into a leaf: %v", w.route, len(m.files), m.reentries, m.nonLeaf, m.back)
		if os.Getenv("WALK_TRACE") == w.route {
			t.Logf("the calls of %s from one file into another:\n%s", w.route, strings.Join(m.trace, "\n"))
		}
	}
	section := walksSection(walks)
	page := filepath.Join(root, "docs", "architecture.md")
	readme := filepath.Join(root, "README.md")
	pay := walks["POST /pay"]
	reading := fmt.Sprintf("`POST /pay` enters %d project files from the Lambda adapter to DynamoDB's SDK and back, "+
		"%d of them other than leaves (value types such as money and ids, which import no other project package), "+
		"and re-enters a file it had entered %d times, %d of them a file other than a leaf",
		len(pay.files), pay.nonLeafFiles, pay.reentries, pay.nonLeaf)
	if quiretest.Updating() {
		replaceBetween(t, page, walksStart, walksEnd, section)
		replaceBetween(t, readme, readingStart, readingEnd, reading)
		return
	}
	if got := between(t, page, walksStart, walksEnd); got != section {
		t.Errorf("docs/architecture.md's walks are not what the code does; `go test ./docs -run TestWalks -update` "+
			"writes them. Measured:\n%s", section)
	}
	if got := between(t, readme, readingStart, readingEnd); got != reading {
		t.Errorf("README.md's \"Reading a route\" says %q; measured: %q", got, reading)
	}
}

// The markers around what TestWalks writes.
const (
	walksStart   = "<!-- walks: written by TestWalks (docs/walks_test.go) -->\n"
	walksEnd     = "<!-- end of walks -->"
	readingStart = "<!-- reading: written by TestWalks (docs/walks_test.go) -->"
	readingEnd   = "<!-- end of reading -->"
)

// walksSection is the table of the measured walks.
func walksSection(walks map[string]walkOf) string {
	var b strings.Builder
	b.WriteString("| route | sample event | files entered | of them, not leaves | re-entries | of them, not into a leaf | the files, by folder |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	for _, w := range walkRoutes {
		m := walks[w.route]
		byDir := map[string][]string{}
		var dirs []string
		for _, f := range m.files {
			d, name := filepath.Split(f)
			d = strings.TrimSuffix(strings.TrimPrefix(d, "internal/"), "/")
			if byDir[d] == nil {
				dirs = append(dirs, d)
			}
			byDir[d] = append(byDir[d], strings.TrimSuffix(name, ".go"))
		}
		slices.Sort(dirs)
		var parts []string
		for _, d := range dirs {
			parts = append(parts, fmt.Sprintf("`%s/` %s", d, strings.Join(byDir[d], ", ")))
		}
		fmt.Fprintf(&b, "| `%s` | `events/%s` | %d | %d | %d | %d | %s |\n", w.route, w.event, len(m.files), m.nonLeafFiles, m.reentries, m.nonLeaf, strings.Join(parts, "; "))
	}
	return b.String()
}

// measure walks the entries of one request, in order: each goroutine's in its order,
// a goroutine's calls at the point of its parent's where it started (the
// parent waits for it, as quire.Concurrently does), the goroutines a parent
// started in the order they were created.
func measure(entries []entry, leaves map[string]bool) walkOf {
	byG := map[int][]int{} // entries' indexes, by goroutine
	var order []int        // goroutines, by first entry
	for i, e := range entries {
		if byG[e.Goroutine] == nil {
			order = append(order, e.Goroutine)
		}
		byG[e.Goroutine] = append(byG[e.Goroutine], i)
	}
	children := map[int][]int{}
	var roots []int
	for _, g := range order {
		if p := entries[byG[g][0]].Parent; p != 0 && byG[p] != nil {
			children[p] = append(children[p], g)
		} else {
			roots = append(roots, g)
		}
	}
	var seq []int
	var flatten func(g int)
	flatten = func(g int) {
		kids := slices.Clone(children[g])
		slices.Sort(kids)
		for _, i := range byG[g] {
			for len(kids) > 0 && byG[kids[0]][0] < i {
				flatten(kids[0])
				kids = kids[1:]
			}
			seq = append(seq, i)
		}
		for _, k := range kids {
			flatten(k)
		}
	}
	for _, g := range roots {
		flatten(g)
	}
	w := walkOf{back: map[string]int{}}
	entered := map[string]bool{}
	for _, i := range seq {
		e := entries[i]
		if e.File == e.Caller {
			continue // a call within a file
		}
		w.trace = append(w.trace, e.Caller+" -> "+e.File)
		if entered[e.File] {
			w.reentries++
			if !leaves[e.File] {
				w.nonLeaf++
				w.back[e.Caller+" -> "+e.File]++
			}
		}
		entered[e.File] = true
	}
	for f := range entered {
		w.files = append(w.files, f)
		if !leaves[f] {
			w.nonLeafFiles++
		}
	}
	slices.Sort(w.files)
	return w
}

// instrumentedCopy copies the tree at root to dir, the project files with a
// call to the recorder at the start of every function, and returns the leaf
// files: the project files that import no other project package.
func instrumentedCopy(t *testing.T, root, dir string) map[string]bool {
	t.Helper()
	const module = "github.com/quireapi/quire"
	leaves := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		top, _, _ := strings.Cut(rel, string(filepath.Separator))
		if d.IsDir() {
			if rel != "." && !slices.Contains([]string{"internal", "functions", "events"}, top) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if rel != "go.mod" && rel != "go.sum" && top == rel {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") && (top == "internal" || top == "functions") {
			var imports bool
			if src, imports, err = instrument(rel, src, module); err != nil {
				return err
			}
			if !imports {
				leaves[filepath.ToSlash(rel)] = true
			}
		}
		return os.WriteFile(filepath.Join(dir, rel), src, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"recorder.go": "internal/walk/walk.go", "driver_test.go": "events/walk_test.go"} {
		b, err := os.ReadFile(filepath.Join(root, "docs", "testdata", "walk", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return leaves
}

// instrument returns the file rel with a call to the recorder at the start
// of every function body, function literals included, and whether it
// imports another project package.
func instrument(rel string, src []byte, module string) ([]byte, bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, false, err
	}
	imports := false
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, module+"/") {
			imports = true
		}
	}
	call := fmt.Sprintf("walkrecorder.Enter(%q);", filepath.ToSlash(rel))
	var at []int // offsets just after each body's {
	for _, d := range f.Decls {
		collectBodies(d, fset, &at)
	}
	slices.Sort(at)
	var b bytes.Buffer
	pkgEnd := fset.Position(f.Name.End()).Offset
	b.Write(src[:pkgEnd])
	b.WriteString("; import walkrecorder \"" + module + "/internal/walk\"")
	last := pkgEnd
	for _, o := range at {
		b.Write(src[last:o])
		b.WriteString(call)
		last = o
	}
	b.Write(src[last:])
	b.WriteString("\nvar _ = walkrecorder.Enter\n")
	return b.Bytes(), imports, nil
}

// collectBodies adds to at the offset just inside the { of each function
// body in n.
func collectBodies(n ast.Node, fset *token.FileSet, at *[]int) {
	ast.Inspect(n, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch f := n.(type) {
		case *ast.FuncDecl:
			body = f.Body
		case *ast.FuncLit:
			body = f.Body
		}
		if body != nil {
			*at = append(*at, fset.Position(body.Lbrace).Offset+1)
		}
		return true
	})
}

// between returns what the file path holds between the markers start and
// end.
func between(t *testing.T, path, start, end string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), start)
	got, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("%s has no %q ... %q", path, start, end)
	}
	return got
}

// replaceBetween writes with between the markers start and end of the file
// path.
func replaceBetween(t *testing.T, path, start, end, with string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := between(t, path, start, end)
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), start+old+end, start+with+end, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
