package docs

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/docs/markdown"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/openapi"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// read returns the page's text.
func read(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPublicRoutes: the list of public routes in authentication.md is
// the route table's, a version's prefix written /api/v<N>.
func TestPublicRoutes(t *testing.T) {
	page := read(t, "authentication.md")
	_, list, ok := strings.Cut(page, "- **Public routes**")
	if !ok {
		t.Fatal("authentication.md has no list of public routes")
	}
	list, _, _ = strings.Cut(list, "Every other route")
	var listed, public []string
	for _, m := range regexp.MustCompile("`((?:GET|POST|PUT|DELETE) /[^`]*)`").FindAllStringSubmatch(list, -1) {
		listed = append(listed, m[1])
	}
	prefix := regexp.MustCompile(`^/api/v\d+`)
	for _, r := range routes.All() {
		if r.Access == routes.Public {
			public = append(public, r.Method+" "+prefix.ReplaceAllString(r.Path, "/api/v<N>"))
		}
	}
	slices.Sort(listed)
	slices.Sort(public)
	if listed, public = slices.Compact(listed), slices.Compact(public); !slices.Equal(listed, public) {
		t.Errorf("authentication.md lists the public routes\n%v\nthe route table has\n%v", listed, public)
	}
}

// TestTokenLifetimes: the login answer authentication.md shows carries the
// default lifetimes: expires_in the access token's, refresh_expires_in the
// session's, in whole seconds left, less the second already begun.
func TestTokenLifetimes(t *testing.T) {
	page := read(t, "authentication.md")
	for field, want := range map[string]time.Duration{
		"expires_in":         login.DefaultLifetime,
		"refresh_expires_in": login.RefreshIdle - time.Second,
	} {
		m := regexp.MustCompile(`"` + field + `": (\d+)`).FindStringSubmatch(page)
		if m == nil {
			t.Errorf("authentication.md shows no %s", field)
			continue
		}
		if got, _ := strconv.Atoi(m[1]); got != int(want.Seconds()) {
			t.Errorf("authentication.md shows %s %d, the server sends %d", field, got, int(want.Seconds()))
		}
	}
}

// TestExposedHeaders: conventions.md names the headers a page may read,
// rest.CORSExposeHeaders, as the server sends them.
func TestExposedHeaders(t *testing.T) {
	want := "Access-Control-Expose-Headers: " + strings.Join(rest.CORSExposeHeaders, ", ")
	if !strings.Contains(read(t, "conventions.md"), "`"+want+"`") {
		t.Errorf("conventions.md does not say `%s`", want)
	}
}

// TestEventsTable: the table of events.md lists every type of event, in
// order, each with the members of its data as the documents' webhooks
// describe them (what a parenthesis says of a member aside), and, as its
// webhook's description does, the routes that publish it as the route
// table says (routes.Route.Events), and no other write route.
func TestEventsTable(t *testing.T) {
	doc, err := openapi.Document(routes.Versions[len(routes.Versions)-1])
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Webhooks   map[string]map[string]json.RawMessage
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Ref string `json:"$ref"`
				}
			}
		}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	schema := func(ref string) string { return strings.TrimPrefix(ref, "#/components/schemas/") }
	var types []string
	for _, row := range markdown.MustTable(t, "events.md", "type", "when", "`data`") {
		spans := markdown.CodeSpans(row.Cells[0])
		if len(spans) != 1 {
			t.Errorf("%s: the type is not one code span: %s", row, row.Cells[0])
			continue
		}
		typ := spans[0]
		types = append(types, typ)
		var post struct {
			Description string
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					}
				}
			} `json:"requestBody"`
		}
		if err := json.Unmarshal(d.Webhooks[typ]["post"], &post); err != nil {
			t.Errorf("%s: the documents have no webhook %s: %v", row, typ, err)
			continue
		}
		for _, r := range routes.All() {
			if r.Method == "GET" || r.Versioned && r.Version != 0 {
				continue
			}
			key := r.Resource().Key()
			named := slices.Contains(markdown.CodeSpans(row.Cells[1]), key)
			switch publishes := slices.Contains(r.Events, typ); {
			case publishes && !named:
				t.Errorf("%s: %s publishes %s, and the row does not name it", row, key, typ)
			case !publishes && named:
				t.Errorf("%s: the row names %s, which does not publish %s", row, key, typ)
			case publishes && !strings.Contains(post.Description, key):
				t.Errorf("the webhook %s does not name %s, which publishes it: %s", typ, key, post.Description)
			}
		}
		event := schema(post.RequestBody.Content["application/json"].Schema.Ref)
		data := d.Components.Schemas[schema(d.Components.Schemas[event].Properties["data"].Ref)]
		var want []string
		for name := range data.Properties {
			want = append(want, name)
		}
		said := markdown.CodeSpans(regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(row.Cells[2], ""))
		slices.Sort(want)
		slices.Sort(said)
		if !slices.Equal(said, want) {
			t.Errorf("%s: %s's data is %v, the documents say %v", row, typ, said, want)
		}
	}
	if !slices.Equal(types, quire.EventTypes) {
		t.Errorf("events.md lists the events %v, want %v", types, quire.EventTypes)
	}
}

// TestEventExamples: every example of an event, each webhook's in the
// documents and those events.md shows, is valid against its webhook's
// closed schema, in kin-openapi and in ajv (servicetest.CheckEvent), as a
// consumer's validator reads it.
func TestEventExamples(t *testing.T) {
	var examples []string
	for _, v := range routes.Versions {
		b, err := openapi.Document(v)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Webhooks map[string]struct {
				Post struct {
					RequestBody struct {
						Content map[string]struct{ Example json.RawMessage }
					}
				}
			}
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for name, hook := range doc.Webhooks {
			ex := hook.Post.RequestBody.Content["application/json"].Example
			if len(ex) == 0 {
				t.Errorf("version %d: the webhook %s has no example", v, name)
			}
			examples = append(examples, string(ex))
		}
	}
	for _, block := range strings.Split(read(t, "events.md"), "```json\n")[1:] {
		if ex, _, _ := strings.Cut(block, "```"); strings.Contains(ex, `"specversion"`) {
			examples = append(examples, ex)
		}
	}
	if len(examples) < 2*len(quire.EventTypes)+1 {
		t.Fatalf("%d examples of events, want one per webhook of each version's document and events.md's", len(examples))
	}
	for _, ex := range examples {
		if err := servicetest.CheckEvent([]byte(ex)); err != nil {
			t.Error(err)
		}
	}
}

// pythonCheck validates, with python-jsonschema, each webhook's example of
// the document on stdin and every balance from 0.00 to 99.99 of a
// user.funded event, and prints what it refuses.
const pythonCheck = `
import json, sys, jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
doc = json.load(sys.stdin)
reg = Registry().with_resource("urn:doc", Resource(contents=doc, specification=DRAFT202012))
def validator(ref):
    return jsonschema.Draft202012Validator({"$ref": "urn:doc" + ref}, registry=reg, format_checker=jsonschema.FormatChecker())
for name, hook in doc["webhooks"].items():
    c = hook["post"]["requestBody"]["content"]["application/json"]
    for e in validator(c["schema"]["$ref"]).iter_errors(c["example"]):
        print(name, e.message)
funded = validator("#/components/schemas/UserFundedData")
for cents in range(10000):
    for e in funded.iter_errors(json.loads('{"user_id": 2, "amount": 10.00, "balance": %d.%02d}' % divmod(cents, 100))):
        print("balance", e.message)
`

// TestAmountsInPython: python-jsonschema, the validator a Python consumer
// reads the documents with, takes every example event and every amount
// from 0.00 to 99.99, as ajv and kin-openapi do (TestEventExamples,
// servicetest.TestAjv). It skips where Python or its jsonschema is not
// installed: nothing else needs them.
func TestAmountsInPython(t *testing.T) {
	if err := exec.Command("python3", "-c", "import jsonschema, referencing").Run(); err != nil {
		t.Skipf("python3 with jsonschema 4.18 or later is not installed (%v): the amounts are checked in ajv and kin-openapi alone", err)
	}
	for _, v := range routes.Versions {
		doc, err := openapi.Document(v)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("python3", "-W", "ignore", "-c", pythonCheck)
		cmd.Stdin = bytes.NewReader(doc)
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("version %d: python-jsonschema refuses (%v):\n%.2000s", v, err, out)
		}
	}
}
