package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/quiretest"
)

// oasdiffTool is the breaking-change checker, pinned (see quiretest.Tool).
const oasdiffTool = "github.com/oasdiff/oasdiff@v1.37.0"

// oasdiffCommand returns the command that runs oasdiff with args, as
// make builds it (see quiretest.Tool).
func oasdiffCommand(args ...string) *exec.Cmd {
	return quiretest.Tool(filepath.Join("..", ".."), oasdiffTool, args...)
}

// contractsDir holds each released version's contract, contracts/v<N>.json.
var contractsDir = filepath.Join("..", "..", "contracts")

// indented is a document as the contracts keep it: indented, one member a
// line, so that a change to a contract reads well in review.
func indented(t *testing.T, doc []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// breaking are the changes oasdiff reports as information that break a
// client of Quire all the same, as its conventions say: they fail the guard
// like oasdiff's own errors and warnings.
var breaking = []string{
	// A removed field, optional or not: a client may read it.
	"response-optional-property-removed",
	// A client may read a header Quire sent, such as Link or Deprecation.
	"optional-response-header-removed",
	// Generated clients name their methods after operation ids.
	"api-operation-id-removed",
}

// correction lets `make contract CORRECTION=1` (-update -correction)
// commit a correction: the document now says a rule on requests that the
// server applied already, so that no request it calls invalid now was
// taken before. The changes of corrections, which oasdiff calls breaking
// for a client the server had served, pass the guard then, and only then;
// servicetest holds every request the tests send to the documents, in
// both directions, and contracts/CHANGELOG.md says what was corrected.
var correction = flag.Bool("correction", false, "with -update, commit a correction of the requests' rules (see contracts/CHANGELOG.md)")

// corrections are the changes a correction may make: requests' rules
// said where the documents were silent.
var corrections = []string{
	"request-property-pattern-added", "request-parameter-pattern-added",
	"request-property-became-required", "request-parameter-became-required",
	"request-property-type-changed", // a type said where an enum said only the values
	"request-property-max-length-set", "request-parameter-max-length-set",
}

// security lets `make contract SECURITY=1` (-update -security) commit a
// security fix: a version's operation now refuses what it took, and
// answers the refusal with a problem of its own, because taking it was
// the hole (a token alone deleting its account). The fix goes into every
// version that has the hole, as no client may keep relying on it; the
// changes it makes, which oasdiff calls breaking, pass the guard then,
// and only then, and contracts/CHANGELOG.md says what was fixed and why.
var security = flag.Bool("security", false, "with -update, commit a security fix of a version (see contracts/CHANGELOG.md)")

// clarification lets `make contract CLARIFICATION=1` (-update
// -clarification) commit a clarification: the document says what the
// answers and events were all along in a way more tools read alike (an
// amount's two decimals in words, where stock validators computed
// multipleOf 0.01 in binary floating point and refused 34.48; a pattern
// that names only the characters of the Basic Multilingual Plane, which
// ECMA-262 compiles without flags, the others said in words). No answer
// changes, no request the server refused is taken, and servicetest holds
// every request and answer the tests send to the document; the changes of
// clarifications, which oasdiff calls breaking,
// pass the guard then, and only then, and contracts/CHANGELOG.md says
// what was clarified.
var clarification = flag.Bool("clarification", false, "with -update, commit a clarification of what answers and events are (see contracts/CHANGELOG.md)")

// clarifications are the changes a clarification may make.
var clarifications = []string{"response-property-multiple-of-unset", "response-property-pattern-changed", "request-property-pattern-changed"}

// fixes are the changes a security fix may make: a new problem type of a
// refusal, which, as a refusal no retry fixes, carries no Retry-After.
var fixes = []string{"response-property-enum-value-added", "response-header-became-optional"}

// oasdiff returns what oasdiff finds breaking from the contract base to
// the document revision (its errors and warnings, and the changes listed
// in breaking), or "" when nothing breaks a client of base.
func oasdiff(t *testing.T, base, revision []byte) string {
	t.Helper()
	dir := t.TempDir()
	var levels strings.Builder
	for _, rule := range breaking {
		levels.WriteString(rule + " err\n")
	}
	if *correction && quiretest.Updating() {
		for _, rule := range corrections {
			levels.WriteString(rule + " info\n")
		}
	}
	if *security && quiretest.Updating() {
		for _, rule := range fixes {
			levels.WriteString(rule + " info\n")
		}
	}
	if *clarification && quiretest.Updating() {
		for _, rule := range clarifications {
			levels.WriteString(rule + " info\n")
		}
	}
	files := []string{filepath.Join(dir, "contract.json"), filepath.Join(dir, "document.json"), filepath.Join(dir, "levels.txt")}
	for i, b := range [][]byte{clarified(t, base, revision), eventsAsAnswers(t, revision), []byte(levels.String())} {
		if err := os.WriteFile(files[i], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := oasdiffCommand("breaking", files[0], files[1], "--fail-on", "WARN", "--severity-levels", files[2], "--flatten-allof")
	out, err := cmd.CombinedOutput()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok && exit.ExitCode() == 1 {
		return strings.ReplaceAll(string(out), dir+string(filepath.Separator), "")
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return ""
}

// clarified returns base, as eventsAsAnswers does, with the clarifications
// revision makes taken in already, so that oasdiff does not call them
// breaking: they say what every value was all along, for generators of
// clients (a Go client's float64 and int64, a Java client's long). A
// schema that had no format takes the format revision gives it where its
// type is the same; one that had enum or const values and no type takes
// the type revision gives it where every value is of that type. A format
// or a type that changes still fails the guard.
func clarified(t *testing.T, base, revision []byte) []byte {
	t.Helper()
	var b, r any
	if err := json.Unmarshal(base, &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(revision, &r); err != nil {
		t.Fatal(err)
	}
	var walk func(b, r any)
	walk = func(b, r any) {
		switch b := b.(type) {
		case map[string]any:
			r, _ := r.(map[string]any)
			if r == nil {
				return
			}
			if _, had := b["format"]; !had && r["format"] != nil && b["type"] != nil && fmt.Sprint(b["type"]) == fmt.Sprint(r["type"]) {
				b["format"] = r["format"]
			}
			if typ, ok := r["type"].(string); ok && b["type"] == nil && (b["enum"] != nil || b["const"] != nil) && allOf(typ, b) {
				b["type"] = typ
			}
			for k, v := range b {
				walk(v, r[k])
			}
		case []any:
			r, _ := r.([]any)
			for i := range min(len(b), len(r)) {
				walk(b[i], r[i])
			}
		}
	}
	walk(b, r)
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return eventsAsAnswers(t, out)
}

// allOf reports whether every enum and const value of schema s is of the
// JSON type typ.
func allOf(typ string, s map[string]any) bool {
	values, _ := s["enum"].([]any)
	if c, ok := s["const"]; ok {
		values = append(values, c)
	}
	for _, v := range values {
		var is bool
		switch v := v.(type) {
		case string:
			is = typ == "string"
		case bool:
			is = typ == "boolean"
		case float64:
			is = typ == "number" || typ == "integer" && v == float64(int64(v))
		}
		if !is {
			return false
		}
	}
	return true
}

// eventsAsAnswers returns doc with each of its webhooks, an event Quire
// sends, as the answer of an operation GET /webhooks/<type> instead. oasdiff
// compares webhooks as requests a server takes, for which a field removed
// or a new enum value breaks nothing; for an event, as for an answer, each
// breaks its consumers, and so the guard compares them as answers. A
// version of an event being retired keeps its deprecation and sunset, so
// that it may leave the document after its sunset, and not before.
func eventsAsAnswers(t *testing.T, doc []byte) []byte {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	hooks, _ := d["webhooks"].(map[string]any)
	paths, _ := d["paths"].(map[string]any)
	for name, hook := range hooks {
		post := hook.(map[string]any)["post"].(map[string]any)
		content := post["requestBody"].(map[string]any)["content"]
		get := map[string]any{
			"operationId": post["operationId"], "security": []any{},
			"responses": map[string]any{"200": map[string]any{"description": "the event", "content": content}},
		}
		for _, k := range []string{"deprecated", "x-sunset"} {
			if v, ok := post[k]; ok {
				get[k] = v
			}
		}
		paths["/webhooks/"+name] = map[string]any{"get": get}
	}
	delete(d, "webhooks")
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReleasedContracts: each version's document is its committed
// contract, contracts/v<N>.json. A change that breaks a client of the
// contract (oasdiff's errors: a removed field, a new enum value of an
// answer, a new required parameter...) fails, with oasdiff's findings: it
// takes a new version. Any other change fails until `make contract` (this
// test with -update) commits it, so that it shows in review.
func TestReleasedContracts(t *testing.T) {
	for _, v := range routes.Versions {
		doc, err := Document(v)
		if err != nil {
			t.Fatal(err)
		}
		got := indented(t, doc)
		file := filepath.Join(contractsDir, fmt.Sprintf("v%d.json", v))
		released, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) && quiretest.Updating() {
			released = got
		} else if err != nil {
			t.Fatalf("version %d has no contract (%v): `make contract` writes it", v, err)
		}
		if findings := oasdiff(t, released, got); findings != "" {
			t.Errorf("the document of version %d breaks its released contract, %s: a breaking change takes a new "+
				"version. oasdiff finds:\n%s", v, file, findings)
			continue
		}
		switch {
		case quiretest.Updating():
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
		case !bytes.Equal(released, got):
			t.Errorf("the document of version %d differs from %s, without breaking it: `make contract` commits the "+
				"change (then git diff shows it), and contracts/CHANGELOG.md says what changed", v, file)
		}
	}
}

// TestGuardRefusesBreakingChanges: the two changes the conventions name as
// breaking, a removed field (first_name of a v1 user, or its optional
// profile) and a new enum value of an answer (ARCHIVED, a v1 product's
// status), fail the guard, and so do they in an event; the unchanged
// document passes it.
func TestGuardRefusesBreakingChanges(t *testing.T) {
	doc, err := Document(1)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(change func(schemas map[string]any)) []byte {
		var d map[string]any
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		change(d["components"].(map[string]any)["schemas"].(map[string]any))
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, tc := range map[string]struct {
		change func(schemas map[string]any)
		rule   string
	}{
		"first_name removed": {func(s map[string]any) {
			user := s["UserV1"].(map[string]any)
			delete(user["properties"].(map[string]any), "first_name")
			user["required"] = slices.DeleteFunc(user["required"].([]any), func(n any) bool { return n == "first_name" })
		}, "response-required-property-removed"},
		"profile removed": {func(s map[string]any) {
			delete(s["UserV1"].(map[string]any)["properties"].(map[string]any), "profile")
		}, "response-optional-property-removed"},
		"ARCHIVED added": {func(s map[string]any) {
			status := s["ProductV1"].(map[string]any)["properties"].(map[string]any)["status"].(map[string]any)
			status["enum"] = append(status["enum"].([]any), "ARCHIVED")
		}, "response-property-enum-value-added"},
		// An event breaks its consumers as an answer does.
		"order_id removed from order.placed": {func(s map[string]any) {
			data := s["OrderPlacedData"].(map[string]any)
			delete(data["properties"].(map[string]any), "order_id")
			data["required"] = slices.DeleteFunc(data["required"].([]any), func(n any) bool { return n == "order_id" })
		}, "response-required-property-removed"},
		"a new status in product.changed": {func(s map[string]any) {
			status := s["ProductChangedData"].(map[string]any)["properties"].(map[string]any)["status"].(map[string]any)
			status["enum"] = append(status["enum"].([]any), "OUT_OF_PRINT")
		}, "response-property-enum-value-added"},
		// A rule on requests is a correction only with -correction.
		"a pattern on a login's password": {func(s map[string]any) {
			s["Credentials"].(map[string]any)["properties"].(map[string]any)["password"].(map[string]any)["pattern"] = "^[A-Z]"
		}, "request-property-pattern-added"},
	} {
		if findings := oasdiff(t, doc, edit(tc.change)); !strings.Contains(findings, tc.rule) {
			t.Errorf("%s: the guard finds %q, want %s", name, findings, tc.rule)
		}
	}
	if findings := oasdiff(t, doc, doc); findings != "" {
		t.Errorf("the unchanged document breaks itself: %s", findings)
	}
	// A format or an enum's type said where there was none is a
	// clarification; a format changed is not.
	var unclarify func(v any)
	unclarify = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["enum"] != nil || v["const"] != nil {
				delete(v, "type")
			}
			delete(v, "format")
			for _, e := range v {
				unclarify(e)
			}
		case []any:
			for _, e := range v {
				unclarify(e)
			}
		}
	}
	if findings := oasdiff(t, edit(func(s map[string]any) { unclarify(s) }), doc); findings != "" {
		t.Errorf("formats and types said where there were none break the contract:\n%s", findings)
	}
	floats := edit(func(s map[string]any) {
		s["Deposit"].(map[string]any)["properties"].(map[string]any)["amount"].(map[string]any)["format"] = "float"
	})
	if findings := oasdiff(t, doc, floats); !strings.Contains(findings, "request-property-type-changed") {
		t.Errorf("a deposit amount's format changed from double to float: the guard finds %q", findings)
	}
}

// TestDeprecatingAVersion: declaring a version's retirement marks every
// operation of its resources deprecated and dates it in the description,
// leaves the other version alone, and breaks no client of its contract:
// `make contract` commits it.
func TestDeprecatingAVersion(t *testing.T) {
	released, err := Document(1)
	if err != nil {
		t.Fatal(err)
	}
	routes.Retirements[1] = routes.Retirement{
		Deprecated: time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC), Sunset: time.Date(2027, 7, 5, 0, 0, 0, 0, time.UTC),
		Changelog: "https://example.com/quire/contracts/CHANGELOG.md#v1",
	}
	t.Cleanup(func() { delete(routes.Retirements, 1) })
	for _, v := range routes.Versions {
		b, err := build(v, func(r routes.Route) bool { return Describes(v, r) }, "../..")
		if err != nil {
			t.Fatal(err)
		}
		doc := parse(t, b)
		for path, item := range doc.Paths.Map() {
			resource := strings.HasPrefix(path, "/api/") && !strings.HasSuffix(path, routes.DocumentPath)
			for method, op := range item.Operations() {
				if op.Deprecated != (v == 1 && resource) {
					t.Errorf("version %d: %s %s deprecated %v", v, method, path, op.Deprecated)
				}
			}
		}
		dated := strings.Contains(doc.Info.Description, "deprecated from 2027-01-04 and gone from 2027-07-05")
		if dated != (v == 1) {
			t.Errorf("version %d: the description %q dates the retirement: %v", v, doc.Info.Description, dated)
		}
		if v == 1 {
			if findings := oasdiff(t, released, b); findings != "" {
				t.Errorf("deprecating version 1 breaks its contract:\n%s", findings)
			}
		}
	}
}

// TestEventVersions: a breaking change to an event ships as a new version
// beside the old one, which the guard lets pass; the old one is then
// deprecated with its dates, which breaks nothing, and leaves the document
// after its sunset, not before; a version never deprecated cannot leave.
func TestEventVersions(t *testing.T) {
	released, err := Document(1)
	if err != nil {
		t.Fatal(err)
	}
	v1 := quire.EventSchema(quire.EventOrderPlaced, 1)
	laterVersions[quire.EventOrderPlaced] = []event{{data: open(schema{"order": ref("ID"), "user_id": ref("ID")}),
		example: schema{"order": 246129464436429, "user_id": 2}}}
	t.Cleanup(func() { delete(laterVersions, quire.EventOrderPlaced); delete(retiredEvents, v1) })
	document := func() []byte {
		b, err := build(1, func(r routes.Route) bool { return Describes(1, r) }, "../..")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	without := func(doc []byte, hook string) []byte {
		var d map[string]any
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		delete(d["webhooks"].(map[string]any), hook)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	beside := document()
	hooks := parse(t, beside).Webhooks
	if hooks["order.placed.v2"] == nil || hooks["order.placed"] == nil || hooks["order.placed"].Post.Deprecated {
		t.Fatalf("version 2 of order.placed: webhooks %v", slices.Sorted(maps.Keys(hooks)))
	}
	if findings := oasdiff(t, released, beside); findings != "" {
		t.Errorf("a new version of an event beside the old one breaks the contract:\n%s", findings)
	}
	if findings := oasdiff(t, beside, without(beside, "order.placed")); !strings.Contains(findings, "api-path-removed-without-deprecation") {
		t.Errorf("version 1 left without a deprecation: the guard finds %q", findings)
	}

	retiredEvents[v1] = routes.Retirement{Deprecated: time.Now().AddDate(0, 0, -1), Sunset: time.Now().AddDate(0, 6, 0),
		Changelog: "https://example.com/quire/contracts/CHANGELOG.md#events"}
	deprecated := document()
	if post := parse(t, deprecated).Webhooks["order.placed"].Post; !post.Deprecated || post.Extensions["x-sunset"] == nil {
		t.Errorf("version 1, being retired: deprecated %v, sunset %v", post.Deprecated, post.Extensions["x-sunset"])
	}
	if findings := oasdiff(t, beside, deprecated); findings != "" {
		t.Errorf("deprecating version 1 of an event breaks the contract:\n%s", findings)
	}
	if findings := oasdiff(t, deprecated, without(deprecated, "order.placed")); !strings.Contains(findings, "api-path-removed-before-sunset") {
		t.Errorf("version 1 left before its sunset: the guard finds %q", findings)
	}

	retiredEvents[v1] = routes.Retirement{Deprecated: time.Now().AddDate(0, -7, 0), Sunset: time.Now().AddDate(0, 0, -1)}
	gone := document()
	if findings := oasdiff(t, gone, without(gone, "order.placed")); findings != "" {
		t.Errorf("version 1 left after its sunset: the guard finds\n%s", findings)
	}
}
