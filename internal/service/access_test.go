package service_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestTheStoredAccountDecides: the caller's account as stored now, not
// its token, decides every request. Over the route table itself, every
// route that takes a token, in every version, is sent by:
//
//   - a deleted account's tokens, an admin's and a customer's: 401 on
//     every route, read or write, but where the customer's token is
//     refused by the authorizer already (403 on an admin route);
//   - a closed admin's admin token and a demoted admin's (its account a
//     customer's since its login): 403 on every /admin route and on a
//     deposit, and 404 on another user's account or order, as a
//     customer gets.
//
// None of them changes any item of any table, the outbox included. A
// route the test cannot place in one of these rules fails it, so a new
// route cannot be left out.
func TestTheStoredAccountDecides(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{DynamoDB: true, Demo: true}) // reads every table
	admin := api.As(t, 1, quire.RoleAdmin)
	// Alan (3) is made an admin, then closed by Ada; user 5, a customer,
	// holds an admin token from before it was demoted. Grace (2) is the
	// other user whose account and order (the demo's order 1) they reach for.
	admin.Expect(t, "PUT", "/users/3", `{"email":"alan@quire.example","first_name":"Alan","last_name":"Turing","role":"admin","status":"ACTIVE"}`, http.StatusOK)
	admin.Expect(t, "POST", "/users/3/close", "", http.StatusOK)
	api.As(t, 5, quire.RoleCustomer)
	callers := []struct {
		name string
		c    *servicetest.Client
	}{
		{"a deleted admin", api.Gone(t, 4_000, quire.RoleAdmin)},
		{"a deleted customer", api.Gone(t, 4_001, quire.RoleCustomer)},
		{"a closed admin", api.Gone(t, 3, quire.RoleAdmin)},
		{"a demoted admin", api.Gone(t, 5, quire.RoleAdmin)},
	}
	before := dynamotest.Snapshot(t, api.DB, api.Tables)
	for _, who := range callers {
		for _, rt := range routes.All() {
			if rt.Access == routes.Public {
				continue
			}
			path, want, code := place(rt, 2)
			switch {
			case code == "":
				t.Errorf("%s %s: the test does not know which rule holds it; place it", rt.Method, rt.Path)
				continue
			case who.name == "a deleted customer" && rt.Access == routes.Admin: // the authorizer's refusal
			case strings.HasPrefix(who.name, "a deleted"):
				want, code = http.StatusUnauthorized, quire.EUNAUTHORIZED
			case want == 0:
				continue // a route of the caller's own, which the account may use as a customer
			}
			t.Run(who.name+"/"+rt.Method+" "+path, func(t *testing.T) {
				who.c.ExpectProblem(t, rt.Method, path, bodyOf(rt), want, code, "Idempotency-Key", "stored-account-"+who.name+rt.Key())
			})
		}
	}
	if after := dynamotest.Snapshot(t, api.DB, api.Tables); !slices.Equal(after, before) {
		t.Errorf("the refused requests changed the tables: %d items, were %d\n%s", len(after), len(before), diff(before, after))
	}
}

// place returns the path of a request on rt about the user other, and what
// a closed or demoted admin's token gets there: 403 on an admin route, 404
// on another's account or order, or 0 on a route of the caller's own (a
// customer's, which the account may use); code "" for a route no rule
// places.
func place(rt routes.Route, other quire.ID) (path string, status int, code string) {
	path = strings.NewReplacer("{product_id}", "1", "{file}", "x").Replace(rt.Path)
	resource := rt.Resource().Path
	switch {
	case rt.Access == routes.Admin:
		return strings.ReplaceAll(path, "{id}", other.String()), http.StatusForbidden, quire.EFORBIDDEN
	case strings.HasPrefix(resource, "/users/{id}"):
		return strings.ReplaceAll(path, "{id}", other.String()), http.StatusNotFound, quire.ENOTFOUND
	case resource == "/orders/{id}":
		return strings.ReplaceAll(path, "{id}", "1"), http.StatusNotFound, quire.ENOTFOUND // the demo's order 1 is other's, Grace's
	case slices.Contains([]string{"/cart", "/cart/items/{product_id}", "/pay", "/products/{id}/buy", "/orders", "/users",
		"/products", "/products/{id}", "/authors", "/authors/{id}", "/authors/{id}/books", "/config", "/session"}, resource):
		return strings.ReplaceAll(path, "{id}", "1"), 0, "own"
	}
	return path, -1, ""
}

// bodyOf is a valid body of rt's request, if it reads one.
func bodyOf(rt routes.Route) string {
	if !rt.Body {
		return ""
	}
	switch rt.Resource().Path {
	case "/admin/authors":
		return `{"name":"Virginia Woolf"}`
	case "/admin/products", "/admin/products/{id}":
		return `{"name":"Orlando","price":10.50,"status":"AVAILABLE","author_id":1}`
	case "/admin/config":
		return `{"taken":true}`
	case "/users/{id}/deposit":
		return `{"amount":5.00}`
	case "/users/{id}/profile":
		return `{"bio":"taken over","location":"","website":"","newsletter":false}`
	}
	return `{}`
}

// diff lists the items only one of two snapshots holds.
func diff(before, after []string) string {
	var b strings.Builder
	for _, s := range before {
		if !slices.Contains(after, s) {
			fmt.Fprintf(&b, "- %.300s\n", s)
		}
	}
	for _, s := range after {
		if !slices.Contains(before, s) {
			fmt.Fprintf(&b, "+ %.300s\n", s)
		}
	}
	return b.String()
}
