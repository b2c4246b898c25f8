package openapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/shared/openapi"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/service/servicetest"
)

// TestEdges: through the real handlers, every query parameter of every
// operation sent twice is 400 naming it; each answer is the document's
// (servicetest checks it).
func TestEdges(t *testing.T) {
	b, err := openapi.Contract()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	api := servicetest.New(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	// A value of each query parameter that the operation takes once.
	valid := map[string]string{"limit": "1", "cursor": "NDI", "role": "admin", "embed": "profile"}
	seen := map[string]bool{}
	for _, template := range doc.Paths.InMatchingOrder() {
		path := strings.NewReplacer("{id}", "1", "{product_id}", "1", "{file}", "quire.js").Replace(template)
		for method, op := range doc.Paths.Find(template).Operations() {
			for _, p := range op.Parameters {
				if p.Value.In != "query" {
					continue
				}
				name := p.Value.Name
				seen[name] = true
				v, ok := valid[name]
				if !ok {
					t.Fatalf("%s %s: no valid value of the query parameter %s in this test: add one", method, template, name)
				}
				target := fmt.Sprintf("%s?%s=%s&%[2]s=%[3]s", path, name, v)
				prob := servicetest.WantProblem(t, admin.Do(t, method, target, ""), 400, quire.EINVALID)
				if diff := cmp.Diff([]string{"/" + name}, pointers(prob.Errors)); diff != "" {
					t.Errorf("%s %s: errors (-want +got):\n%s", method, target, diff)
				}
			}
		}
	}
	if len(seen) != len(valid) {
		t.Errorf("sent %v, want every parameter of %v", seen, valid)
	}
}

// pointers returns the pointer of each of errs.
func pointers(errs []quire.FieldError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Pointer)
	}
	return out
}
