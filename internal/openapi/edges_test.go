package openapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestEdges: through the real handlers, every query parameter of every
// operation sent twice is 400 naming it, and every operation that takes no
// request body refuses one with 400, before anything runs; each answer is
// the document's (servicetest checks it).
func TestEdges(t *testing.T) {
	doc := contract(t)
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
			if op.RequestBody == nil {
				seen["body"] = true
				servicetest.WantProblem(t, admin.Do(t, method, path, `{"total":0.01}`), 400, quire.EINVALID)
			}
		}
	}
	if len(seen) != len(valid)+1 {
		t.Errorf("sent %v, want every parameter of %v and bodies", seen, valid)
	}
}

// TestUnreadBodiesChangeNothing: POST /pay and POST /users/{id}/close with
// a body they do not read are refused, and pay nothing and close nothing;
// without one, they pay and close.
func TestUnreadBodiesChangeNothing(t *testing.T) {
	api := servicetest.New(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	author := created(t, admin.Do(t, "POST", "/admin/authors", `{"name":"Mary Shelley"}`))
	book := created(t, admin.Do(t, "POST", "/admin/products", fmt.Sprintf(`{"name":"Frankenstein","price":7.50,"status":"AVAILABLE","author_id":%d}`, author)))
	id := created(t, api.Do(t, "POST", "/users", `{"email":"percy@example.com","first_name":"Percy","last_name":"Shelley","password":"a long passphrase"}`))
	admin.Expect(t, "POST", fmt.Sprintf("/users/%d/deposit", id), `{"amount":20}`, 200)
	buyer := api.As(t, id, quire.RoleCustomer)
	buyer.Expect(t, "POST", "/cart", fmt.Sprintf(`{"product_id":%d,"quantity":2}`, book), 200)
	user := fmt.Sprintf("/users/%d", id)
	before := []string{buyer.Expect(t, "GET", user, "", 200).Body, buyer.Expect(t, "GET", "/cart", "", 200).Body}

	buyer.ExpectProblem(t, "POST", "/pay", `{"total":0.01}`, 400, quire.EINVALID, "Idempotency-Key", "pay-with-a-body")
	buyer.ExpectProblem(t, "POST", user+"/close", `{}`, 400, quire.EINVALID)
	after := []string{buyer.Expect(t, "GET", user, "", 200).Body, buyer.Expect(t, "GET", "/cart", "", 200).Body}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("refused requests changed the user or the cart (-before +after):\n%s", diff)
	}
	if orders := buyer.Expect(t, "GET", "/orders", "", 200).Body; orders != "[]" {
		t.Errorf("orders after refused payments: %s", orders)
	}

	if r := buyer.Do(t, "POST", "/pay", "", "Idempotency-Key", "pay-without-a-body"); r.StatusCode != 201 || !strings.Contains(r.Body, `"total":15.00`) {
		t.Errorf("POST /pay = %d %s, want 201 with the cart's total", r.StatusCode, r.Body)
	}
	if r := buyer.Expect(t, "POST", user+"/close", "", 200); !strings.Contains(r.Body, `"status":"CLOSED"`) {
		t.Errorf("POST %s/close = %s", user, r.Body)
	}
}

// created returns the id of what r, a 201, created.
func created(t *testing.T, r servicetest.Response) quire.ID {
	t.Helper()
	if r.StatusCode != 201 {
		t.Fatalf("%s %s = %d %s, want 201", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Body)
	}
	return servicetest.Decode[struct{ ID quire.ID }](t, r).ID
}

// pointers returns the pointer of each of errs.
func pointers(errs []quire.FieldError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Pointer)
	}
	return out
}

// TestHiddenCharacters: through the real handlers, every text field people
// read refuses a character that is not shown as itself, naming the field,
// a tag character beyond U+FFFF (U+E0001) too.
func TestHiddenCharacters(t *testing.T) {
	api := servicetest.New(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	id := created(t, api.Do(t, "POST", "/users", `{"email":"mary@example.com","first_name":"Mary","last_name":"Shelley","password":"a long passphrase"}`))
	author := created(t, admin.Do(t, "POST", "/admin/authors", `{"name":"Mary Shelley"}`))
	for _, tc := range []struct{ method, path, body, pointer string }{
		{"POST", "/users", `{"email":"ad\u200bmin@example.com","first_name":"A","last_name":"B","password":"a long passphrase"}`, "/email"},
		{"POST", "/users", `{"email":"a@example.com","first_name":"Ad\u200bmin","last_name":"B","password":"a long passphrase"}`, "/first_name"},
		{"POST", "/api/v2/users", `{"email":"a@example.com","name":"Ada \u202eecalevoL","password":"a long passphrase"}`, "/name"},
		{"PUT", fmt.Sprintf("/users/%d/profile", id), `{"bio":"\ufeffHello","location":"","website":"","newsletter":false}`, "/bio"},
		{"PUT", fmt.Sprintf("/users/%d/profile", id), `{"bio":"","location":"Paris\u2028France","website":"","newsletter":false}`, "/location"},
		{"POST", "/admin/authors", `{"name":"Mary\u00adShelley"}`, "/name"},
		// Beyond U+FFFF, which no pattern names: the server alone refuses
		// it, as the description says (quire.BeyondThePlane).
		{"POST", "/admin/authors", `{"name":"Mary Shelley \udb40\udc01"}`, "/name"},
		{"POST", "/admin/products", fmt.Sprintf(`{"name":"Frank\u200denstein","price":7.50,"status":"AVAILABLE","author_id":%d}`, author), "/name"},
	} {
		prob := servicetest.WantProblem(t, admin.Do(t, tc.method, tc.path, tc.body), 400, quire.EINVALID)
		if diff := cmp.Diff([]string{tc.pointer}, pointers(prob.Errors)); diff != "" {
			t.Errorf("%s %s %s: errors (-want +got):\n%s", tc.method, tc.path, tc.body, diff)
		}
	}
}
