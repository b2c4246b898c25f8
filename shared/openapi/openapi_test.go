package openapi

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/shared/routes"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	b, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestDocumentIsValid: the document is valid OpenAPI 3.1.
func TestDocumentIsValid(t *testing.T) {
	doc := load(t)
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestOperationsAreTheRoutes: every route of the table has an operation in
// the document, and every operation is a route.
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
