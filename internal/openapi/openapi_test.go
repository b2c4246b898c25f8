package openapi

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// load returns the contract, the document of every route.
func load(t *testing.T) *openapi3.T {
	t.Helper()
	b, err := Contract()
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, b)
}

func parse(t *testing.T, b []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestDocumentIsValid: the contract and each version's document are valid
// OpenAPI 3.1.
func TestDocumentIsValid(t *testing.T) {
	docs := map[string]*openapi3.T{"the contract": load(t)}
	for _, v := range routes.Versions {
		b, err := Document(v)
		if err != nil {
			t.Fatal(err)
		}
		docs["version "+strconv.Itoa(v)] = parse(t, b)
	}
	for name, doc := range docs {
		if !doc.IsOpenAPI31OrLater() {
			t.Errorf("%s: openapi %s, want 3.1", name, doc.OpenAPI)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestVersionDocuments: a version's document has each route its client
// calls once: the routes outside versioning, its resources under its
// prefix only, its own document; not another version's, nor the docs
// page's files.
func TestVersionDocuments(t *testing.T) {
	for _, v := range routes.Versions {
		b, err := Document(v)
		if err != nil {
			t.Fatal(err)
		}
		doc := parse(t, b)
		var got []string
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				got = append(got, method+" "+path)
			}
		}
		slices.Sort(got)
		prefix := routes.VersionPrefix(v)
		for i, key := range got {
			_, path, _ := strings.Cut(key, " ")
			resource := slices.ContainsFunc(routes.All(), func(r routes.Route) bool { return r.Versioned && r.Resource().Path == path })
			switch {
			case i > 0 && got[i-1] == key:
				t.Errorf("version %d: %s twice", v, key)
			case strings.HasPrefix(path, "/api/") && !strings.HasPrefix(path, prefix+"/"):
				t.Errorf("version %d: %s, of another version", v, key)
			case resource:
				t.Errorf("version %d: %s, a resource without the version's prefix", v, key)
			case key == "GET /docs/{file}":
				t.Errorf("version %d: the docs page's files", v)
			}
		}
		for _, want := range []string{"GET " + prefix + "/users/{id}", "POST /login", "GET " + prefix + routes.DocumentPath, "GET " + routes.DocumentPath} {
			if !slices.Contains(got, want) {
				t.Errorf("version %d: no %s", v, want)
			}
		}
		if doc.Info.Version != strconv.Itoa(v) || !strings.Contains(doc.Info.Description, rest.VendorType(v)) {
			t.Errorf("version %d: info %q, %q", v, doc.Info.Version, doc.Info.Description)
		}
	}
	if _, err := Document(0); err == nil {
		t.Error("Document(0) is a document")
	}
}

// TestOperationsAreTheRoutes: every route of the table has an operation in
// the document, and every operation is a route, public and with a request
// body as the table says.
func TestOperationsAreTheRoutes(t *testing.T) {
	doc := load(t)
	var got, want []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			got = append(got, method+" "+path)
		}
	}
	for _, r := range routes.All() {
		want = append(want, r.Key())
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("operations (-route table +document):\n%s", diff)
	}
	for _, r := range routes.All() {
		op := doc.Paths.Find(r.Path).GetOperation(r.Method)
		if public := op.Security != nil && len(*op.Security) == 0; public != (r.Access == routes.Public) {
			t.Errorf("%s: public in the document %v, access %s", r.Key(), public, r.Access)
		}
		if body := op.RequestBody != nil; body != r.Body {
			t.Errorf("%s: a request body in the document %v, in the route table %v", r.Key(), body, r.Body)
		}
	}
}

// TestTags: each operation is under its resource group's tag, which the
// document declares with the group's description, so that the docs page
// lists an operation with the others of its resource.
func TestTags(t *testing.T) {
	doc := load(t)
	declared := map[string]bool{}
	for _, tag := range doc.Tags {
		declared[tag.Name] = tag.Description != ""
	}
	for _, g := range routes.Groups() {
		if !declared[g.Name] {
			t.Errorf("no tag with a description for group %s", g.Name)
		}
	}
	for _, r := range routes.All() {
		op := doc.Paths.Find(r.Path).GetOperation(r.Method)
		if !cmp.Equal(op.Tags, []string{r.Group}) {
			t.Errorf("%s: tags %v, want [%s]", r.Key(), op.Tags, r.Group)
		}
	}
}

// TestVersionsHaveTheirSchemas: a versioned path answers its version's
// schema only; a path without a version offers every version's.
func TestVersionsHaveTheirSchemas(t *testing.T) {
	doc := load(t)
	ref := func(path, mediaType string) string {
		c := doc.Paths.Find(path).Get.Responses.Status(200).Value.Content.Get(mediaType)
		if c == nil {
			return ""
		}
		return c.Schema.Ref
	}
	for _, tc := range []struct{ path, mediaType, want string }{
		{"/users/{id}", "application/json", "#/components/schemas/UserV1"},
		{"/users/{id}", "application/vnd.quire.v1+json", "#/components/schemas/UserV1"},
		{"/users/{id}", "application/vnd.quire.v2+json", "#/components/schemas/UserV2"},
		{"/api/v1/users/{id}", "application/json", "#/components/schemas/UserV1"},
		{"/api/v1/users/{id}", "application/vnd.quire.v2+json", ""},
		{"/api/v2/users/{id}", "application/json", "#/components/schemas/UserV2"},
		{"/api/v2/products/{id}", "application/vnd.quire.v2+json", "#/components/schemas/ProductV2"},
	} {
		if got := ref(tc.path, tc.mediaType); got != tc.want {
			t.Errorf("GET %s %s: schema %q, want %q", tc.path, tc.mediaType, got, tc.want)
		}
	}
	v1 := doc.Components.Schemas["ProductV1"].Value.Properties["status"].Value
	if slices.ContainsFunc(v1.Enum, func(v any) bool { return v == "ARCHIVED" }) || strings.Contains(string(mustJSON(t, v1)), "ARCHIVED") {
		t.Errorf("v1's product status %v has ARCHIVED", v1.Enum)
	}
}

func mustJSON(t *testing.T, v interface{ MarshalJSON() ([]byte, error) }) []byte {
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConditionalRequests: a resource's GET documents its ETag and 304
// without a body, its PUT and DELETE take If-Match and If-None-Match, and
// every success of its PUT carries the new ETag. Routes outside versioning
// are not conditional, but for the docs page and its files, which carry
// ETags of their own.
func TestConditionalRequests(t *testing.T) {
	doc := load(t)
	for _, r := range routes.All() {
		op := doc.Paths.Find(r.Path).GetOperation(r.Method)
		headers := map[string]bool{}
		for _, p := range op.Parameters {
			if p.Value.In == "header" {
				headers[p.Value.Name] = true
			}
		}
		write := r.Method == "PUT" || r.Method == "DELETE"
		docs := strings.HasPrefix(r.Path, "/docs") || r.Path == "/favicon.ico" // the docs page, its files and its icon
		want := r.Versioned && (r.Method == "GET" || write) || docs
		purchase := r.Method == "POST" && (strings.HasSuffix(r.Path, "/pay") || strings.HasSuffix(r.Path, "/buy")) // If-Match: the price seen
		if headers["If-Match"] != (want || purchase) || headers["If-None-Match"] != want {
			t.Errorf("%s: If-Match %v, If-None-Match %v; want %v, %v", r.Key(), headers["If-Match"], headers["If-None-Match"], want || purchase, want)
		}
		if failed := op.Responses.Status(412) != nil; purchase && !failed {
			t.Errorf("%s takes If-Match but documents no 412", r.Key())
		}
		notModified := op.Responses.Status(304)
		if want := r.Versioned && r.Method == "GET" || docs; (notModified != nil) != want {
			t.Errorf("%s: 304 documented %v, want %v", r.Key(), notModified != nil, want)
		}
		if notModified != nil && (notModified.Value.Content != nil || notModified.Value.Headers["ETag"] == nil) {
			t.Errorf("%s: 304 has content %v, ETag %v; want none and one", r.Key(), notModified.Value.Content, notModified.Value.Headers["ETag"])
		}
		if !r.Versioned || (r.Method != "GET" && r.Method != "PUT") {
			continue
		}
		for status, resp := range op.Responses.Map() {
			if strings.HasPrefix(status, "2") && resp.Value.Headers["ETag"] == nil {
				t.Errorf("%s: %s has no ETag", r.Key(), status)
			}
		}
	}
}

// TestConfig: the configuration document is any JSON object, in every
// version's media type, answered gzip-compressed on request; its PUT takes
// application/json and answers 201 with a Location or 204, without a body.
func TestConfig(t *testing.T) {
	doc := load(t)
	get := doc.Paths.Find("/config").Get
	for _, mt := range []string{"application/json", "application/vnd.quire.v1+json", "application/vnd.quire.v2+json"} {
		c := get.Responses.Status(200).Value.Content.Get(mt)
		if c == nil || c.Schema.Ref != "#/components/schemas/Config" {
			t.Errorf("GET /config %s: %v, want the Config schema", mt, c)
		}
	}
	if get.Parameters.GetByInAndName("header", "Accept-Encoding") == nil {
		t.Error("GET /config takes no Accept-Encoding")
	}
	for _, h := range []string{"ETag", "Cache-Control", "Vary", "Content-Encoding"} {
		if get.Responses.Status(200).Value.Headers[h] == nil {
			t.Errorf("GET /config 200 has no %s", h)
		}
	}
	config := doc.Components.Schemas["Config"].Value
	if err := config.VisitJSON(map[string]any{"anything": []any{1.0, "two"}}); err != nil {
		t.Errorf("Config refuses an object: %v", err)
	}
	if err := config.VisitJSON([]any{}); err == nil {
		t.Error("Config takes an array")
	}

	put := doc.Paths.Find("/api/v2/admin/config").Put
	var types []string
	for mt := range put.RequestBody.Value.Content {
		types = append(types, mt)
	}
	if diff := cmp.Diff([]string{"application/json"}, types); diff != "" {
		t.Errorf("PUT /api/v2/admin/config body types (-want +got):\n%s", diff)
	}
	cors := corsHeaders()
	for status, headers := range map[int][]string{201: append([]string{"ETag", "Location", "Vary"}, cors...), 204: append([]string{"ETag", "Vary"}, cors...)} {
		resp := put.Responses.Status(status)
		if resp == nil {
			t.Errorf("PUT /admin/config answers no %d", status)
			continue
		}
		var got []string
		for h := range resp.Value.Headers {
			got = append(got, h)
		}
		slices.Sort(got)
		slices.Sort(headers)
		if diff := cmp.Diff(headers, got); diff != "" || resp.Value.Content != nil {
			t.Errorf("PUT /admin/config %d: content %v, headers (-want +got):\n%s", status, resp.Value.Content, diff)
		}
	}
}

// TestProblemTypes: the Problem schema names every problem type; every
// operation documents its 503 with a required Retry-After, and every write
// its 409, of type conflict or one of the operation's refusals, with a
// Retry-After that is optional when it has refusals (a refusal has none).
func TestProblemTypes(t *testing.T) {
	doc := load(t)
	var want []any
	for _, code := range rest.Codes() {
		want = append(want, rest.ProblemType(code))
	}
	if diff := cmp.Diff(want, doc.Components.Schemas["Problem"].Value.Properties["type"].Value.Enum); diff != "" {
		t.Errorf("Problem type enum (-want +got):\n%s", diff)
	}
	pay := doc.Paths.Find("/pay").Post.Responses.Status(409).Value
	for _, tc := range []struct {
		code string
		ok   bool
	}{{quire.ECONFLICT, true}, {quire.ECARTEMPTY, true}, {quire.EINSUFFICIENTFUNDS, true}, {quire.EEMAILTAKEN, false}} {
		p := map[string]any{"type": rest.ProblemType(tc.code), "title": rest.Title(tc.code), "status": 409.0}
		if err := pay.Content.Get(rest.ProblemMediaType).Schema.Value.VisitJSON(p, openapi3.EnableJSONSchema2020()); (err == nil) != tc.ok {
			t.Errorf("POST /pay 409 of type %s: %v, want ok %v", tc.code, err, tc.ok)
		}
	}
	for _, r := range routes.All() {
		op := doc.Paths.Find(r.Path).GetOperation(r.Method)
		if u := op.Responses.Status(503); u == nil || u.Value.Headers["Retry-After"] == nil || !u.Value.Headers["Retry-After"].Value.Required {
			t.Errorf("%s: 503 without a required Retry-After", r.Key())
		}
		// Login and refresh never answer 409: a refresh token used by two
		// requests at once is a reuse, 401.
		write := r.Method != "GET" && r.Key() != "POST /login" && r.Key() != "POST /tokens"
		c := op.Responses.Status(409)
		if (c != nil) != write {
			t.Errorf("%s: 409 documented %v, want %v", r.Key(), c != nil, write)
		}
		if c == nil {
			continue
		}
		types := c.Value.Content.Get(rest.ProblemMediaType).Schema.Value.AllOf[1].Value.Properties["type"].Value.Enum
		retry := c.Value.Headers["Retry-After"]
		if refusals := len(types) > 1; retry == nil || retry.Value.Required == refusals {
			t.Errorf("%s: 409 of %d types with Retry-After %+v, want it required only without refusals", r.Key(), len(types), retry)
		}
	}
}

// TestErrorStatuses: each operation lists the error statuses its route can
// answer, from what the route table says of it, each with the problem types
// of that status only; a 401 carries WWW-Authenticate, a 429 and a 503
// Retry-After.
func TestErrorStatuses(t *testing.T) {
	doc := load(t)
	errorsOf := func(op *openapi3.Operation) []int {
		var out []int
		for status := range op.Responses.Map() {
			if n, err := strconv.Atoi(status); err == nil && n >= 400 {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		route string
		want  []int
	}{
		{"GET /health", []int{400, 429, 503}},
		{"GET /docs/{file}", []int{400, 404, 412, 429, 503}},
		{"POST /login", []int{400, 401, 413, 415, 429, 503}},
		{"DELETE /session", []int{400, 401, 404, 409, 429, 503}},
		{"GET /api/v1/products", []int{400, 401, 406, 410, 412, 429, 503}},
		{"GET /config", []int{400, 401, 404, 406, 410, 412, 429, 503}},
		{"POST /users", []int{400, 406, 409, 410, 413, 415, 422, 429, 503}},
		{"PUT /api/v2/users/{id}", []int{400, 401, 403, 404, 406, 409, 410, 412, 413, 415, 429, 503}},
		{"POST /users/{id}/deposit", []int{400, 401, 403, 404, 406, 409, 410, 413, 415, 422, 429, 503}},
		{"POST /pay", []int{400, 401, 406, 409, 410, 412, 422, 429, 503}},
	} {
		method, path, _ := strings.Cut(tc.route, " ")
		if diff := cmp.Diff(tc.want, errorsOf(doc.Paths.Find(path).GetOperation(method))); diff != "" {
			t.Errorf("%s: error statuses (-want +got):\n%s", tc.route, diff)
		}
	}
	for _, r := range routes.All() {
		op := doc.Paths.Find(r.Path).GetOperation(r.Method)
		statuses := errorsOf(op)
		if !slices.ContainsFunc(statuses, func(s int) bool { return s < 500 }) {
			t.Errorf("%s lists no 4xx", r.Key())
		}
		for _, status := range statuses {
			resp := op.Responses.Status(status).Value
			mt := resp.Content.Get(rest.ProblemMediaType)
			if mt == nil || len(mt.Schema.Value.AllOf) != 2 {
				t.Errorf("%s %d: no problem of its own types", r.Key(), status)
				continue
			}
			for _, typ := range mt.Schema.Value.AllOf[1].Value.Properties["type"].Value.Enum {
				if code := strings.TrimPrefix(typ.(string), rest.ProblemTypeBase); rest.Status(code) != status {
					t.Errorf("%s %d: a problem of type %s, whose status is %d", r.Key(), status, typ, rest.Status(code))
				}
			}
			want := map[int]string{401: "WWW-Authenticate", 429: "Retry-After", 503: "Retry-After"}[status]
			if h := resp.Headers[want]; want != "" && (h == nil || !h.Value.Required) {
				t.Errorf("%s %d: %s %v, want it required", r.Key(), status, want, h)
			}
		}
	}
}

// TestResponseHeaders: every answer describes the CORS headers that a page
// of an allowed origin reads it with, and every success of a resource's
// route its Vary.
func TestResponseHeaders(t *testing.T) {
	doc := load(t)
	for _, r := range routes.All() {
		for status, resp := range doc.Paths.Find(r.Path).GetOperation(r.Method).Responses.Map() {
			for _, h := range corsHeaders() {
				if resp.Value.Headers[h] == nil {
					t.Errorf("%s %s: no %s", r.Key(), status, h)
				}
			}
			if r.Versioned && strings.HasPrefix(status, "2") && resp.Value.Headers["Vary"] == nil {
				t.Errorf("%s %s: no Vary", r.Key(), status)
			}
		}
	}
	expose := doc.Components.Headers["Access-Control-Expose-Headers"].Value.Schema.Value
	if err := expose.VisitJSON(strings.Join(rest.CORSExposeHeaders, ", "), openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("Access-Control-Expose-Headers: %v", err)
	}
}

// TestServer: the document's server is where the document is: paths
// resolve under the local server's root and under the stage's prefix.
func TestServer(t *testing.T) {
	doc := load(t)
	if len(doc.Servers) != 1 {
		t.Fatalf("servers %v, want one", doc.Servers)
	}
	server, err := url.Parse(doc.Servers[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	for document, want := range map[string]string{
		"http://localhost:8080/openapi.json":                                   "http://localhost:8080/",
		"https://abc123.execute-api.eu-west-1.amazonaws.com/prod/openapi.json": "https://abc123.execute-api.eu-west-1.amazonaws.com/prod/",
	} {
		base, _ := url.Parse(document)
		if got := base.ResolveReference(server).String(); got != want {
			t.Errorf("the server of %s is %s, want %s", document, got, want)
		}
	}
}
